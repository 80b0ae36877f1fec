package bosun

import (
	"context"
	"errors"
	"reflect"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/conditions"
)

// Step is one piece of a reconcile. Do brings the world closer to the object's
// spec; it runs while the object is not being deleted and the policy allows
// changes. A positive RequeueAfter, an error or ErrStop interrupts the
// steps after it in a Sequence; with an error the pass is retried with
// backoff and its RequeueAfter is dropped, as controller-runtime does.
//
// A step may implement the optional interfaces Cleaner, Poster,
// ConditionOwner, Observer, Setuper and Named. Composites (see Composite)
// are steps made of steps.
type Step[T client.Object] interface {
	Do(ctx context.Context, req *Pass[T]) (ctrl.Result, error)
}

// ErrStop ends a pass's Do steps where a step returns it, with nothing
// wrong: the steps after it in a Sequence do not run, Post and the status
// save still do, and the pass counts as a success (no error logged or
// reported in Ready, no backoff). A step returns it, or wraps it to say why,
// when the object must wait for something a watch will report, such as an
// input that does not exist yet; a RequeueAfter returned with it still
// applies.
var ErrStop = errors.New("bosun: pass stopped")

// Cleaner is a Step that must undo its work when the object is deleted. A
// reconciler with a Cleaner needs a finalizer (Reconciler.Finalizer), which
// the engine commits before any Do runs, so nothing a step makes can
// outlive the object.
//
// The contract of Cleanup:
//
//   - It must be idempotent. The engine runs the Cleanups in reverse step
//     order and stops at the first that needs more time; the next pass
//     starts again from the last step, so a Cleanup that finished runs
//     again, and must then find nothing to do and say so (a zero result,
//     a nil error). A crash may repeat any Cleanup too.
//   - It may run when Do never ran, or ran only in part: the object can be
//     deleted right after the claim, before any step acted, or after a Do
//     that failed halfway. It must not assume what Do made exists; what is
//     already gone counts as cleaned up.
//   - A requeue or an error means the step needs more time: the finalizer
//     stays, the error is reported in the Ready condition and an event,
//     and the pass is retried with the
//     controller's backoff (after the requeue delay, for a requeue). The
//     object is let go only when every Cleanup returns a zero result and a
//     nil error, in one pass.
//   - It does not run when the object is deleted under the detach or skip
//     policy: the finalizer is then removed with nothing undone.
type Cleaner[T client.Object] interface {
	// Cleanup undoes the step's work; see the contract above.
	Cleanup(ctx context.Context, req *Pass[T]) (ctrl.Result, error)
}

// Claimer is a Step with work to do before the engine claims an object,
// that is before it commits its finalizer (and instance annotation) and
// before any Do runs: check preconditions (the owner the object names
// exists) and compute identifiers the object must keep from then on.
//
// The contract:
//
//   - Claim runs only on a pass that claims: the object's first, or any
//     later one while the claim is missing. Claimers run in step order;
//     a Reconciler with a Claimer needs a Finalizer, as with a Cleaner.
//   - What Claim changes in req.Object's metadata and spec (labels,
//     annotations, spec fields) is written in the same write as the
//     finalizer: it is stored exactly when the claim is.
//   - An error stops the claim: nothing of the object but its status is
//     written, no Do runs (every Post still does), the error is reported in
//     Ready like a Do error, and the pass is retried with backoff (never,
//     for a conditions.Terminal error, until the object changes).
type Claimer[T client.Object] interface {
	Claim(ctx context.Context, req *Pass[T]) error
}

// Poster is a Step with work to do at the end of every reconcile, whatever
// happened before: after Do, Cleanup or Observe, after an error and after a
// panic.
type Poster[T client.Object] interface {
	Post(ctx context.Context, req *Pass[T]) error
}

// ConditionOwner is a Step that owns condition types. The engine adds them as
// Unknown on the first visit, and the Ready condition summarises them in step
// order.
type ConditionOwner interface {
	Conditions() []string
}

