package flow_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/flow"
)

// Errors used across the tests.
var (
	errA = errors.New("a failed")
	errB = errors.New("b failed")
	errC = errors.New("c failed")
)

// recorder records which actions ran, in order, safely for concurrent use.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) add(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, name)
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

// sorted returns the recorded calls in sorted order, for actions with no promised order.
func (r *recorder) sorted() []string {
	c := r.got()
	sort.Strings(c)
	return c
}

// act returns an action named name that records its run and returns res and err.
func (r *recorder) act(name string, res reconcile.Result, err error) flow.Action {
	return flow.New(name, func(context.Context) (reconcile.Result, error) {
		r.add(name)
		return res, err
	})
}

// ok returns an action named name that records its run and succeeds.
func (r *recorder) ok(name string) flow.Action {
	return r.act(name, reconcile.Result{}, nil)
}

// outcome is an Action's outcome in a form cmp can compare: the error as its leaves.
type outcome struct {
	Result reconcile.Result
	Errs   []string
}

func outcomeOf(res reconcile.Result, err error) outcome {
	return outcome{Result: res, Errs: errLeaves(err)}
}

// errLeaves flattens err: the messages of the errors inside errors.Join trees,
// sorted; nil for a nil error.
func errLeaves(err error) []string {
	if err == nil {
		return nil
	}
	var out []string
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok && isJoin(e) {
			for _, c := range j.Unwrap() {
				walk(c)
			}
			return
		}
		out = append(out, e.Error())
	}
	walk(err)
	sort.Strings(out)
	return out
}

var joinType = fmt.Sprintf("%T", errors.Join(errA, errB))

// isJoin reports whether err was made by errors.Join.
func isJoin(err error) bool {
	return fmt.Sprintf("%T", err) == joinType
}

// after returns a result that asks for a requeue after the given number of seconds.
func after(seconds int) reconcile.Result {
	return reconcile.Result{RequeueAfter: time.Duration(seconds) * time.Second}
}

// prio returns a pointer to p, for Result.Priority.
func prio(p int) *int { return &p }

// capture runs f and returns the value it panicked with, nil if it did not panic.
func capture(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// legacy returns a result with the deprecated Requeue field set, as code written for
// older controller-runtime versions may still return, plus the given delay and
// priority.
func legacy(after time.Duration, priority *int) reconcile.Result {
	return reconcile.Result{Requeue: true, RequeueAfter: after, Priority: priority} //nolint:staticcheck // foreign results may still set Requeue
}
