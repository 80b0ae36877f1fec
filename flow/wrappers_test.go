package flow_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/flow"
)

// waitForDone returns an action that blocks until its context is done and then
// returns res and the error make(ctx) gives.
func waitForDone(name string, res reconcile.Result, mk func(ctx context.Context) error) flow.Action {
	return flow.New(name, func(ctx context.Context) (reconcile.Result, error) {
		<-ctx.Done()
		return res, mk(ctx)
	})
}

func TestTimeout(t *testing.T) {
	t.Run("fast action passes through", func(t *testing.T) {
		res, err := flow.Timeout(time.Minute, flow.New("fast", func(ctx context.Context) (reconcile.Result, error) {
			if _, ok := ctx.Deadline(); !ok {
				t.Errorf("action runs without a deadline")
			}
			return reconcile.Result{RequeueAfter: time.Second}, errA
		})).Run(context.Background())
		if diff := cmp.Diff(outcome{Result: after(1), Errs: []string{"a failed"}}, outcomeOf(res, err)); diff != "" {
			t.Errorf("outcome mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("deadline passed with the action's error", func(t *testing.T) {
		res, err := flow.Timeout(10*time.Millisecond, waitForDone("slow", after(2), func(ctx context.Context) error {
			return fmt.Errorf("wait: %w", ctx.Err())
		})).Run(context.Background())
		if !errors.Is(err, flow.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error %v should wrap ErrTimeout and the action's error", err)
		}
		var te *flow.TimeoutError
		if !errors.As(err, &te) {
			t.Fatalf("error %T is not a *TimeoutError", err)
		}
		want := &flow.TimeoutError{Action: "slow", Timeout: 10 * time.Millisecond}
		if diff := cmp.Diff(want, te, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Err" }, cmp.Ignore())); diff != "" {
			t.Errorf("TimeoutError mismatch (-want +got):\n%s", diff)
		}
		if got, want := err.Error(), `flow: action "slow" timed out after 10ms: wait: context deadline exceeded`; got != want {
			t.Errorf("Error() = %q, want %q", got, want)
		}
		if diff := cmp.Diff(after(2), res); diff != "" {
			t.Errorf("result of the action not kept (-want +got):\n%s", diff)
		}
	})

	t.Run("deadline passed without an error", func(t *testing.T) {
		_, err := flow.Timeout(5*time.Millisecond, waitForDone("slow", reconcile.Result{}, func(context.Context) error { return nil })).Run(context.Background())
		if got, want := fmt.Sprint(err), `flow: action "slow" timed out after 5ms`; got != want {
			t.Errorf("error = %q, want %q", got, want)
		}
		if !errors.Is(err, flow.ErrTimeout) {
			t.Errorf("error does not wrap ErrTimeout")
		}
	})

	t.Run("deadline passed after exit drops the exit", func(t *testing.T) {
		_, err := flow.Timeout(5*time.Millisecond, waitForDone("slow", reconcile.Result{}, func(context.Context) error { return flow.ErrExit })).Run(context.Background())
		if !errors.Is(err, flow.ErrTimeout) || errors.Is(err, flow.ErrExit) {
			t.Errorf("error = %v, want a timeout without ErrExit", err)
		}
	})

	t.Run("parent cancelled is not a timeout", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(5*time.Millisecond, cancel)
		_, err := flow.Timeout(time.Minute, waitForDone("slow", reconcile.Result{}, context.Cause)).Run(ctx)
		if !errors.Is(err, context.Canceled) || errors.Is(err, flow.ErrTimeout) {
			t.Errorf("error = %v, want context.Canceled and no timeout", err)
		}
	})

	t.Run("parent deadline earlier is not our timeout", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		defer cancel()
		_, err := flow.Timeout(time.Minute, waitForDone("slow", reconcile.Result{}, context.Cause)).Run(ctx)
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, flow.ErrTimeout) {
			t.Errorf("error = %v, want the parent's deadline and no timeout", err)
		}
	})

	t.Run("inner timeout of nested timeouts", func(t *testing.T) {
		_, err := flow.Timeout(time.Minute, flow.Timeout(5*time.Millisecond, waitForDone("slow", reconcile.Result{}, context.Cause))).Run(context.Background())
		var te *flow.TimeoutError
		if !errors.As(err, &te) || te.Timeout != 5*time.Millisecond || te.Action != "slow" {
			t.Errorf("error = %v, want the inner 5ms timeout naming slow", err)
		}
	})

	t.Run("stays in the calling goroutine", func(t *testing.T) {
		var done atomic.Bool
		_, _ = flow.Timeout(time.Millisecond, flow.New("sleepy", func(context.Context) (reconcile.Result, error) {
			time.Sleep(20 * time.Millisecond) // ignores its context on purpose
			done.Store(true)
			return flow.Continue()
		})).Run(context.Background())
		if !done.Load() {
			t.Errorf("Timeout returned before its action finished")
		}
	})
}

