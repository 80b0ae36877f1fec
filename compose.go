package bosun

import (
	"context"
	"fmt"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/flow"
)

// Composite is a Step made of other steps: Sequence, Join, OrderedJoin,
// ParallelJoin, If, Timeout, Retry and WithConditions make them. The engine
// looks through composites: every step of the tree, at any depth, gets the
// same metrics, panic recovery, Cleanup, Post, Observe, condition ownership
// and setup (Setuper) as a step listed in Reconciler.Steps, and names are
// unique across the whole tree. Cleanup, Post and Observe run on the steps
// of the tree in the order a depth-first walk meets them (Cleanup in
// reverse), whatever the composite does in Do.
type Composite[T client.Object] interface {
	Step[T]
	Named
	// Steps returns the steps the composite is made of, in order.
	Steps() []Step[T]
}

// Group is a composite that runs its steps' Do with one of the combinators
// of package flow. Sequence, Join, OrderedJoin and ParallelJoin make one.
type Group[T client.Object] struct {
	kind    string
	name    string
	steps   []Step[T]
	combine func(actions ...flow.Action) flow.Action
}

var _ Composite[client.Object] = (*Group[client.Object])(nil)

// Sequence runs the Do of steps one after the other, stopping at the first
// that interrupts, as flow.Sequential does. A Reconciler's Steps run this way.
func Sequence[T client.Object](steps ...Step[T]) *Group[T] {
	return newGroup("Sequence", flow.Sequential, steps)
}

// Join runs the Do of every step, one after the other, even when some
// interrupt, and joins their outcomes as flow.Join does: every error is
// reported, and the shortest requeue wins.
func Join[T client.Object](steps ...Step[T]) *Group[T] {
	return newGroup("Join", flow.Join, steps)
}

// OrderedJoin is Join where the outcome of an earlier step comes first, as
// flow.OrderedJoin does.
func OrderedJoin[T client.Object](steps ...Step[T]) *Group[T] {
	return newGroup("OrderedJoin", flow.OrderedJoin, steps)
}

// ParallelJoin runs the Do of every step concurrently and joins their
// outcomes as flow.ParallelJoin does. The steps share the Pass: they
// must not change the same parts of the object, and must guard what they
// share.
func ParallelJoin[T client.Object](steps ...Step[T]) *Group[T] {
	return newGroup("ParallelJoin", flow.ParallelJoin, steps)
}

func newGroup[T client.Object](kind string, combine func(...flow.Action) flow.Action, steps []Step[T]) *Group[T] {
	return &Group[T]{kind: kind, steps: steps, combine: combine}
}

// Named gives the group a name of its own, for logs, metrics and errors.
// Without it the group is named after its kind and its steps:
// "Join(a,b)".
func (g *Group[T]) Named(name string) *Group[T] {
	g.name = name
	return g
}

// Name returns the group's name.
func (g *Group[T]) Name() string {
	if g.name != "" {
		return g.name
	}
	return compositeName(g.kind, g.steps)
}

// Steps returns the group's steps.
func (g *Group[T]) Steps() []Step[T] { return g.steps }

// Do runs the steps' Do with the group's combinator.
func (g *Group[T]) Do(ctx context.Context, req *Pass[T]) (ctrl.Result, error) {
	actions := make([]flow.Action, len(g.steps))
	for i, s := range g.steps {
		actions[i] = req.Action(s)
	}
	return g.combine(actions...).Run(ctx)
}

// compositeName names a composite after its kind and its steps.
func compositeName[T client.Object](kind string, steps []Step[T]) string {
	names := make([]string, len(steps))
	for i, s := range steps {
		names[i] = StepName(s)
	}
	return kind + "(" + strings.Join(names, ",") + ")"
}

// Wrapper is a composite of one step that changes how, or whether, its Do
// runs, or what it owns: If, Timeout, Retry and WithConditions make one.
type Wrapper[T client.Object] struct {
	kind   string
	name   string
	step   Step[T]
	conds  []string
	setups []Setuper[T]
	err    error // a configuration error, reported by Validate
	do     func(ctx context.Context, req *Pass[T], inner flow.Action) (ctrl.Result, error)
}

var (
	_ Composite[client.Object] = (*Wrapper[client.Object])(nil)
	_ ConditionOwner           = (*Wrapper[client.Object])(nil)
	_ Setuper[client.Object]   = (*Wrapper[client.Object])(nil)
)

