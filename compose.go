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
// ParallelJoin, If, Timeout, Retry, WithConditions and WithSetup make one
// (a *Group), and a user's type may be one too. The engine
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

// Group is the composite the functions of this file make. Sequence, Join,
// OrderedJoin and ParallelJoin run the Do of several steps with the
// combinator of package flow of the same name; If, Timeout and Retry
// change how, or whether, the Do of one step runs; WithConditions and
// WithSetup give one step conditions or setup it cannot declare itself.
// These are the words of package flow, over steps in place of actions.
type Group[T client.Object] struct {
	kind    string
	name    string
	steps   []Step[T]
	combine func(actions ...flow.Action) flow.Action
	do      func(ctx context.Context, req *Pass[T], inner flow.Action) (ctrl.Result, error)
	conds   []string
	setups  []Setuper[T]
	err     error // a configuration error, reported by Validate
}

var (
	_ Composite[client.Object] = (*Group[client.Object])(nil)
	_ ConditionOwner           = (*Group[client.Object])(nil)
	_ Setuper[client.Object]   = (*Group[client.Object])(nil)
)

// Sequence runs the Do of steps one after the other, stopping at the first
// that interrupts, as flow.Sequence does. A Reconciler's Steps run this way.
func Sequence[T client.Object](steps ...Step[T]) *Group[T] {
	return newGroup("Sequence", flow.Sequence, steps)
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

// If runs the Do of step only when pred, called with the request as the
// Do phase reaches it, returns true, as flow.If does with a condition
// known when the workflow is built. The step's Cleanup, Post and Observe
// run whatever pred says.
func If[T client.Object](pred func(req *Pass[T]) bool, step Step[T]) *Group[T] {
	g := &Group[T]{kind: "If", steps: []Step[T]{step}}
	if pred == nil {
		g.err = fmt.Errorf("If: the predicate is nil")
	}
	g.do = func(ctx context.Context, req *Pass[T], inner flow.Action) (ctrl.Result, error) {
		if !pred(req) {
			return flow.Continue()
		}
		return inner.Run(ctx)
	}
	return g
}

// Timeout gives the Do of step at most d, as flow.Timeout does: past the
// deadline its outcome is a *flow.TimeoutError. The step must honour its
// context.
func Timeout[T client.Object](d time.Duration, step Step[T]) *Group[T] {
	g := &Group[T]{kind: "Timeout", steps: []Step[T]{step}}
	if d <= 0 {
		g.err = fmt.Errorf("Timeout: the duration must be positive, got %s", d)
	}
	g.do = func(ctx context.Context, _ *Pass[T], inner flow.Action) (ctrl.Result, error) {
		return flow.Timeout(d, inner).Run(ctx)
	}
	return g
}

// Retry runs the Do of step up to limit times in all, pausing interval
// between tries, as long as it fails, as flow.Retry does.
func Retry[T client.Object](limit int, interval time.Duration, step Step[T]) *Group[T] {
	g := &Group[T]{kind: "Retry", steps: []Step[T]{step}}
	switch {
	case limit <= 0:
		g.err = fmt.Errorf("Retry: the limit must be positive, got %d", limit)
	case interval < 0:
		g.err = fmt.Errorf("Retry: the interval must not be negative, got %s", interval)
	}
	g.do = func(ctx context.Context, _ *Pass[T], inner flow.Action) (ctrl.Result, error) {
		return flow.Retry(limit, interval, inner).Run(ctx)
	}
	return g
}

// WithConditions makes step the owner of the condition types conds, as if
// it implemented ConditionOwner: the engine adds them as Unknown on the
// first visit and Ready summarises them. Use it to give conditions to a
// step that cannot declare them itself, such as a generated action or a
// StepFunc. Its Do is the step's.
func WithConditions[T client.Object](step Step[T], conds ...string) *Group[T] {
	return &Group[T]{kind: "WithConditions", steps: []Step[T]{step}, conds: conds}
}

// WithSetup gives step the setup of setups: Builder.Complete calls each,
// as it calls a step that is a Setuper, so that what step reads or makes
// is watched without a line of wiring elsewhere. Its Do is the step's.
//
//	bosun.WithSetup(render, watch.Referenced(&corev1.Secret{}, "spec.themeSecret", themeOf))
func WithSetup[T client.Object](step Step[T], setups ...Setuper[T]) *Group[T] {
	return &Group[T]{kind: "WithSetup", steps: []Step[T]{step}, setups: setups}
}

// Named gives the group a name of its own, for logs, metrics and errors.
// Without it the group is named after its kind and its steps:
// "Join(a,b)", "If(RunNextJob)".
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

// Conditions returns the condition types WithConditions gave the group.
func (g *Group[T]) Conditions() []string { return g.conds }

// SetupWithBuilder calls the setups WithSetup gave the group.
func (g *Group[T]) SetupWithBuilder(b *Builder[T]) error {
	for _, s := range g.setups {
		if s == nil {
			continue
		}
		if err := s.SetupWithBuilder(b); err != nil {
			return err
		}
	}
	return nil
}

// Do runs the steps' Do as the group says.
func (g *Group[T]) Do(ctx context.Context, req *Pass[T]) (ctrl.Result, error) {
	if g.combine != nil {
		actions := make([]flow.Action, len(g.steps))
		for i, s := range g.steps {
			actions[i] = req.Action(s)
		}
		return g.combine(actions...).Run(ctx)
	}
	inner := req.Action(g.steps[0])
	if g.do == nil {
		return inner.Run(ctx)
	}
	return g.do(ctx, req, inner)
}

// validate returns the configuration error of the group, if any.
func (g *Group[T]) validate() error { return g.err }

// compositeName names a composite after its kind and its steps.
func compositeName[T client.Object](kind string, steps []Step[T]) string {
	names := make([]string, len(steps))
	for i, s := range steps {
		names[i] = StepName(s)
	}
	return kind + "(" + strings.Join(names, ",") + ")"
}

// maxDepth bounds how deep composites may nest, so that a composite that
// contains itself is refused instead of walked forever.
const maxDepth = 64
