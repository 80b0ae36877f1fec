package flow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ErrTimeout is wrapped by the *TimeoutError that Timeout returns when its deadline
// passed.
var ErrTimeout = errors.New("flow: action timed out")

// TimeoutError reports that the deadline a Timeout set passed before its action
// returned. errors.Is(err, ErrTimeout) is true for it, and errors.Is and errors.As also
// reach the action's own error, if it returned one.
type TimeoutError struct {
	// Action is the description of the action that ran out of time.
	Action string
	// Timeout is the duration the action was given.
	Timeout time.Duration
	// Err is the action's own error, nil if it returned none (or only ErrExit).
	Err error
}

// Error returns a message such as `flow: action "sync" timed out after 1s: <Err>`.
func (e *TimeoutError) Error() string {
	msg := fmt.Sprintf("flow: action %q timed out after %s", e.Action, e.Timeout)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns ErrTimeout and, if there is one, the action's own error.
func (e *TimeoutError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrTimeout, e.Err}
	}
	return []error{ErrTimeout}
}

type timeoutAction struct {
	base
	d time.Duration
	a Action
}

var _ composite = (*timeoutAction)(nil)

// Timeout returns an Action that runs a with a context whose deadline is d from now
// (or the parent's deadline, if that is earlier). The limit is cooperative: Go cannot
// stop a goroutine, so a runs in the calling goroutine and Timeout waits for it to
// return; a must honour its context. If the deadline Timeout set has passed when a
// returns, and the parent context is not done, the outcome is a *TimeoutError (wrapping
// ErrTimeout and a's own error, if any) naming a and d, with a's result kept. If the
// parent context ended first, a's outcome is returned unchanged.
//
// Timeout panics with a *BuildError if d is not positive or a is nil.
func Timeout(d time.Duration, a Action) Action {
	if d <= 0 {
		panic(&BuildError{Combinator: "Timeout", Argument: "d", Reason: fmt.Sprintf("must be positive, got %s", d)})
	}
	checkAction("Timeout", "a", a)
	return &timeoutAction{base: base{shared: hasShared(a)}, d: d, a: a}
}

func (t *timeoutAction) Description() string { return t.description(t) }

func (t *timeoutAction) Run(ctx context.Context) (reconcile.Result, error) {
	if t.shared {
		ctx = ensureRunScope(ctx)
	}
	tctx, cancel := context.WithTimeout(ctx, t.d)
	defer cancel()
	res, err := invoke(tctx, hooksFrom(tctx), t.a)
	if tctx.Err() != nil && ctx.Err() == nil {
		return res, &TimeoutError{Action: t.a.Description(), Timeout: t.d, Err: stripExit(err)}
	}
	return res, err
}