func TestConditions(t *testing.T) {
	tests := []struct {
		name  string
		build func(r *recorder) flow.Action
		calls []string
		want  outcome
	}{
		{"If true", func(r *recorder) flow.Action { return flow.If(true, r.act("A", after(1), nil)) }, []string{"A"}, outcome{Result: after(1)}},
		{"If false", func(r *recorder) flow.Action { return flow.If(false, r.act("A", after(1), nil)) }, nil, outcome{}},
		{"IfElse true", func(r *recorder) flow.Action {
			return flow.IfElse(true, r.act("A", after(1), nil), r.act("B", after(2), nil))
		}, []string{"A"}, outcome{Result: after(1)}},
		{"IfElse false", func(r *recorder) flow.Action {
			return flow.IfElse(false, r.act("A", after(1), nil), r.act("B", reconcile.Result{}, errB))
		}, []string{"B"}, outcome{Errs: []string{"b failed"}}},
		{"When true", func(r *recorder) flow.Action {
			return flow.When(func(context.Context) bool { r.add("pred"); return true }, r.ok("A"))
		}, []string{"pred", "A"}, outcome{}},
		{"When false", func(r *recorder) flow.Action {
			return flow.When(func(context.Context) bool { r.add("pred"); return false }, r.act("A", reconcile.Result{}, errA))
		}, []string{"pred"}, outcome{}},
		{"When sees state changed by earlier actions", func(r *recorder) flow.Action {
			ready := false
			return flow.Sequence(
				flow.New("prepare", func(context.Context) (reconcile.Result, error) { ready = true; return flow.Continue() }),
				flow.When(func(context.Context) bool { return ready }, r.ok("A")),
			)
		}, []string{"A"}, outcome{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{}
			got := outcomeOf(tt.build(r).Run(context.Background()))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("outcome mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.calls, r.got()); diff != "" {
				t.Errorf("calls mismatch (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("When passes the context to the predicate", func(t *testing.T) {
		type key struct{}
		ctx := context.WithValue(context.Background(), key{}, "v")
		var seen any
		_, _ = flow.When(func(ctx context.Context) bool { seen = ctx.Value(key{}); return false }, flow.Nop()).Run(ctx)
		if seen != "v" {
			t.Errorf("predicate saw %v, want the workflow's context", seen)
		}
	})
}

// failing returns an action that fails its first n runs with err and then succeeds,
// counting its runs.
func failing(n int, err error, runs *int) flow.Action {
	return flow.New("flaky", func(context.Context) (reconcile.Result, error) {
		*runs++
		if *runs <= n {
			return reconcile.Result{}, err
		}
		return flow.Continue()
	})
}

func TestRetry(t *testing.T) {
	terminal := reconcile.TerminalError(errA)
	tests := []struct {
		name     string
		limit    int
		failures int
		err      error
		result   reconcile.Result
		wantRuns int
		want     outcome
	}{
		{"success first time", 3, 0, errA, reconcile.Result{}, 1, outcome{}},
		{"success on the last try", 3, 2, errA, reconcile.Result{}, 3, outcome{}},
		{"gives up after limit", 3, 5, errA, reconcile.Result{}, 3, outcome{Errs: []string{"a failed"}}},
		{"limit one runs once", 1, 5, errA, reconcile.Result{}, 1, outcome{Errs: []string{"a failed"}}},
		{"exit is not retried", 3, 5, flow.ErrExit, reconcile.Result{}, 1, outcome{Errs: []string{flow.ErrExit.Error()}}},
		{"terminal error is not retried", 3, 5, terminal, reconcile.Result{}, 1, outcome{Errs: []string{terminal.Error()}}},
		{"cancellation is not retried", 3, 5, fmt.Errorf("get: %w", context.Canceled), reconcile.Result{}, 1, outcome{Errs: []string{"get: context canceled"}}},
		{"inner timeout is retried", 3, 5, &flow.TimeoutError{Action: "x", Timeout: time.Second, Err: context.DeadlineExceeded}, reconcile.Result{}, 3,
			outcome{Errs: []string{`flow: action "x" timed out after 1s: context deadline exceeded`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := 0
			got := outcomeOf(flow.Retry(tt.limit, 0, failing(tt.failures, tt.err, &runs)).Run(context.Background()))
			if runs != tt.wantRuns {
				t.Errorf("ran %d times, want %d", runs, tt.wantRuns)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("outcome mismatch (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("requeue without error is a success", func(t *testing.T) {
		runs := 0
		res, err := flow.Retry(3, 0, flow.New("requeue", func(context.Context) (reconcile.Result, error) {
			runs++
			return flow.RequeueAfter(time.Second)
		})).Run(context.Background())
		if runs != 1 || err != nil || res.RequeueAfter != time.Second {
			t.Errorf("runs = %d, outcome = %v, %v; want 1 run requeued after 1s", runs, res, err)
		}
	})

	t.Run("stops when the context is done", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		runs := 0
		_, err := flow.Retry(5, 0, flow.New("cancel", func(context.Context) (reconcile.Result, error) {
			runs++
			cancel()
			return reconcile.Result{}, errA
		})).Run(ctx)
		if runs != 1 || !errors.Is(err, errA) {
			t.Errorf("runs = %d, err = %v; want 1 run and errA", runs, err)
		}
	})
}

func TestRetryInterval(t *testing.T) {
	t.Run("waits between tries", func(t *testing.T) {
		var times []time.Time
		_, err := flow.Retry(3, 15*time.Millisecond, flow.New("flaky", func(context.Context) (reconcile.Result, error) {
			times = append(times, time.Now())
			return reconcile.Result{}, errA
		})).Run(context.Background())
		if len(times) != 3 || !errors.Is(err, errA) {
			t.Fatalf("runs = %d, err = %v; want 3 runs and errA", len(times), err)
		}
		for i := 1; i < len(times); i++ {
			if gap := times[i].Sub(times[i-1]); gap < 15*time.Millisecond {
				t.Errorf("gap before try %d = %v, want at least 15ms", i+1, gap)
			}
		}
	})

	t.Run("stops waiting when the context is done", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		runs := 0
		time.AfterFunc(10*time.Millisecond, cancel)
		start := time.Now()
		res, err := flow.Retry(3, time.Hour, flow.New("flaky", func(context.Context) (reconcile.Result, error) {
			runs++
			return after(4), errA
		})).Run(ctx)
		if elapsed := time.Since(start); elapsed > 10*time.Second {
			t.Errorf("waited %v after cancellation", elapsed)
		}
		if runs != 1 {
			t.Errorf("runs = %d, want 1", runs)
		}
		if diff := cmp.Diff(outcome{Result: after(4), Errs: []string{"a failed", context.Canceled.Error()}}, outcomeOf(res, err)); diff != "" {
			t.Errorf("outcome mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("zero interval retries at once", func(t *testing.T) {
		runs := 0
		_, err := flow.Retry(4, 0, failing(3, errA, &runs)).Run(context.Background())
		if runs != 4 || err != nil {
			t.Errorf("runs = %d, err = %v; want 4 runs and success", runs, err)
		}
	})
}
