package flow_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/flow"
)

func TestSequence(t *testing.T) {
	tests := []struct {
		name      string
		build     func(r *recorder) flow.Action
		wantCalls []string
		want      outcome
	}{
		{
			name:  "empty",
			build: func(*recorder) flow.Action { return flow.Sequence() },
			want:  outcome{},
		},
		{
			name:      "all continue",
			build:     func(r *recorder) flow.Action { return flow.Sequence(r.ok("A"), r.ok("B"), r.ok("C")) },
			wantCalls: []string{"A", "B", "C"},
			want:      outcome{},
		},
		{
			name: "stops at error",
			build: func(r *recorder) flow.Action {
				return flow.Sequence(r.ok("A"), r.act("B", reconcile.Result{}, errB), r.ok("C"))
			},
			wantCalls: []string{"A", "B"},
			want:      outcome{Errs: []string{"b failed"}},
		},
		{
			name: "stops at requeue after",
			build: func(r *recorder) flow.Action {
				return flow.Sequence(r.act("A", after(5), nil), r.ok("B"))
			},
			wantCalls: []string{"A"},
			want:      outcome{Result: after(5)},
		},
		{
			name: "stops at requeue immediately",
			build: func(r *recorder) flow.Action {
				return flow.Sequence(r.ok("A"), flow.New("B", func(context.Context) (reconcile.Result, error) {
					r.add("B")
					return flow.RequeueImmediately()
				}), r.ok("C"))
			},
			wantCalls: []string{"A", "B"},
			want:      outcome{Result: reconcile.Result{RequeueAfter: flow.Immediately}},
		},
		{
			name: "stops at deprecated requeue",
			build: func(r *recorder) flow.Action {
				return flow.Sequence(r.act("A", legacy(0, nil), nil), r.ok("B"))
			},
			wantCalls: []string{"A"},
			want:      outcome{Result: legacy(0, nil)},
		},
		{
			name: "stops at exit",
			build: func(r *recorder) flow.Action {
				return flow.Sequence(r.ok("A"), r.act("B", reconcile.Result{}, flow.ErrExit), r.ok("C"))
			},
			wantCalls: []string{"A", "B"},
			want:      outcome{Errs: []string{flow.ErrExit.Error()}},
		},
		{
			name: "returns the interrupting outcome as is",
			build: func(r *recorder) flow.Action {
				return flow.Sequence(r.act("A", after(3), errA), r.ok("B"))
			},
			wantCalls: []string{"A"},
			want:      outcome{Result: after(3), Errs: []string{"a failed"}},
		},
		{
			name: "priority of continuing actions kept",
			build: func(r *recorder) flow.Action {
				return flow.Sequence(r.act("A", reconcile.Result{Priority: prio(2)}, nil), r.ok("B"))
			},
			wantCalls: []string{"A", "B"},
			want:      outcome{Result: reconcile.Result{Priority: prio(2)}},
		},
		{
			name: "nested sequential stops the outer one",
			build: func(r *recorder) flow.Action {
				return flow.Sequence(r.ok("A"), flow.Sequence(r.ok("B"), r.act("C", reconcile.Result{}, errC), r.ok("D")), r.ok("E"))
			},
			wantCalls: []string{"A", "B", "C"},
			want:      outcome{Errs: []string{"c failed"}},
		},
		{
			name: "nested join",
			build: func(r *recorder) flow.Action {
				return flow.Sequence(flow.Join(r.act("A", after(9), nil), r.act("B", after(4), nil)), r.ok("C"))
			},
			wantCalls: []string{"A", "B"},
			want:      outcome{Result: after(4)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{}
			got := outcomeOf(tt.build(r).Run(context.Background()))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("outcome mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCalls, r.got()); diff != "" {
				t.Errorf("calls mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// joinCombinators are the combinators with join semantics.
var joinCombinators = []struct {
	name    string
	combine func(...flow.Action) flow.Action
}{
	{"Join", flow.Join},
	{"OrderedJoin", flow.OrderedJoin},
	{"ParallelJoin", flow.ParallelJoin},
}

func TestJoins(t *testing.T) {
	tests := []struct {
		name   string
		build  func(r *recorder, join func(...flow.Action) flow.Action) flow.Action
		want   outcome
		wantIs []error
		notIs  []error
		calls  []string // sorted
	}{
		{
			name:  "empty",
			build: func(_ *recorder, join func(...flow.Action) flow.Action) flow.Action { return join() },
		},
		{
			name: "all succeed",
			build: func(r *recorder, join func(...flow.Action) flow.Action) flow.Action {
				return join(r.ok("A"), r.ok("B"), r.ok("C"))
			},
			calls: []string{"A", "B", "C"},
		},
		{
			name: "runs all despite errors and joins them",
			build: func(r *recorder, join func(...flow.Action) flow.Action) flow.Action {
				return join(r.act("A", reconcile.Result{}, errA), r.ok("B"), r.act("C", reconcile.Result{}, errC))
			},
			want:   outcome{Errs: []string{"a failed", "c failed"}},
			wantIs: []error{errA, errC},
			calls:  []string{"A", "B", "C"},
		},
		{
			name: "exit gives way to a real error",
			build: func(r *recorder, join func(...flow.Action) flow.Action) flow.Action {
				return join(r.act("A", reconcile.Result{}, flow.ErrExit), r.act("B", reconcile.Result{}, errB))
			},
			want:   outcome{Errs: []string{"b failed"}},
			wantIs: []error{errB},
			notIs:  []error{flow.ErrExit},
			calls:  []string{"A", "B"},
		},
		{
			name: "exit alone is kept",
			build: func(r *recorder, join func(...flow.Action) flow.Action) flow.Action {
				return join(r.act("A", reconcile.Result{}, flow.ErrExit), r.ok("B"))
			},
			want:   outcome{Errs: []string{flow.ErrExit.Error()}},
			wantIs: []error{flow.ErrExit},
			calls:  []string{"A", "B"},
		},
		{
			name: "shortest requeue after",
			build: func(r *recorder, join func(...flow.Action) flow.Action) flow.Action {
				return join(r.act("A", after(30), nil), r.act("B", after(10), nil), r.ok("C"))
			},
			want:  outcome{Result: after(10)},
			calls: []string{"A", "B", "C"},
		},
		{
			name: "requeue OR-ed",
			build: func(r *recorder, join func(...flow.Action) flow.Action) flow.Action {
				return join(r.ok("A"), r.act("B", legacy(0, nil), nil))
			},
			want:  outcome{Result: legacy(0, nil)},
			calls: []string{"A", "B"},
		},
		{
			name: "nested groups",
			build: func(r *recorder, join func(...flow.Action) flow.Action) flow.Action {
				return join(
					join(r.act("A", after(20), errA), r.act("B", reconcile.Result{}, flow.ErrExit)),
					flow.Sequence(r.act("C", after(5), nil), r.ok("never")),
					join(r.act("D", reconcile.Result{}, errB)),
				)
			},
			want:   outcome{Result: after(5), Errs: []string{"a failed", "b failed"}},
			wantIs: []error{errA, errB},
			notIs:  []error{flow.ErrExit},
			calls:  []string{"A", "B", "C", "D"},
		},
	}
	for _, jc := range joinCombinators {
		for _, tt := range tests {
			t.Run(jc.name+"/"+tt.name, func(t *testing.T) {
				r := &recorder{}
				res, err := tt.build(r, jc.combine).Run(context.Background())
				if diff := cmp.Diff(tt.want, outcomeOf(res, err)); diff != "" {
					t.Errorf("outcome mismatch (-want +got):\n%s", diff)
				}
				for _, target := range tt.wantIs {
					if !errors.Is(err, target) {
						t.Errorf("errors.Is(err, %v) = false, want true", target)
					}
				}
				for _, target := range tt.notIs {
					if errors.Is(err, target) {
						t.Errorf("errors.Is(err, %v) = true, want false", target)
					}
				}
				if diff := cmp.Diff(tt.calls, r.sorted()); diff != "" {
					t.Errorf("calls mismatch (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestOrderedJoinKeepsOrder(t *testing.T) {
	for _, join := range []func(...flow.Action) flow.Action{flow.OrderedJoin} {
		r := &recorder{}
		_, _ = join(r.ok("A"), r.act("B", reconcile.Result{}, errB), r.ok("C"), r.ok("D")).Run(context.Background())
		if diff := cmp.Diff([]string{"A", "B", "C", "D"}, r.got()); diff != "" {
			t.Errorf("order mismatch (-want +got):\n%s", diff)
		}
	}
}

func TestParallelJoinRunsConcurrently(t *testing.T) {
	// Each child waits until all of them have started: this only ends if they run at
	// the same time.
	const n = 5
	var started atomic.Int32
	all := make(chan struct{})
	actions := make([]flow.Action, n)
	for i := range actions {
		actions[i] = flow.New("wait", func(ctx context.Context) (reconcile.Result, error) {
			if started.Add(1) == n {
				close(all)
			}
			select {
			case <-all:
				return flow.Continue()
			case <-ctx.Done():
				return reconcile.Result{}, ctx.Err()
			}
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := flow.ParallelJoin(actions...).Run(ctx); err != nil {
		t.Fatalf("children did not run concurrently: %v", err)
	}
}

func TestParallelJoinRecoversPanics(t *testing.T) {
	var finished atomic.Int32
	slow := func(name string) flow.Action {
		return flow.New(name, func(context.Context) (reconcile.Result, error) {
			time.Sleep(20 * time.Millisecond)
			finished.Add(1)
			return flow.RequeueAfter(time.Minute)
		})
	}
	boom := errors.New("boom")
	panicking := func(name string, v any) flow.Action {
		return flow.New(name, func(context.Context) (reconcile.Result, error) { panic(v) })
	}
	// The panicking children come first and last: the first runs on the calling
	// goroutine, the others on goroutines of their own.
	res, err := flow.ParallelJoin(
		panicking("first", "first went wrong"),
		slow("B"), slow("C"),
		panicking("last", boom),
	).Run(context.Background())

	if got := finished.Load(); got != 2 {
		t.Errorf("%d other children finished, want 2", got)
	}
	if diff := cmp.Diff(after(60), res); diff != "" {
		t.Errorf("result mismatch (-want +got):\n%s", diff)
	}
	if !errors.Is(err, flow.ErrPanic) {
		t.Fatalf("errors.Is(err, ErrPanic) = false for %v", err)
	}
	if !errors.Is(err, boom) {
		t.Errorf("errors.Is(err, boom) = false: a panic value that is an error should be reachable")
	}
	var panics []*flow.PanicError
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var pe *flow.PanicError
		if !errors.As(e, &pe) {
			t.Fatalf("joined error %v is not a *PanicError", e)
		}
		panics = append(panics, pe)
	}
	got := map[string]any{}
	for _, pe := range panics {
		got[pe.Action] = pe.Value
		if !strings.Contains(string(pe.Stack), "group_test.go") {
			t.Errorf("stack of %q does not show the panicking function:\n%s", pe.Action, pe.Stack)
		}
	}
	if diff := cmp.Diff(map[string]any{"first": "first went wrong", "last": boom}, got, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" { //nolint:errorlint // identity
		t.Errorf("panics mismatch (-want +got):\n%s", diff)
	}
	if msg := panics[0].Error(); !strings.Contains(msg, "panicked") || !strings.Contains(msg, panics[0].Action) {
		t.Errorf("PanicError message %q does not name the action and the panic", msg)
	}
}

func TestGroupsHonourCancellation(t *testing.T) {
	tests := []struct {
		name    string
		combine func(...flow.Action) flow.Action
		// want holds the calls made when the context is cancelled by the second action.
		want []string
		// wantErrs are the error leaves.
		wantErrs []string
	}{
		{"Sequence", flow.Sequence, []string{"A", "cancel"}, []string{context.Canceled.Error()}},
		{"Join", flow.Join, []string{"A", "cancel"}, []string{context.Canceled.Error()}},
		{"OrderedJoin", flow.OrderedJoin, []string{"A", "cancel"}, []string{context.Canceled.Error()}},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/during", func(t *testing.T) {
			r := &recorder{}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			canceller := flow.New("cancel", func(context.Context) (reconcile.Result, error) {
				r.add("cancel")
				cancel()
				return flow.Continue()
			})
			res, err := tt.combine(r.ok("A"), canceller, r.ok("B"), r.ok("C")).Run(ctx)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("error = %v, want context.Canceled", err)
			}
			if diff := cmp.Diff(outcome{Errs: tt.wantErrs}, outcomeOf(res, err)); diff != "" {
				t.Errorf("outcome mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, r.got()); diff != "" {
				t.Errorf("calls mismatch (-want +got):\n%s", diff)
			}
		})
	}
	for _, tt := range append(tests, struct {
		name     string
		combine  func(...flow.Action) flow.Action
		want     []string
		wantErrs []string
	}{"ParallelJoin", flow.ParallelJoin, nil, nil}) {
		t.Run(tt.name+"/before", func(t *testing.T) {
			r := &recorder{}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := tt.combine(r.ok("A"), r.ok("B")).Run(ctx)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("error = %v, want context.Canceled", err)
			}
			if got := r.got(); len(got) != 0 {
				t.Errorf("actions ran on a cancelled context: %v", got)
			}
		})
	}

	t.Run("Join keeps errors seen before the cancellation", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		_, err := flow.Join(
			flow.New("A", func(context.Context) (reconcile.Result, error) { return flow.RequeueIfError(errA) }),
			flow.New("cancel", func(context.Context) (reconcile.Result, error) { cancel(); return flow.Continue() }),
			flow.New("B", func(context.Context) (reconcile.Result, error) { return flow.RequeueIfError(errB) }),
		).Run(ctx)
		if diff := cmp.Diff([]string{"a failed", context.Canceled.Error()}, errLeaves(err)); diff != "" {
			t.Errorf("errors mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestNopAndNew(t *testing.T) {
	res, err := flow.Nop().Run(context.Background())
	if !res.IsZero() || err != nil {
		t.Errorf("Nop().Run = %v, %v; want zero, nil", res, err)
	}
	if got := flow.Nop().Description(); got != "Nop" {
		t.Errorf("Nop().Description() = %q, want %q", got, "Nop")
	}
	a := flow.New("sync service", func(context.Context) (reconcile.Result, error) { return flow.RequeueAfter(time.Second) })
	if got := a.Description(); got != "sync service" {
		t.Errorf("Description() = %q, want %q", got, "sync service")
	}
	if res, _ := a.Run(context.Background()); res.RequeueAfter != time.Second {
		t.Errorf("Run() result = %v, want RequeueAfter 1s", res)
	}
}

func namedActionFunc(context.Context) (reconcile.Result, error) { return flow.Exit() }

func TestActionFunc(t *testing.T) {
	f := flow.ActionFunc(namedActionFunc)
	if got, want := f.Description(), "flow_test.namedActionFunc"; got != want {
		t.Errorf("Description() = %q, want %q", got, want)
	}
	if _, err := f.Run(context.Background()); !errors.Is(err, flow.ErrExit) {
		t.Errorf("Run() error = %v, want ErrExit", err)
	}
	if got, want := flow.ActionFunc(nil).Description(), "ActionFunc(nil)"; got != want {
		t.Errorf("nil Description() = %q, want %q", got, want)
	}
}
