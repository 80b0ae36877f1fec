package flow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

type retryAction struct {
	base
	limit    int
	interval time.Duration
	a        Action
}

var _ composite = (*retryAction)(nil)

// Retry returns an Action that runs a up to limit times in all, again as long as its
// outcome has a real error, pausing interval between tries (zero: none). It does not
// try again when the error is ErrExit, a controller-runtime terminal error
// (reconcile.TerminalError), or context.Canceled, or when the context is done; a
// requeue without an error is a success and is not retried either. The outcome of the
// last try is returned. A pause ends early when the context is done; the outcome is
// then the last try's outcome joined with ctx.Err().
//
// Retry panics with a *BuildError if limit is not positive, interval is negative or a
// is nil.
func Retry(limit int, interval time.Duration, a Action) Action {
	if interval < 0 {
		panic(&BuildError{Combinator: "Retry", Argument: "interval", Reason: fmt.Sprintf("must not be negative, got %s", interval)})
	}
	return newRetry("Retry", limit, interval, a)
}

func newRetry(name string, limit int, interval time.Duration, a Action) *retryAction {
	if limit <= 0 {
		panic(&BuildError{Combinator: name, Argument: "limit", Reason: fmt.Sprintf("must be positive, got %d", limit)})
	}
	checkAction(name, "a", a)
	return &retryAction{base: base{shared: hasShared(a)}, limit: limit, interval: interval, a: a}
}

func (r *retryAction) Description() string { return r.description(r) }

// Run tries r.a.
//
// apisize:own-wait: the pause is a timer of its own rather than one of
// k8s.io/apimachinery's wait loops, whose closure and timer allocate; a
// workflow without hooks runs without allocations (TestNoHooksNoAllocations).
func (r *retryAction) Run(ctx context.Context) (reconcile.Result, error) {
	if r.shared {
		ctx = ensureRunScope(ctx)
	}
	hs := hooksFrom(ctx)
	for try := 1; ; try++ {
		res, err := invoke(ctx, hs, r.a)
		if try >= r.limit || !retryable(ctx, err) {
			return res, err
		}
		if r.interval > 0 {
			t := time.NewTimer(r.interval)
			select {
			case <-ctx.Done():
				t.Stop()
				return JoinResults(Outcome{Result: res, Err: err}, Outcome{Err: ctx.Err()})
			case <-t.C:
			}
		}
		if cerr := ctx.Err(); cerr != nil {
			return JoinResults(Outcome{Result: res, Err: err}, Outcome{Err: cerr})
		}
	}
}

// retryable reports whether Retry should try again after an outcome with err.
func retryable(ctx context.Context, err error) bool {
	switch {
	case err == nil, ctx.Err() != nil:
		return false
	case errors.Is(err, reconcile.TerminalError(nil)), errors.Is(err, context.Canceled):
		return false
	}
	return stripExit(err) != nil
}