// Observer is a Step that can refresh what it observes without changing
// anything. Under the skip policy Observe runs instead of Do.
type Observer[T client.Object] interface {
	Observe(ctx context.Context, req *Pass[T]) (ctrl.Result, error)
}

// Named is a Step with a name of its own. Other steps are named after their Go
// type. Names appear in logs, metrics and errors, and must be unique within a
// reconciler.
type Named interface {
	Name() string
}

// engineWrite names one of the writes the engine makes to the object itself,
// outside the final status save.
type engineWrite string

// The engine's own writes.
const (
	// writeClaim commits the finalizer and the instance annotation before any
	// step acts.
	writeClaim engineWrite = "Claim"
	// writeRelease removes the finalizer after Cleanup (or under a policy that
	// runs none).
	writeRelease engineWrite = "Release"
	// writeSave writes the changes the steps made to metadata and spec, such
	// as late-initialised fields.
	writeSave engineWrite = "Save"
)

// reason returns the condition and event reason of a failure of w:
// conditions.ReasonClaimFailed, ReasonReleaseFailed or ReasonSaveFailed.
func (w engineWrite) reason() conditions.Reason {
	switch w {
	case writeClaim:
		return conditions.ReasonClaimFailed
	case writeRelease:
		return conditions.ReasonReleaseFailed
	default:
		return conditions.ReasonSaveFailed
	}
}

// WriteFailureReporter is a Step that reports, in the conditions it owns, a
// failure of one of the engine's own writes of the object: the claim
// (finalizer and instance annotation, before any step acts), the release
// of the finalizer, or the save of what the steps changed in metadata and
// spec. The engine calls WriteFailed on every such step, in step order,
// before it writes the status that reports the failure: Ready False with
// reason, which is "ClaimFailed", "ReleaseFailed" or "SaveFailed". The
// object in req is the one whose status is about to be written; WriteFailed
// changes only its conditions.
type WriteFailureReporter[T client.Object] interface {
	WriteFailed(req *Pass[T], reason conditions.Reason, err error)
}

// StepFunc adapts a function to Step. Its name is the one given to NewStep.
type StepFunc[T client.Object] struct {
	name string
	fn   func(ctx context.Context, req *Pass[T]) (ctrl.Result, error)
}

var (
	_ Step[client.Object] = StepFunc[client.Object]{}
	_ Named               = StepFunc[client.Object]{}
	_ Step[client.Object] = Nop[client.Object]{}
)

// NewStep returns a Step named name whose Do calls fn.
func NewStep[T client.Object](name string, fn func(ctx context.Context, req *Pass[T]) (ctrl.Result, error)) StepFunc[T] {
	return StepFunc[T]{name: name, fn: fn}
}

// Do calls the function. A StepFunc without a function does nothing.
func (s StepFunc[T]) Do(ctx context.Context, req *Pass[T]) (ctrl.Result, error) {
	if s.fn == nil {
		return ctrl.Result{}, nil
	}
	return s.fn(ctx, req)
}

// Name returns the name given to NewStep.
func (s StepFunc[T]) Name() string { return s.name }

// Nop is a Step that does nothing.
type Nop[T client.Object] struct{}

// Do does nothing and lets the reconcile go on.
func (Nop[T]) Do(context.Context, *Pass[T]) (ctrl.Result, error) { return ctrl.Result{}, nil }

// StepName returns the name of s: its Name if it is Named, else its Go type
// name without package, pointer and type arguments ("ensureSecret" for
// *ensureSecret, "Nop" for Nop[*v1.Widget]).
func StepName[T client.Object](s Step[T]) string {
	if n, ok := s.(Named); ok {
		return n.Name()
	}
	t := reflect.TypeOf(s)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "<nil>"
	}
	name, _, _ := strings.Cut(t.Name(), "[")
	return name
}
