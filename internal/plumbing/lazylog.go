package plumbing

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// lazyValues returns l with a sink that holds the key/value pairs given to
// WithValues until a line is logged, and hands them to l's sink then, once
// per logger (see LogConstructor).
func lazyValues(l logr.Logger) logr.Logger {
	sink := l.GetSink()
	if sink == nil {
		return l
	}
	if _, ok := sink.(*lazySink); ok {
		return l
	}
	// The lazy sink is one more frame between the caller and the sink.
	if cd, ok := sink.(logr.CallDepthLogSink); ok {
		sink = cd.WithCallDepth(1)
	}
	return logr.New(&lazySink{base: sink})
}

// LogConstructor returns a controller's LogConstructor
// (controller.Options) that makes the logger of each reconcile with a sink
// that hands the keys given to WithValues to the manager's sink only when
// a line is logged, once per logger: ctor's logger when ctor is set, else
// one with the keys controller-runtime's builder gives (the controller
// name, the kind's group and kind, the object's reference, namespace and
// name). A pass that logs nothing then pays nothing for the keys of its
// logger: a sink such as zap's encodes them when WithValues is called,
// which for the keys of each reconcile was about 5% of a controller's
// CPU. What a line carries is the same either way.
func LogConstructor(mgr manager.Manager, name string, gvk schema.GroupVersionKind, ctor func(*reconcile.Request) logr.Logger) func(*reconcile.Request) logr.Logger {
	if ctor != nil {
		return func(req *reconcile.Request) logr.Logger { return lazyValues(ctor(req)) }
	}
	log := lazyValues(mgr.GetLogger().WithValues("controller", name, "controllerGroup", gvk.Group, "controllerKind", gvk.Kind))
	return func(req *reconcile.Request) logr.Logger {
		if req == nil {
			return log
		}
		return log.WithValues(gvk.Kind, klog.KRef(req.Namespace, req.Name), "namespace", req.Namespace, "name", req.Name)
	}
}

// lazySink is the sink of lazyValues: base, and the pairs not yet given
// to it.
type lazySink struct {
	base   logr.LogSink
	values []any

	once    sync.Once
	applied atomic.Pointer[logr.LogSink]
}

// sink returns base with the pending values, making it on first use.
func (s *lazySink) sink() logr.LogSink {
	if len(s.values) == 0 {
		return s.base
	}
	if p := s.applied.Load(); p != nil {
		return *p
	}
	s.once.Do(func() {
		sink := s.base.WithValues(s.values...)
		s.applied.Store(&sink)
	})
	return *s.applied.Load()
}

// Init does nothing: base was initialised by the logger it came from.
func (s *lazySink) Init(logr.RuntimeInfo) {}

func (s *lazySink) Enabled(level int) bool { return s.base.Enabled(level) }

func (s *lazySink) Info(level int, msg string, keysAndValues ...any) {
	s.sink().Info(level, msg, keysAndValues...)
}

func (s *lazySink) Error(err error, msg string, keysAndValues ...any) {
	s.sink().Error(err, msg, keysAndValues...)
}

// WithValues adds the pairs to those pending; once a line has given the
// pending ones to base, the new sink starts from that.
func (s *lazySink) WithValues(keysAndValues ...any) logr.LogSink {
	if p := s.applied.Load(); p != nil {
		return &lazySink{base: *p, values: slices.Clone(keysAndValues)}
	}
	return &lazySink{base: s.base, values: append(slices.Clip(s.values), keysAndValues...)}
}

// WithName gives base the pending values first, so that a sink that
// orders names and values sees them as they were given.
func (s *lazySink) WithName(name string) logr.LogSink {
	return &lazySink{base: s.sink().WithName(name)}
}

// WithCallDepth is base's, with the values still pending.
func (s *lazySink) WithCallDepth(depth int) logr.LogSink {
	cd, ok := s.base.(logr.CallDepthLogSink)
	if !ok {
		return s
	}
	return &lazySink{base: cd.WithCallDepth(depth), values: s.values}
}

// GetCallStackHelper is base's, for sinks that report a test helper's
// caller (testr).
func (s *lazySink) GetCallStackHelper() func() {
	if h, ok := s.base.(logr.CallStackHelperLogSink); ok {
		return h.GetCallStackHelper()
	}
	return func() {}
}

var (
	_ logr.CallDepthLogSink       = (*lazySink)(nil)
	_ logr.CallStackHelperLogSink = (*lazySink)(nil)
)
