package flow_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/flow"
)

// tracer is a hook that records its calls as "name pre X" and "name post X".
type tracer struct {
	name string
	rec  *recorder
}

func (h tracer) PreRun(ctx context.Context, a flow.Action) context.Context {
	h.rec.add(h.name + " pre " + a.Description())
	return ctx
}

func (h tracer) PostRun(_ context.Context, a flow.Action, _ reconcile.Result, err error) {
	msg := h.name + " post " + a.Description()
	if err != nil {
		msg += " err"
	}
	h.rec.add(msg)
}

func TestHooksOrderAndNesting(t *testing.T) {
	r := &recorder{}
	w := flow.WithHooks(
		flow.Sequence(r.ok("A"), flow.If(true, r.act("B", reconcile.Result{}, errB))),
		tracer{"h1", r}, tracer{"h2", r},
	)
	_, _ = w.Run(context.Background())
	want := []string{
		"h1 pre Sequence(A, If(true, B))",
		"h2 pre Sequence(A, If(true, B))",
		"h1 pre A", "h2 pre A", "A", "h2 post A", "h1 post A",
		"h1 pre If(true, B)", "h2 pre If(true, B)",
		"h1 pre B", "h2 pre B", "B", "h2 post B err", "h1 post B err",
		"h2 post If(true, B) err", "h1 post If(true, B) err",
		"h2 post Sequence(A, If(true, B)) err",
		"h1 post Sequence(A, If(true, B)) err",
	}
	if diff := cmp.Diff(want, r.got()); diff != "" {
		t.Errorf("hook calls mismatch (-want +got):\n%s", diff)
	}
}

func TestHooksNestedWithHooks(t *testing.T) {
	r := &recorder{}
	w := flow.WithHooks(
		flow.Join(r.ok("A"), flow.WithHooks(r.ok("B"), tracer{"inner", r})),
		tracer{"outer", r},
	)
	_, _ = w.Run(context.Background())
	want := []string{
		"outer pre Join(A, B)",
		"outer pre A", "A", "outer post A",
		// The WithHooks node itself is transparent: B sees the outer hooks, then the inner.
		"outer pre B", "inner pre B", "B", "inner post B", "outer post B",
		"outer post Join(A, B)",
	}
	if diff := cmp.Diff(want, r.got()); diff != "" {
		t.Errorf("hook calls mismatch (-want +got):\n%s", diff)
	}
}

