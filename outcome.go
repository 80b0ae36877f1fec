package bosun

import (
	"context"
	"errors"
	"reflect"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The outcome of a step is the pair its Do returns. The rules of this file
// say what the engine makes of outcomes: which stop a Sequence, how a join
// merges several into one, which Retry tries again, and the form the pass's
// outcome takes when it goes back to controller-runtime.

// outcome is the pair a step returns.
type outcome struct {
	res ctrl.Result
	err error
}

// interrupts reports whether res, err stops a Sequence: err is not nil
// (ErrStop included), or res asks for a requeue.
func interrupts(res ctrl.Result, err error) bool {
	return err != nil || res.RequeueAfter > 0 || res.Requeue //nolint:staticcheck // a step may still set the deprecated Requeue
}

// joinOutcomes joins outcomes into one:
//
//   - the errors are all kept, in one errors.Join (errors.Is and errors.As
//     find each). An error made by errors.Join is flattened into it, so that
//     joins of joins do not nest, and the same error value is kept once;
//   - ErrStop gives way to a real error: it is kept, alone or wrapped,
//     only when no outcome failed;
//   - RequeueAfter is the shortest positive one, or zero; Requeue (the
//     deprecated field) is set when one sets it; Priority is the highest
//     one set, or nil.
//
// So the joined outcome asks for the earliest requeue that one asked for,
// whatever the order of outcomes, which only orders the errors. One outcome
// is returned as it is; none gives a zero result and a nil error.
func joinOutcomes(outcomes ...outcome) (ctrl.Result, error) {
	var j joiner
	for _, o := range outcomes {
		j.add(o.res, o.err)
	}
	return j.result()
}

// joiner joins outcomes one by one, by the rules of joinOutcomes. Its zero
// value has none.
type joiner struct {
	n     int
	first outcome
	res   ctrl.Result
	errs  []error // the real errors, flattened, each value once
	stops []error // the errors that hold nothing but ErrStop
}

// add adds the outcome res, err.
func (j *joiner) add(res ctrl.Result, err error) {
	j.n++
	if j.n == 1 {
		j.first = outcome{res: res, err: err}
	}
	if res.Requeue { //nolint:staticcheck // a step may still set the deprecated Requeue
		j.res.Requeue = true //nolint:staticcheck // the join keeps what a step asked
	}
	if res.RequeueAfter > 0 && (j.res.RequeueAfter == 0 || res.RequeueAfter < j.res.RequeueAfter) {
		j.res.RequeueAfter = res.RequeueAfter
	}
	if res.Priority != nil && (j.res.Priority == nil || *res.Priority > *j.res.Priority) {
		j.res.Priority = res.Priority
	}
	if err != nil {
		j.addErr(err)
	}
}

func (j *joiner) addErr(err error) {
	if isJoinError(err) {
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			if e != nil {
				j.addErr(e)
			}
		}
		return
	}
	if withoutStop(err) == nil {
		j.stops = appendUnique(j.stops, err)
		return
	}
	j.errs = appendUnique(j.errs, err)
}

// result returns the joined outcome.
func (j *joiner) result() (ctrl.Result, error) {
	if j.n == 1 {
		return j.first.res, j.first.err
	}
	switch {
	case len(j.errs) == 1:
		return j.res, j.errs[0]
	case len(j.errs) > 1:
		return j.res, errors.Join(j.errs...)
	case len(j.stops) == 1:
		return j.res, j.stops[0]
	case len(j.stops) > 1:
		return j.res, errors.Join(j.stops...)
	}
	return j.res, nil
}

// joinErrorType is the type of the errors errors.Join makes.
var joinErrorType = reflect.TypeOf(errors.Join(errors.New("x")))

// isJoinError reports whether errors.Join made err. Other errors with
// several causes (fmt.Errorf with several %w) have text of their own, and
// stay whole.
func isJoinError(err error) bool {
	return reflect.TypeOf(err) == joinErrorType
}

// appendUnique appends err to errs unless the same error value is there.
func appendUnique(errs []error, err error) []error {
	t := reflect.TypeOf(err)
	if t.Comparable() {
		for _, e := range errs {
			if reflect.TypeOf(e) == t && e == err { //nolint:errorlint // the same value, not the same kind of error
				return errs
			}
		}
	}
	return append(errs, err)
}

// withoutStop returns err without ErrStop: nil for ErrStop itself or an
// error that wraps nothing else; for an errors.Join, the join of the other
// errors (the text a wrapper put around a mix of ErrStop and failures is
// lost); err itself when it holds no ErrStop.
func withoutStop(err error) error {
	if err == nil || err == ErrStop { //nolint:errorlint // identity first; the wrapped forms are walked below
		return nil
	}
	switch u := err.(type) { //nolint:errorlint // walks the tree one level at a time
	case interface{ Unwrap() []error }:
		errs := u.Unwrap()
		var kept []error
		changed := false
		for i, e := range errs {
			s := withoutStop(e)
			if s != e && !changed { //nolint:errorlint // identity says whether something was removed
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
		if s := withoutStop(inner); s != inner { //nolint:errorlint // identity says whether something was removed
			return s
		}
	}
	return err
}

// retryable reports whether Retry tries a step again after it returned
// err under ctx: err is a real failure (not ErrStop), neither terminal nor
// context.Canceled, and ctx is not done. A requeue without an error is a
// success.
func retryable(ctx context.Context, err error) bool {
	switch {
	case err == nil, ctx.Err() != nil:
		return false
	case errors.Is(err, reconcile.TerminalError(nil)), errors.Is(err, context.Canceled):
		return false
	}
	return withoutStop(err) != nil
}

// final puts the outcome of a pass in the form a Reconcile method returns:
// without ErrStop, and, when an error remains, without Requeue and
// RequeueAfter, which controller-runtime ignores then (with a warning).
// Priority stays.
func final(res ctrl.Result, err error) (ctrl.Result, error) {
	if err = withoutStop(err); err != nil {
		return ctrl.Result{Priority: res.Priority}, err
	}
	return res, nil
}
