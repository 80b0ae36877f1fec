package flow

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ErrPanic is wrapped by the *PanicError that ParallelJoin returns for a child that
// panicked.
var ErrPanic = errors.New("flow: action panicked")

// PanicError reports an action that panicked inside a ParallelJoin (or a Shared action
// whose run panicked, as seen by the other uses). errors.Is(err, ErrPanic) is true for
// it; when the panic value is an error, errors.Is and errors.As also reach that error.
type PanicError struct {
	// Action is the description of the action that panicked.
	Action string
	// Value is the value passed to panic.
	Value any
	// Stack is the stack of the panicking goroutine, as debug.Stack formats it.
	Stack []byte
}

// Error returns a message naming the action and the panic value; the stack is left to
// the Stack field.
func (e *PanicError) Error() string {
	return fmt.Sprintf("flow: action %q panicked: %v", e.Action, e.Value)
}

// Unwrap returns ErrPanic, and the panic value too when it is an error.
func (e *PanicError) Unwrap() []error {
	if err, ok := e.Value.(error); ok {
		return []error{ErrPanic, err}
	}
	return []error{ErrPanic}
}

// newPanicError builds the error for a recovered panic value v. A value that is
// already a *PanicError (re-raised by Shared) is kept as it is.
func newPanicError(a Action, v any) *PanicError {
	if pe, ok := v.(*PanicError); ok {
		return pe
	}
	return &PanicError{Action: a.Description(), Value: v, Stack: debug.Stack()}
}

// kind tells the combinators of the group type apart.
type kind uint8

const (
	kindSequence kind = iota
	kindJoin
	kindOrderedJoin
	kindParallelJoin
)

func (k kind) String() string {
	switch k {
	case kindSequence:
		return "Sequence"
	case kindJoin:
		return "Join"
	case kindOrderedJoin:
		return "OrderedJoin"
	default:
		return "ParallelJoin"
	}
}

// base holds what every combinator of this package shares: whether a Shared action is
// at or beneath it (known at build time), and its description, rendered on first use.
type base struct {
	shared bool
	desc   atomic.Pointer[string]
}

// description returns the cached rendering of self, rendering it on first use.
func (b *base) description(self Action) string {
	if p := b.desc.Load(); p != nil {
		return *p
	}
	s := Describe(self)
	b.desc.Store(&s)
	return s
}

// composite is implemented by every combinator of this package.
type composite interface {
	Action
	containsShared() bool
}

func (b *base) containsShared() bool { return b.shared }

// hasShared reports whether a is a Shared action or a combinator with one beneath it.
func hasShared(actions ...Action) bool {
	for _, a := range actions {
		if c, ok := a.(composite); ok && c.containsShared() {
			return true
		}
	}
	return false
}

// group is Sequence, Join, OrderedJoin and ParallelJoin.
type group struct {
	base
	kind    kind
	actions []Action
}

var _ composite = (*group)(nil)

func newGroup(k kind, name string, actions []Action) *group {
	checkActions(name, actions)
	actions = slices.Clone(actions)
	return &group{base: base{shared: hasShared(actions...)}, kind: k, actions: actions}
}

// Sequence returns an Action that runs actions one after the other and stops at the
// first whose outcome interrupts the workflow (see Interrupts): it needs a requeue,
// returns an error or exits with ErrExit. That outcome is returned as it is. When no
// action interrupts, the outcome is the join of all outcomes (a zero result and a nil
// error, unless some action set a Priority). The context is checked before each
// action; once it is done, Sequence stops and returns ctx.Err().
//
// Sequence panics with a *BuildError if an action is nil.
func Sequence(actions ...Action) Action { return newGroup(kindSequence, "Sequence", actions) }

// Join returns an Action that runs all actions and joins their outcomes by the rules of
// JoinResults. Join runs them one after the other in the given order today, but
// callers must not rely on any order: use OrderedJoin when the order matters, and
// ParallelJoin to run them concurrently. The context is checked before each action;
// once it is done, the remaining actions are skipped and ctx.Err() is joined into the
// outcome.
//
// Join panics with a *BuildError if an action is nil.
func Join(actions ...Action) Action { return newGroup(kindJoin, "Join", actions) }

// OrderedJoin is Join with the order guaranteed: actions run one after the other, in
// the given order.
//
// OrderedJoin panics with a *BuildError if an action is nil.
func OrderedJoin(actions ...Action) Action {
	return newGroup(kindOrderedJoin, "OrderedJoin", actions)
}

// ParallelJoin returns an Action that runs every action in a goroutine of its own (the
// first one in the calling goroutine), waits for all of them and joins their outcomes
// by the rules of JoinResults. A child that panics does not take the process down: its
// outcome becomes a *PanicError (wrapping ErrPanic) that carries the panic value and
// stack, and the other children still run to the end. If the context is already done
// when ParallelJoin starts, no child runs and the outcome is ctx.Err(); otherwise the
// children see the context and must honour it themselves.
//
// ParallelJoin panics with a *BuildError if an action is nil.
func ParallelJoin(actions ...Action) Action {
	return newGroup(kindParallelJoin, "ParallelJoin", actions)
}

func (g *group) Description() string { return g.description(g) }

func (g *group) Run(ctx context.Context) (reconcile.Result, error) {
	if g.shared {
		ctx = ensureRunScope(ctx)
	}
	switch g.kind {
	case kindSequence:
		return g.runSequential(ctx)
	case kindParallelJoin:
		return g.runParallel(ctx)
	default:
		return g.runJoin(ctx)
	}
}

func (g *group) runSequential(ctx context.Context) (reconcile.Result, error) {
	hs := hooksFrom(ctx)
	var j joiner
	for _, a := range g.actions {
		if err := ctx.Err(); err != nil {
			return reconcile.Result{}, err
		}
		res, err := invoke(ctx, hs, a)
		if Interrupts(res, err) {
			return res, err
		}
		j.add(res, err)
	}
	return j.result()
}

func (g *group) runJoin(ctx context.Context) (reconcile.Result, error) {
	hs := hooksFrom(ctx)
	var j joiner
	for _, a := range g.actions {
		if err := ctx.Err(); err != nil {
			j.add(reconcile.Result{}, err)
			break
		}
		j.add(invoke(ctx, hs, a))
	}
	return j.result()
}

func (g *group) runParallel(ctx context.Context) (reconcile.Result, error) {
	if err := ctx.Err(); err != nil {
		return reconcile.Result{}, err
	}
	n := len(g.actions)
	if n == 0 {
		return reconcile.Result{}, nil
	}
	hs := hooksFrom(ctx)
	outcomes := make([]Outcome, n)
	var wg sync.WaitGroup
	for i := 1; i < n; i++ {
		wg.Go(func() { outcomes[i] = invokeRecover(ctx, hs, g.actions[i]) })
	}
	outcomes[0] = invokeRecover(ctx, hs, g.actions[0])
	wg.Wait()
	return JoinResults(outcomes...)
}

// invokeRecover runs a like invoke and turns a panic into a *PanicError.
func invokeRecover(ctx context.Context, hs *hookSet, a Action) (o Outcome) {
	defer func() {
		if v := recover(); v != nil {
			o = Outcome{Err: newPanicError(a, v)}
		}
	}()
	res, err := invoke(ctx, hs, a)
	return Outcome{Result: res, Err: err}
}
