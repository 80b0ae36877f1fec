package flow

import (
	"errors"
	"reflect"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Outcome is the pair of values an Action returns.
type Outcome struct {
	// Result is the reconcile result.
	Result reconcile.Result
	// Err is the error, nil on success.
	Err error
}

// JoinResults joins outcomes by the rules every join of this package uses:
//
//   - errors: nil join err is err; err1 join err2 holds both, as one errors.Join, so
//     errors.Is and errors.As find each of them. Errors that are themselves the product
//     of errors.Join are flattened into the new one, so repeated joins do not nest, and
//     an error value that appears twice (the same value) is kept once.
//   - ErrExit gives way to any real error: ErrExit join realErr is realErr alone. Only
//     when no outcome has a real error does the joined error hold ErrExit.
//   - Result.Requeue (deprecated, but honoured when foreign code sets it) is OR-ed.
//   - Result.RequeueAfter is the shortest positive duration among the outcomes, or zero
//     if there is none.
//   - Result.Priority is the highest priority that any outcome sets, or nil.
//
// So an interruption happens if any outcome asks for it, never later than the
// earliest one asked for. The joined outcome does not depend on the order of the
// outcomes, except for the order of the errors inside the errors.Join. A single outcome
// is returned unchanged, and no outcomes give a zero result and a nil error.
func JoinResults(outcomes ...Outcome) (reconcile.Result, error) {
	var j joiner
	for _, o := range outcomes {
		j.add(o.Result, o.Err)
	}
	return j.result()
}

// joiner accumulates outcomes by the join rules. Its zero value is empty and it
// allocates only when there are errors to keep.
type joiner struct {
	n     int
	first Outcome
	res   reconcile.Result
	errs  []error // real errors, flattened, without duplicates
	exits []error // errors that are only ErrExit
}

func (j *joiner) add(res reconcile.Result, err error) {
	j.n++
	if j.n == 1 {
		j.first = Outcome{Result: res, Err: err}
	}
	if res.Requeue { //nolint:staticcheck // foreign results may still set Requeue
		j.res.Requeue = true //nolint:staticcheck // the join ORs the deprecated field
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
	if stripExit(err) == nil {
		j.exits = appendUnique(j.exits, err)
		return
	}
	j.errs = appendUnique(j.errs, err)
}

func (j *joiner) result() (reconcile.Result, error) {
	if j.n == 1 {
		return j.first.Result, j.first.Err
	}
	switch {
	case len(j.errs) == 1:
		return j.res, j.errs[0]
	case len(j.errs) > 1:
		return j.res, errors.Join(j.errs...)
	case len(j.exits) == 1:
		return j.res, j.exits[0]
	case len(j.exits) > 1:
		return j.res, errors.Join(j.exits...)
	}
	return j.res, nil
}

// joinErrorType is the dynamic type of the errors that errors.Join returns.
var joinErrorType = reflect.TypeOf(errors.Join(errors.New("x")))

// isJoinError reports whether err was made by errors.Join. Other multi-errors (such as
// fmt.Errorf with several %w verbs) carry text of their own and are not flattened.
func isJoinError(err error) bool {
	return reflect.TypeOf(err) == joinErrorType
}

// appendUnique appends err to errs unless the same error value is already there.
func appendUnique(errs []error, err error) []error {
	t := reflect.TypeOf(err)
	if t.Comparable() {
		for _, e := range errs {
			if reflect.TypeOf(e) == t && e == err { //nolint:errorlint // duplicates are the same value
				return errs
			}
		}
	}
	return append(errs, err)
}
