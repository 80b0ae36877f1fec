package bosuntest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// LogEntry is one line logged through a LogRecorder's logger.
type LogEntry struct {
	// Error is true for lines logged with Logger.Error.
	Error bool
	// Level is the V-level of info lines; 0 for errors.
	Level int
	// Name is the logger's name: its WithName parts joined by "/".
	Name string
	// Message is the line's constant message.
	Message string
	// Err is the error given to Logger.Error, which may be nil.
	Err error
	// Values are the key/value pairs of the line: those given to WithValues
	// on the recording logger, then the line's own.
	Values []any
	// Time is when the line was logged.
	Time time.Time
}

// Value returns the value of key in e.Values; the last one if key occurs
// more than once.
func (e LogEntry) Value(key string) (any, bool) {
	for i := len(e.Values) - 2; i >= 0; i -= 2 {
		if k, ok := e.Values[i].(string); ok && k == key {
			return e.Values[i+1], true
		}
	}
	return nil, false
}

// String renders the entry on one line, for test failure messages and for
// searching: `ERROR name: message err="..." key="value" n=3`.
func (e LogEntry) String() string {
	var b strings.Builder
	if e.Error {
		b.WriteString("ERROR ")
	} else {
		fmt.Fprintf(&b, "V%d ", e.Level)
	}
	if e.Name != "" {
		b.WriteString(e.Name + ": ")
	}
	b.WriteString(e.Message)
	if e.Error {
		errText := "<nil>"
		if e.Err != nil {
			errText = e.Err.Error()
		}
		fmt.Fprintf(&b, " err=%q", errText)
	}
	for i := 0; i < len(e.Values); i += 2 {
		fmt.Fprintf(&b, " %v=", e.Values[i])
		if i+1 == len(e.Values) {
			b.WriteString("<missing>")
			break
		}
		switch v := e.Values[i+1].(type) {
		case string:
			fmt.Fprintf(&b, "%q", v)
		case error:
			fmt.Fprintf(&b, "%q", v.Error())
		default:
			fmt.Fprintf(&b, "%v", v)
		}
	}
	return b.String()
}

// LogRecorder records every line logged through its loggers, at every
// V-level, so that a test can check what a controller logged: for instance
// that no error line mentions a conflict.
//
// The zero value is ready to use and is safe for concurrent use.
type LogRecorder struct {
	// MaxLevel, when positive, is the highest V-level recorded, as an
	// operator run with -v=MaxLevel would log; zero records every level.
	// Libraries below the operator log more at high levels (client-go
	// logs request bodies from level 8), so a check of what an operator
	// reveals in its log sets it, for example to LogVerbosity.
	MaxLevel int

	mu      sync.Mutex
	entries []LogEntry
}

// Logger returns a logger that records its lines and prints nothing.
func (r *LogRecorder) Logger() logr.Logger {
	return logr.New(&recordingSink{rec: r})
}

// Wrap returns a logger that records its lines and also passes them to next,
// which decides for itself which V-levels it prints. Values and names that
// next already carries are not recorded.
func (r *LogRecorder) Wrap(next logr.Logger) logr.Logger {
	sink := &recordingSink{rec: r, next: next.GetSink()}
	if cd, ok := sink.next.(logr.CallDepthLogSink); ok {
		// The recording sink's method is one more frame between the caller
		// and next.
		sink.next = cd.WithCallDepth(1)
	}
	if h, ok := sink.next.(logr.CallStackHelperLogSink); ok {
		sink.helper = h.GetCallStackHelper()
	}
	return logr.New(sink)
}

// Entries returns the recorded lines in the order they were logged. The
// slice is the caller's.
func (r *LogRecorder) Entries() []LogEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.entries)
}

// Errors returns the recorded lines logged with Logger.Error, in order.
func (r *LogRecorder) Errors() []LogEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []LogEntry
	for _, e := range r.entries {
		if e.Error {
			errs = append(errs, e)
		}
	}
	return errs
}

// Reset forgets every recorded line.
func (r *LogRecorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries = nil
}

func (r *LogRecorder) record(e LogEntry) {
	e.Time = time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries = append(r.entries, e)
}

// recordingSink is the logr.LogSink of a LogRecorder's loggers.
type recordingSink struct {
	rec    *LogRecorder
	name   string
	values []any
	next   logr.LogSink // nil: record only
	helper func()       // next's call stack helper, if any
}

var (
	_ logr.LogSink                = (*recordingSink)(nil)
	_ logr.CallDepthLogSink       = (*recordingSink)(nil)
	_ logr.CallStackHelperLogSink = (*recordingSink)(nil)
)

// Init implements logr.LogSink. The recording sink needs no runtime
// information; next received its own when its logger was made.
func (s *recordingSink) Init(logr.RuntimeInfo) {}

// Enabled implements logr.LogSink: every level up to the recorder's
// MaxLevel is recorded.
func (s *recordingSink) Enabled(level int) bool {
	return s.rec.MaxLevel <= 0 || level <= s.rec.MaxLevel
}

// Info implements logr.LogSink.
func (s *recordingSink) Info(level int, msg string, kv ...any) {
	if s.helper != nil {
		s.helper()
	}
	s.rec.record(LogEntry{Level: level, Name: s.name, Message: msg, Values: s.with(kv)})
	if s.next != nil && s.next.Enabled(level) {
		s.next.Info(level, msg, kv...)
	}
}

// Error implements logr.LogSink.
func (s *recordingSink) Error(err error, msg string, kv ...any) {
	if s.helper != nil {
		s.helper()
	}
	s.rec.record(LogEntry{Error: true, Name: s.name, Message: msg, Err: err, Values: s.with(kv)})
	if s.next != nil {
		s.next.Error(err, msg, kv...)
	}
}

// with returns the sink's values followed by kv, in a new slice.
func (s *recordingSink) with(kv []any) []any {
	if len(s.values)+len(kv) == 0 {
		return nil
	}
	return append(slices.Clone(s.values), kv...)
}

// WithValues implements logr.LogSink.
func (s *recordingSink) WithValues(kv ...any) logr.LogSink {
	c := *s
	c.values = s.with(kv)
	if s.next != nil {
		c.next = s.next.WithValues(kv...)
	}
	return &c
}

// WithName implements logr.LogSink.
func (s *recordingSink) WithName(name string) logr.LogSink {
	c := *s
	if c.name == "" {
		c.name = name
	} else {
		c.name += "/" + name
	}
	if s.next != nil {
		c.next = s.next.WithName(name)
	}
	return &c
}

// WithCallDepth implements logr.CallDepthLogSink by passing the depth on to
// next.
func (s *recordingSink) WithCallDepth(depth int) logr.LogSink {
	c := *s
	if cd, ok := s.next.(logr.CallDepthLogSink); ok {
		c.next = cd.WithCallDepth(depth)
	}
	return &c
}

// GetCallStackHelper implements logr.CallStackHelperLogSink.
func (s *recordingSink) GetCallStackHelper() func() {
	if s.helper != nil {
		return s.helper
	}
	return func() {}
}
