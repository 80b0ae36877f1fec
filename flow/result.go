package flow

import (
	"errors"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Immediately is the RequeueAfter delay that RequeueImmediately uses: the smallest
// positive duration. controller-runtime hands a positive RequeueAfter to the work
// queue's AddAfter, which adds the request at once, without consulting the rate
// limiter. The deprecated Result.Requeue field is never set by this package.
const Immediately = time.Nanosecond

// ErrExit interrupts a workflow without reporting a failure: Sequence stops at it,
// a join keeps it only when no child returned a real error, and IgnoreExit (or Final)
// removes it before the result reaches controller-runtime. Return it with Exit or
// ExitIf, or wrap it to say why the workflow stopped.
var ErrExit = errors.New("flow: exit workflow")

// RequeueImmediately interrupts the workflow and asks for the request to be queued
// again at once: the result has RequeueAfter set to Immediately. This bypasses the
// work queue's rate limiter, so a step that asks for it on every pass makes the
// controller loop as fast as it can; return an error instead when the request should
// be retried with backoff.
func RequeueImmediately() (reconcile.Result, error) {
	return reconcile.Result{RequeueAfter: Immediately}, nil
}

// RequeueAfter interrupts the workflow and asks for the request to be queued again
// after d. A non-positive d is treated as Immediately, because the caller asked for a
// requeue.
func RequeueAfter(d time.Duration) (reconcile.Result, error) {
	if d <= 0 {
		d = Immediately
	}
	return reconcile.Result{RequeueAfter: d}, nil
}

// RequeueIfError returns a zero result and err: it interrupts the workflow (and makes
// controller-runtime retry with backoff) when err is not nil, and lets it continue
// otherwise.
func RequeueIfError(err error) (reconcile.Result, error) {
	return reconcile.Result{}, err
}

// RequeueIfErrorAndWrap is RequeueIfError with err wrapped as "msg: err". A nil err
// stays nil.
func RequeueIfErrorAndWrap(msg string, err error) (reconcile.Result, error) {
	if err == nil {
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, fmt.Errorf("%s: %w", msg, err)
}

// NoRequeue returns a zero result and a nil error: the workflow continues and, if it
// is the final outcome, the request is done.
func NoRequeue() (reconcile.Result, error) { return reconcile.Result{}, nil }

// Continue is the same as NoRequeue; it reads better in the middle of a workflow.
func Continue() (reconcile.Result, error) { return reconcile.Result{}, nil }

// Exit is RequeueIfError(ErrExit): it stops the workflow without reporting a failure.
func Exit() (reconcile.Result, error) { return reconcile.Result{}, ErrExit }

// ExitIf returns Exit() when cond is true and Continue() otherwise.
func ExitIf(cond bool) (reconcile.Result, error) {
	if cond {
		return Exit()
	}
	return Continue()
}

// IgnoreExit returns res and err with ErrExit removed from err. ErrExit is removed
// wherever it appears: as err itself, wrapped (fmt.Errorf("...: %w", ErrExit)) or among
// the errors of an errors.Join. The other errors of a join are kept; the text that a
// wrapper put around a mix of ErrExit and real errors is lost.
func IgnoreExit(res reconcile.Result, err error) (reconcile.Result, error) {
	return res, stripExit(err)
}

// NeedsRequeue reports whether controller-runtime would queue the request again for
// this outcome: err is a real error (not ErrExit), or res asks for a requeue with a
// positive RequeueAfter or with the deprecated Requeue field.
func NeedsRequeue(res reconcile.Result, err error) bool {
	return res.RequeueAfter > 0 || res.Requeue || stripExit(err) != nil //nolint:staticcheck // foreign results may still set Requeue
}

// Interrupts reports whether the outcome stops a Sequence: it needs a requeue, or
// err is not nil (ErrExit included).
func Interrupts(res reconcile.Result, err error) bool {
	return err != nil || res.RequeueAfter > 0 || res.Requeue //nolint:staticcheck // foreign results may still set Requeue
}

// Final turns the outcome of a workflow into the form to return from a
// controller-runtime Reconcile method: ErrExit is removed (as by IgnoreExit), and when
// an error remains, Requeue and RequeueAfter are cleared, because controller-runtime
// ignores them then (and logs a warning). Priority is kept.
func Final(res reconcile.Result, err error) (reconcile.Result, error) {
	err = stripExit(err)
	if err != nil {
		return reconcile.Result{Priority: res.Priority}, err
	}
	return res, nil
}

// stripExit removes ErrExit from err; see IgnoreExit.
func stripExit(err error) error {
	if err == nil || err == ErrExit { //nolint:errorlint // identity is the fast path; wrapped forms are handled below
		return nil
	}
	switch u := err.(type) { //nolint:errorlint // walks the wrapping tree itself, one level at a time
	case interface{ Unwrap() []error }:
		errs := u.Unwrap()
		var kept []error
		changed := false
		for i, e := range errs {
			s := stripExit(e)
			if s != e && !changed { //nolint:errorlint // identity tells whether anything was removed
				changed = true
				kept = append(make([]error, 0, len(errs)), errs[:i]...)
			}
			if changed && s != nil {
				kept = append(kept, s)
			}
		}
		switch {
		case !changed:
			return err
		case len(kept) == 0:
			return nil
		case len(kept) == 1:
			return kept[0]
		default:
			return errors.Join(kept...)
		}
	case interface{ Unwrap() error }:
		inner := u.Unwrap()
		if inner == nil {
			return err
		}
		s := stripExit(inner)
		if s == inner { //nolint:errorlint // identity tells whether anything was removed
			return err
		}
		return s
	}
	return err
}
