package flow_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/flow"
)

// counted returns a Shared action that counts its runs and returns res and err.
func counted(runs *atomic.Int32, res reconcile.Result, err error) flow.Action {
	return flow.Shared(flow.New("load", func(context.Context) (reconcile.Result, error) {
		runs.Add(1)
		time.Sleep(time.Millisecond) // widen the window for concurrent uses
		return res, err
	}))
}

func TestSharedRunsOncePerRun(t *testing.T) {
	tests := []struct {
		name  string
		build func(s flow.Action) flow.Action
	}{
		{"Sequence", func(s flow.Action) flow.Action { return flow.Sequence(s, s, s) }},
		{"Join", func(s flow.Action) flow.Action { return flow.Join(s, s, s) }},
		{"OrderedJoin", func(s flow.Action) flow.Action { return flow.OrderedJoin(s, s) }},
		{"ParallelJoin", func(s flow.Action) flow.Action { return flow.ParallelJoin(s, s, s, s, s, s, s, s) }},
		{"nested", func(s flow.Action) flow.Action {
			return flow.Sequence(
				flow.If(true, s),
				flow.ParallelJoin(s, flow.Timeout(time.Minute, s), flow.Retry(2, 0, s)),
				flow.Join(flow.When(func(context.Context) bool { return true }, s), flow.IfElse(false, flow.Nop(), s)),
			)
		}},
		{"under hooks", func(s flow.Action) flow.Action { return flow.WithHooks(flow.Join(s, s), flow.NopHook()) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs atomic.Int32
			w := tt.build(counted(&runs, reconcile.Result{}, nil))
			for pass := 1; pass <= 2; pass++ {
				if _, err := w.Run(context.Background()); err != nil {
					t.Fatalf("pass %d: %v", pass, err)
				}
				if got := runs.Load(); got != int32(pass) {
					t.Fatalf("after pass %d the shared action ran %d times, want %d", pass, got, pass)
				}
			}
		})
	}
}

func TestSharedEveryUseSeesTheOutcome(t *testing.T) {
	var runs atomic.Int32
	s := counted(&runs, after(7), errA)
	var seen []outcome
	use := func(name string) flow.Action {
		return flow.New(name, func(ctx context.Context) (reconcile.Result, error) {
			res, err := s.Run(ctx)
			seen = append(seen, outcomeOf(res, err))
			return flow.Continue()
		})
	}
	// Uses inside foreign actions share the run that the outer combinator started.
	if _, err := flow.Run(context.Background(), flow.Sequence(use("first"), use("second"))); err != nil {
		t.Fatal(err)
	}
	want := []outcome{{Result: after(7), Errs: []string{"a failed"}}, {Result: after(7), Errs: []string{"a failed"}}}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("outcomes seen (-want +got):\n%s", diff)
	}
	if got := runs.Load(); got != 1 {
		t.Errorf("ran %d times, want 1", got)
	}

	t.Run("joined once", func(t *testing.T) {
		var runs atomic.Int32
		s := counted(&runs, reconcile.Result{}, errA)
		_, err := flow.ParallelJoin(s, s, s).Run(context.Background())
		if diff := cmp.Diff([]string{"a failed"}, errLeaves(err)); diff != "" {
			t.Errorf("the same error should be joined once (-want +got):\n%s", diff)
		}
	})
}

func TestSharedScopes(t *testing.T) {
	t.Run("without a scope each use runs", func(t *testing.T) {
		var runs atomic.Int32
		s := counted(&runs, reconcile.Result{}, nil)
		_, _ = s.Run(context.Background())
		_, _ = s.Run(context.Background())
		if got := runs.Load(); got != 2 {
			t.Errorf("ran %d times, want 2", got)
		}
	})

	t.Run("WithRunScope spans several workflows", func(t *testing.T) {
		var runs atomic.Int32
		s := counted(&runs, reconcile.Result{}, nil)
		ctx := flow.WithRunScope(context.Background())
		_, _ = flow.Sequence(s).Run(ctx)
		_, _ = flow.Join(s, s).Run(ctx)
		_, _ = s.Run(ctx)
		if got := runs.Load(); got != 1 {
			t.Errorf("ran %d times, want 1", got)
		}
	})

	t.Run("Run starts a new scope", func(t *testing.T) {
		var runs atomic.Int32
		s := counted(&runs, reconcile.Result{}, nil)
		ctx := flow.WithRunScope(context.Background())
		_, _ = flow.Run(ctx, s)
		_, _ = flow.Run(ctx, s)
		if got := runs.Load(); got != 2 {
			t.Errorf("ran %d times, want 2", got)
		}
	})

	t.Run("distinct Shared values run separately", func(t *testing.T) {
		var runs atomic.Int32
		a := counted(&runs, reconcile.Result{}, nil)
		b := counted(&runs, reconcile.Result{}, nil)
		_, _ = flow.Join(a, b, a, b).Run(context.Background())
		if got := runs.Load(); got != 2 {
			t.Errorf("ran %d times, want 2", got)
		}
	})
}

func TestSharedPanic(t *testing.T) {
	s := flow.Shared(flow.New("explode", func(context.Context) (reconcile.Result, error) {
		time.Sleep(5 * time.Millisecond)
		panic("boom")
	}))
	_, err := flow.ParallelJoin(s, s, s).Run(context.Background())
	if !errors.Is(err, flow.ErrPanic) {
		t.Fatalf("error = %v, want ErrPanic", err)
	}
	var pe *flow.PanicError
	if !errors.As(err, &pe) || pe.Value != "boom" || pe.Action != "explode" {
		t.Errorf("error = %#v, want the panic of explode", err)
	}
	// Every use got the same *PanicError, so the join holds it once.
	if got := len(errLeaves(err)); got != 1 {
		t.Errorf("join holds %d errors, want 1: %v", got, err)
	}
}

func TestSharedUsedInsideItself(t *testing.T) {
	var s flow.Action
	inner := flow.New("reenter", func(ctx context.Context) (reconcile.Result, error) {
		// A foreign action running a workflow that uses the same Shared, with the
		// context of the run: it must not wait for itself.
		return flow.Sequence(s).Run(ctx)
	})
	s = flow.Shared(inner)
	done := make(chan error, 1)
	go func() {
		_, err := flow.Run(context.Background(), s)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, flow.ErrSharedCycle) {
			t.Errorf("error = %v, want ErrSharedCycle", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a Shared used inside itself deadlocked")
	}
}

func TestSharedWaitHonoursContext(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{})
	s := flow.Shared(flow.New("slow", func(context.Context) (reconcile.Result, error) {
		close(started)
		<-release
		return flow.Continue()
	}))
	ctx := flow.WithRunScope(context.Background())
	go func() { _, _ = s.Run(ctx) }()
	<-started
	waitCtx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	_, err := s.Run(waitCtx)
	close(release)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error = %v, want the waiting use's deadline", err)
	}
}