func TestHookContextReachesTheAction(t *testing.T) {
	type key struct{}
	var seenByAction, seenByPost []any
	var mu sync.Mutex
	hook := flow.HookFuncs{
		Pre: func(ctx context.Context, a flow.Action) context.Context {
			return context.WithValue(ctx, key{}, "span of "+a.Description())
		},
		Post: func(ctx context.Context, _ flow.Action, _ reconcile.Result, _ error) {
			mu.Lock()
			defer mu.Unlock()
			seenByPost = append(seenByPost, ctx.Value(key{}))
		},
	}
	leaf := flow.New("A", func(ctx context.Context) (reconcile.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		seenByAction = append(seenByAction, ctx.Value(key{}))
		return flow.Continue()
	})
	_, _ = flow.WithHooks(flow.ParallelJoin(leaf), hook).Run(context.Background())
	if diff := cmp.Diff([]any{"span of A"}, seenByAction); diff != "" {
		t.Errorf("action context (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"span of A", "span of ParallelJoin(A)"}, seenByPost); diff != "" {
		t.Errorf("post contexts (-want +got):\n%s", diff)
	}
}

func TestHookFuncsAndNopHook(t *testing.T) {
	ctx := context.Background()
	if got := (flow.HookFuncs{}).PreRun(ctx, flow.Nop()); got != ctx {
		t.Errorf("empty HookFuncs.PreRun changed the context")
	}
	flow.HookFuncs{}.PostRun(ctx, flow.Nop(), reconcile.Result{}, nil) // must not panic
	if got := flow.NopHook().PreRun(ctx, flow.Nop()); got != ctx {
		t.Errorf("NopHook.PreRun changed the context")
	}
	// A hook returning a nil context leaves the context as it was.
	nilCtx := flow.HookFuncs{Pre: func(context.Context, flow.Action) context.Context { return nil }}
	type key struct{}
	var seen any
	_, _ = flow.WithHooks(flow.New("A", func(ctx context.Context) (reconcile.Result, error) {
		seen = ctx.Value(key{})
		return flow.Continue()
	}), nilCtx).Run(context.WithValue(ctx, key{}, 1))
	if seen != 1 {
		t.Errorf("action saw %v, want the unchanged context", seen)
	}
}

func TestHooksReachWorkflowsStartedByActions(t *testing.T) {
	r := &recorder{}
	inner := flow.Sequence(r.ok("B"))
	starter := flow.New("starter", func(ctx context.Context) (reconcile.Result, error) { return inner.Run(ctx) })
	_, _ = flow.WithHooks(starter, tracer{"h", r}).Run(context.Background())
	want := []string{"h pre starter", "h pre B", "B", "h post B", "h post starter"}
	if diff := cmp.Diff(want, r.got()); diff != "" {
		t.Errorf("hook calls mismatch (-want +got):\n%s", diff)
	}
}

func TestLogHook(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	logger := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, args)
	}, funcr.Options{Verbosity: 1})
	ctx := logr.NewContext(context.Background(), logger)

	w := flow.WithHooks(flow.Join(
		flow.New("ok", func(context.Context) (reconcile.Result, error) { return flow.RequeueAfter(time.Minute) }),
		flow.New("exit", func(context.Context) (reconcile.Result, error) { return flow.Exit() }),
		flow.New("bad", func(context.Context) (reconcile.Result, error) { return flow.RequeueIfError(errA) }),
	), flow.LogHook())
	_, _ = w.Run(ctx)

	// Compare without the durations, which vary.
	var got []string
	for _, l := range lines {
		got = append(got, stripDuration(l))
	}
	want := []string{
		`"level"=1 "msg"="action started" "action"="Join(ok, exit, bad)"`,
		`"level"=1 "msg"="action started" "action"="ok"`,
		`"level"=1 "msg"="action finished" "action"="ok" "requeueAfter"="1m0s"`,
		`"level"=1 "msg"="action started" "action"="exit"`,
		`"level"=1 "msg"="action finished" "action"="exit" "requeueAfter"="0s" "exit"=true`,
		`"level"=1 "msg"="action started" "action"="bad"`,
		`"msg"="action failed" "error"="a failed" "action"="bad" "requeueAfter"="0s"`,
		`"level"=1 "msg"="action finished" "action"="Join(ok, exit, bad)" "requeueAfter"="1m0s" "error"="a failed"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("log lines mismatch (-want +got):\n%s", diff)
	}
	for _, l := range lines {
		if strings.Contains(l, "action finished") || strings.Contains(l, "action failed") {
			if !strings.Contains(l, `"duration"=`) {
				t.Errorf("line without duration: %s", l)
			}
		}
	}

	t.Run("verbosity 0 logs only failures", func(t *testing.T) {
		var quiet []string
		logger := funcr.New(func(_, args string) { quiet = append(quiet, stripDuration(args)) }, funcr.Options{})
		_, _ = w.Run(logr.NewContext(context.Background(), logger))
		want := []string{`"msg"="action failed" "error"="a failed" "action"="bad" "requeueAfter"="0s"`}
		if diff := cmp.Diff(want, quiet); diff != "" {
			t.Errorf("log lines mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("no logger in the context", func(t *testing.T) {
		if _, err := w.Run(context.Background()); err == nil {
			t.Errorf("workflow lost its error")
		}
	})
}

// stripDuration removes the "duration" key and its value from a funcr line.
func stripDuration(line string) string {
	i := strings.Index(line, ` "duration"=`)
	if i < 0 {
		return line
	}
	rest := line[i+len(` "duration"=`):]
	j := strings.IndexByte(rest[1:], '"') // durations are rendered as quoted strings
	return line[:i] + rest[j+2:]
}

func TestNoHooksNoAllocations(t *testing.T) {
	leaf := flow.New("leaf", func(context.Context) (reconcile.Result, error) { return flow.Continue() })
	w := flow.Sequence(leaf, flow.Join(leaf, flow.If(true, leaf)), flow.OrderedJoin(leaf, leaf), flow.Retry(2, 0, leaf))
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() { _, _ = w.Run(ctx) })
	if allocs != 0 {
		t.Errorf("a run without hooks allocated %v times, want 0", allocs)
	}
}
