package flow

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Action is one step of a reconcile workflow. Run does the work and reports how the
// reconcile should go on: a zero result and a nil error let the workflow continue, a
// requeue, an error or ErrExit interrupt it (see Interrupts). Description names the
// action in logs, errors and rendered graphs; it should be short and stable.
type Action interface {
	// Description returns a short, human-readable name of the action.
	Description() string
	// Run performs the action. It must honour ctx: return soon after ctx is done.
	Run(ctx context.Context) (reconcile.Result, error)
}

// ActionFunc adapts a plain function to Action. Its Description is the function's
// name as the Go runtime reports it, without the import path (for example
// "mypkg.(*Manager).SyncService-fm" or "mypkg.build.func1"). Use New to give a function a
// readable description.
type ActionFunc func(ctx context.Context) (reconcile.Result, error)

var _ Action = ActionFunc(nil)

// Run calls f(ctx).
func (f ActionFunc) Run(ctx context.Context) (reconcile.Result, error) { return f(ctx) }

// Description returns the name of the function f, without its import path.
func (f ActionFunc) Description() string {
	if f == nil {
		return "ActionFunc(nil)"
	}
	fn := runtime.FuncForPC(reflect.ValueOf(f).Pointer())
	if fn == nil {
		return "ActionFunc"
	}
	name := fn.Name()
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	return name
}

// funcAction is the Action returned by New.
type funcAction struct {
	description string
	fn          func(ctx context.Context) (reconcile.Result, error)
}

func (f *funcAction) Description() string { return f.description }

func (f *funcAction) Run(ctx context.Context) (reconcile.Result, error) { return f.fn(ctx) }

// New returns an Action with the given description that runs fn.
//
// New panics with a *BuildError if fn is nil.
func New(description string, fn func(ctx context.Context) (reconcile.Result, error)) Action {
	if fn == nil {
		panic(&BuildError{Combinator: "New", Argument: "fn", Reason: "must not be nil"})
	}
	return &funcAction{description: description, fn: fn}
}

// nopAction is the Action returned by Nop.
type nopAction struct{}

func (nopAction) Description() string { return "Nop" }

func (nopAction) Run(context.Context) (reconcile.Result, error) { return reconcile.Result{}, nil }

// Nop returns an Action that does nothing: it returns a zero result and a nil error,
// which is the neutral element of Sequence and of every join. Optimize removes Nop
// children from groups. Nop is a function rather than a variable so that it cannot be
// reassigned; every call returns an equal value.
func Nop() Action { return nopAction{} }

func isNop(a Action) bool {
	_, ok := a.(nopAction)
	return ok
}

// BuildError reports a combinator built with a bad argument: a nil action, a
// non-positive timeout or retry limit, a negative retry interval, a nil predicate or a
// nil hook. Workflows are assembled from constants in the program text, so such a
// mistake is a programming error: like regexp.MustCompile, the constructors panic with
// a *BuildError rather than return an error. Tests can recover the value and inspect it
// with errors.As.
type BuildError struct {
	// Combinator is the name of the constructor that refused its arguments, such as
	// "Timeout".
	Combinator string
	// Argument names the offending argument, such as "d" or "actions[2]".
	Argument string
	// Reason says what is wrong with it.
	Reason string
}

// Error returns a message such as "flow: Timeout: argument d: must be positive, got 0s".
func (e *BuildError) Error() string {
	return "flow: " + e.Combinator + ": argument " + e.Argument + ": " + e.Reason
}

func checkAction(combinator, argument string, a Action) {
	if a == nil {
		panic(&BuildError{Combinator: combinator, Argument: argument, Reason: "must not be nil"})
	}
}

func checkActions(combinator string, actions []Action) {
	for i, a := range actions {
		if a == nil {
			panic(&BuildError{Combinator: combinator, Argument: fmt.Sprintf("actions[%d]", i), Reason: "must not be nil"})
		}
	}
}
