package flow

import (
	"context"
	"fmt"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Hook observes actions as they run: PreRun is called before an action runs and
// PostRun after it returned. Hooks are installed with WithHooks and apply to the action
// given there and to every action beneath it, combinators included.
type Hook interface {
	// PreRun is called before a runs. The context it returns is the one a runs with
	// (and the one PostRun gets); return ctx itself to change nothing. A nil return is
	// treated as ctx.
	PreRun(ctx context.Context, a Action) context.Context
	// PostRun is called after a returned res and err. It is not called when a panics.
	PostRun(ctx context.Context, a Action, res reconcile.Result, err error)
}

// HookFuncs adapts a pair of functions to Hook. A nil field does nothing.
type HookFuncs struct {
	// Pre is called as PreRun.
	Pre func(ctx context.Context, a Action) context.Context
	// Post is called as PostRun.
	Post func(ctx context.Context, a Action, res reconcile.Result, err error)
}

var _ Hook = HookFuncs{}

// PreRun calls h.Pre, if it is set, and returns ctx otherwise.
func (h HookFuncs) PreRun(ctx context.Context, a Action) context.Context {
	if h.Pre == nil {
		return ctx
	}
	return h.Pre(ctx, a)
}

// PostRun calls h.Post, if it is set.
func (h HookFuncs) PostRun(ctx context.Context, a Action, res reconcile.Result, err error) {
	if h.Post != nil {
		h.Post(ctx, a, res, err)
	}
}

type nopHook struct{}

func (nopHook) PreRun(ctx context.Context, _ Action) context.Context { return ctx }

func (nopHook) PostRun(context.Context, Action, reconcile.Result, error) {}

// NopHook returns a Hook that does nothing.
func NopHook() Hook { return nopHook{} }

// hookSet is the list of hooks in effect, carried in the context. Hooks installed by
// outer WithHooks come first.
type hookSet struct {
	hooks []Hook
}

type hooksKey struct{}

func hooksFrom(ctx context.Context) *hookSet {
	hs, _ := ctx.Value(hooksKey{}).(*hookSet)
	return hs
}

// invoke runs a under the hooks hs (nil for none). Every combinator runs its children
// through it. A WithHooks action applies the hooks itself, so it is run directly.
func invoke(ctx context.Context, hs *hookSet, a Action) (reconcile.Result, error) {
	if hs == nil {
		return a.Run(ctx)
	}
	if _, ok := a.(*hookedAction); ok {
		return a.Run(ctx)
	}
	return hs.around(ctx, 0, a)
}

// around calls PreRun of hooks i, i+1, ..., runs a, then calls PostRun in reverse.
func (hs *hookSet) around(ctx context.Context, i int, a Action) (reconcile.Result, error) {
	if i == len(hs.hooks) {
		return a.Run(ctx)
	}
	h := hs.hooks[i]
	hctx := h.PreRun(ctx, a)
	if hctx == nil {
		hctx = ctx
	}
	res, err := hs.around(hctx, i+1, a)
	h.PostRun(hctx, a, res, err)
	return res, err
}

type hookedAction struct {
	base
	a   Action
	set *hookSet
}

var _ composite = (*hookedAction)(nil)

// WithHooks returns an Action that runs a with hooks around it and around every action
// beneath it: for each action, the PreRun methods are called in the order given, then
// the action runs, then the PostRun methods are called in reverse order. Hooks
// installed by an enclosing WithHooks apply too, outside these. The hooks travel in
// the context, so they also reach workflows that an action starts with its context.
// The returned Action is transparent: its Description is a's, Describe, Mermaid and
// DOT render a, and hooks do not see it as an action of its own. Workflows without
// hooks pay nothing for this feature.
//
// WithHooks panics with a *BuildError if a or a hook is nil.
func WithHooks(a Action, hooks ...Hook) Action {
	checkAction("WithHooks", "a", a)
	for i, h := range hooks {
		if h == nil {
			panic(&BuildError{Combinator: "WithHooks", Argument: fmt.Sprintf("hooks[%d]", i), Reason: "must not be nil"})
		}
	}
	return &hookedAction{base: base{shared: hasShared(a)}, a: a, set: &hookSet{hooks: slices.Clone(hooks)}}
}

func (h *hookedAction) Description() string { return h.a.Description() }

func (h *hookedAction) Run(ctx context.Context) (reconcile.Result, error) {
	if h.shared {
		ctx = ensureRunScope(ctx)
	}
	hs := h.set
	if outer := hooksFrom(ctx); outer != nil {
		hs = &hookSet{hooks: slices.Concat(outer.hooks, h.set.hooks)}
	}
	ctx = context.WithValue(ctx, hooksKey{}, hs)
	return invoke(ctx, hs, h.a)
}