// If runs the Do of step only when pred, called with the request as the
// Do phase reaches it, returns true. The step's Cleanup, Post and Observe
// run whatever pred says.
func If[T client.Object](pred func(req *Pass[T]) bool, step Step[T]) *Wrapper[T] {
	w := &Wrapper[T]{kind: "If", step: step}
	if pred == nil {
		w.err = fmt.Errorf("If: the predicate is nil")
	}
	w.do = func(ctx context.Context, req *Pass[T], inner flow.Action) (ctrl.Result, error) {
		if !pred(req) {
			return flow.Continue()
		}
		return inner.Run(ctx)
	}
	return w
}

// Timeout gives the Do of step at most d, as flow.Timeout does: past the
// deadline its outcome is a *flow.TimeoutError. The step must honour its
// context.
func Timeout[T client.Object](d time.Duration, step Step[T]) *Wrapper[T] {
	w := &Wrapper[T]{kind: "Timeout", step: step}
	if d <= 0 {
		w.err = fmt.Errorf("Timeout: the duration must be positive, got %s", d)
	}
	w.do = func(ctx context.Context, _ *Pass[T], inner flow.Action) (ctrl.Result, error) {
		return flow.Timeout(d, inner).Run(ctx)
	}
	return w
}

// Retry runs the Do of step up to limit times in all, pausing interval
// between tries, as long as it fails, as flow.RetryWithInterval does.
func Retry[T client.Object](limit int, interval time.Duration, step Step[T]) *Wrapper[T] {
	w := &Wrapper[T]{kind: "Retry", step: step}
	switch {
	case limit <= 0:
		w.err = fmt.Errorf("Retry: the limit must be positive, got %d", limit)
	case interval < 0:
		w.err = fmt.Errorf("Retry: the interval must not be negative, got %s", interval)
	}
	w.do = func(ctx context.Context, _ *Pass[T], inner flow.Action) (ctrl.Result, error) {
		return flow.RetryWithInterval(limit, interval, inner).Run(ctx)
	}
	return w
}

// WithConditions makes step the owner of the condition types conds, as if
// it implemented ConditionOwner: the engine adds them as Unknown on the
// first visit and Ready summarises them. Use it to give conditions to a
// step that cannot declare them itself, such as a generated action or a
// StepFunc. Its Do is the step's.
func WithConditions[T client.Object](step Step[T], conds ...string) *Wrapper[T] {
	return &Wrapper[T]{kind: "WithConditions", step: step, conds: conds}
}

// WithSetup gives step the setup of setups: Builder.Complete calls each,
// as it calls a step that is a Setuper, so that what step reads or makes
// is watched without a line of wiring elsewhere. Its Do is the step's.
//
//	bosun.WithSetup(render, watch.Referenced(&corev1.Secret{}, "spec.themeSecret", themeOf))
func WithSetup[T client.Object](step Step[T], setups ...Setuper[T]) *Wrapper[T] {
	return &Wrapper[T]{kind: "WithSetup", step: step, setups: setups}
}

// SetupWithBuilder calls the setups WithSetup gave the wrapper.
func (w *Wrapper[T]) SetupWithBuilder(b *Builder[T]) error {
	for _, s := range w.setups {
		if s == nil {
			continue
		}
		if err := s.SetupWithBuilder(b); err != nil {
			return err
		}
	}
	return nil
}

// Named gives the wrapper a name of its own. Without it the wrapper is
// named after its kind and its step: "If(RunNextJob)".
func (w *Wrapper[T]) Named(name string) *Wrapper[T] {
	w.name = name
	return w
}

// Name returns the wrapper's name.
func (w *Wrapper[T]) Name() string {
	if w.name != "" {
		return w.name
	}
	return compositeName(w.kind, []Step[T]{w.step})
}

// Steps returns the wrapped step.
func (w *Wrapper[T]) Steps() []Step[T] { return []Step[T]{w.step} }

// Conditions returns the condition types WithConditions gave the wrapper.
func (w *Wrapper[T]) Conditions() []string { return w.conds }

// Do runs the wrapped step's Do as the wrapper says.
func (w *Wrapper[T]) Do(ctx context.Context, req *Pass[T]) (ctrl.Result, error) {
	inner := req.Action(w.step)
	if w.do == nil {
		return inner.Run(ctx)
	}
	return w.do(ctx, req, inner)
}

// validate returns the configuration error of the wrapper, if any.
func (w *Wrapper[T]) validate() error { return w.err }
