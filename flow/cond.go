package flow

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

type ifAction struct {
	base
	cond    bool
	then    Action
	els     Action
	hasElse bool
}

var _ composite = (*ifAction)(nil)

// If returns an Action that runs a when cond is true and does nothing (Continue)
// otherwise. cond is evaluated when the workflow is built; use When for a condition
// evaluated when the workflow runs.
//
// If panics with a *BuildError if a is nil.
func If(cond bool, a Action) Action {
	checkAction("If", "a", a)
	return &ifAction{base: base{shared: hasShared(a)}, cond: cond, then: a}
}

// IfElse returns an Action that runs a when cond is true and b otherwise. cond is
// evaluated when the workflow is built.
//
// IfElse panics with a *BuildError if a or b is nil.
func IfElse(cond bool, a, b Action) Action {
	checkAction("IfElse", "a", a)
	checkAction("IfElse", "b", b)
	return &ifAction{base: base{shared: hasShared(a, b)}, cond: cond, then: a, els: b, hasElse: true}
}

func (i *ifAction) Description() string { return i.description(i) }

func (i *ifAction) Run(ctx context.Context) (reconcile.Result, error) {
	var a Action
	switch {
	case i.cond:
		a = i.then
	case i.hasElse:
		a = i.els
	default:
		return Continue()
	}
	if i.shared {
		ctx = ensureRunScope(ctx)
	}
	return invoke(ctx, hooksFrom(ctx), a)
}

type whenAction struct {
	base
	pred func(context.Context) bool
	a    Action
}

var _ composite = (*whenAction)(nil)

// When returns an Action that calls pred when it runs and runs a only if pred returns
// true; otherwise it does nothing (Continue). pred sees the workflow's context; it
// should be quick and free of side effects, and read state that earlier actions may
// have changed.
//
// When panics with a *BuildError if pred or a is nil.
func When(pred func(ctx context.Context) bool, a Action) Action {
	if pred == nil {
		panic(&BuildError{Combinator: "When", Argument: "pred", Reason: "must not be nil"})
	}
	checkAction("When", "a", a)
	return &whenAction{base: base{shared: hasShared(a)}, pred: pred, a: a}
}

func (w *whenAction) Description() string { return w.description(w) }

func (w *whenAction) Run(ctx context.Context) (reconcile.Result, error) {
	if w.shared {
		ctx = ensureRunScope(ctx)
	}
	if !w.pred(ctx) {
		return Continue()
	}
	return invoke(ctx, hooksFrom(ctx), w.a)
}
