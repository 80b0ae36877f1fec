package plumbing

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
)

// countingSink records what it is given: every call to WithValues, and
// each line with the values it was made with.
type countingSink struct {
	mu         *sync.Mutex
	withValues *int
	lines      *[]string
	values     []any
	name       string
	level      int
}

func newCountingSink(level int) *countingSink {
	return &countingSink{mu: new(sync.Mutex), withValues: new(int), lines: new([]string), level: level}
}

func (s *countingSink) Init(logr.RuntimeInfo)  {}
func (s *countingSink) Enabled(level int) bool { return level <= s.level }

func (s *countingSink) Info(_ int, msg string, kv ...any) { s.line(msg, kv) }

func (s *countingSink) Error(err error, msg string, kv ...any) {
	s.line(msg+": "+err.Error(), kv)
}

func (s *countingSink) line(msg string, kv []any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*s.lines = append(*s.lines, fmt.Sprint(s.name, msg, s.values, kv))
}

func (s *countingSink) WithValues(kv ...any) logr.LogSink {
	s.mu.Lock()
	*s.withValues++
	s.mu.Unlock()
	c := *s
	c.values = append(append([]any{}, s.values...), kv...)
	return &c
}

func (s *countingSink) WithName(name string) logr.LogSink {
	c := *s
	c.name += name + "/"
	return &c
}

func TestLazyValues(t *testing.T) {
	tests := []struct {
		name string
		// log logs through the lazy logger.
		log            func(l logr.Logger)
		wantLines      []string
		wantWithValues int
	}{{
		name: "nothing logged, nothing given to the sink",
		log: func(l logr.Logger) {
			l = l.WithValues("a", 1).WithValues("b", 2)
			l.V(1).Info("not enabled")
		},
	}, {
		name: "one line carries every value, in order",
		log: func(l logr.Logger) {
			l.WithValues("a", 1).WithValues("b", 2).Info("msg", "c", 3)
		},
		wantLines:      []string{"msg[a 1 b 2] [c 3]"},
		wantWithValues: 1,
	}, {
		name: "a logger's values are given once for all its lines",
		log: func(l logr.Logger) {
			l = l.WithValues("a", 1)
			l.Info("one")
			l.Error(errors.New("boom"), "two")
		},
		wantLines:      []string{"one[a 1] []", "two: boom[a 1] []"},
		wantWithValues: 1,
	}, {
		name: "values after a line build on the values given",
		log: func(l logr.Logger) {
			l = l.WithValues("a", 1)
			l.Info("one")
			l.WithValues("b", 2).Info("two")
		},
		wantLines:      []string{"one[a 1] []", "two[a 1 b 2] []"},
		wantWithValues: 2,
	}, {
		name: "loggers made from one share nothing they add",
		log: func(l logr.Logger) {
			l = l.WithValues("a", 1)
			x, y := l.WithValues("x", 1), l.WithValues("y", 2)
			y.Info("y")
			x.Info("x")
		},
		wantLines:      []string{"y[a 1 y 2] []", "x[a 1 x 1] []"},
		wantWithValues: 2,
	}, {
		name: "a name comes after the values given before it",
		log: func(l logr.Logger) {
			l.WithValues("a", 1).WithName("n").WithValues("b", 2).Info("msg")
		},
		wantLines:      []string{"n/msg[a 1 b 2] []"},
		wantWithValues: 2,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := newCountingSink(0)
			tt.log(lazyValues(logr.New(sink)))
			if diff := cmp.Diff(tt.wantLines, *sink.lines); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			if *sink.withValues != tt.wantWithValues {
				t.Errorf("the sink's WithValues called %d times, want %d", *sink.withValues, tt.wantWithValues)
			}
		})
	}
}

// TestLazyValuesConcurrentLines logs from one lazy logger on many
// goroutines: its values are given to the sink once (run with -race).
func TestLazyValuesConcurrentLines(t *testing.T) {
	sink := newCountingSink(0)
	l := lazyValues(logr.New(sink)).WithValues("a", 1)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { l.Info("msg") })
	}
	wg.Wait()
	if *sink.withValues != 1 {
		t.Errorf("the sink's WithValues called %d times, want 1", *sink.withValues)
	}
	if len(*sink.lines) != 8 {
		t.Errorf("%d lines, want 8", len(*sink.lines))
	}
}

// TestLazyValuesCaller checks that a line reports the line that logged
// it, through the lazy sink's extra frame.
func TestLazyValuesCaller(t *testing.T) {
	var got []string
	base := funcr.NewJSON(func(obj string) { got = append(got, obj) }, funcr.Options{LogCaller: funcr.All})
	l := lazyValues(base).WithValues("a", 1)
	l.Info("direct")
	l.WithCallDepth(0).Info("with depth")
	if len(got) != 2 {
		t.Fatalf("%d lines, want 2", len(got))
	}
	for _, line := range got {
		if !strings.Contains(line, `"file":"lazylog_internal_test.go"`) || !strings.Contains(line, `"a":1`) {
			t.Errorf("line %s: want the caller in this file and the value a", line)
		}
	}
}
