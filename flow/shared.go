package flow

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ErrSharedCycle is returned when a Shared action is used, within the same run, from
// inside its own run: waiting for itself would never end.
var ErrSharedCycle = errors.New("flow: shared action used inside itself")

type sharedAction struct {
	base
	a Action
}

var _ composite = (*sharedAction)(nil)

// Shared returns an Action that runs a at most once per workflow run: every use of the
// returned value in the same run sees the outcome of that one run, also when the uses
// run concurrently under ParallelJoin (later uses wait for the first to finish, or for
// their context to be done). Use it for work that several branches need, such as
// loading an object.
//
// A workflow run is scoped by the context. Run(ctx, a) and WithRunScope start one
// explicitly. Without them, the outermost combinator of this package that has a Shared
// beneath it starts one when it runs with a context that has none, so calling Run on a
// workflow twice makes two runs; a workflow started from inside another one, with its
// context, takes part in the outer run. Combinators know when they are built whether a
// Shared is beneath them, so workflows without one pay nothing for this. A Shared run
// outside any scope simply runs a.
//
// The first use runs a with its own context (its deadline and hooks). If a panics, the
// first use panics again with a *PanicError holding the original value and stack, and
// the other uses get that *PanicError as their error. Put Retry and
// Timeout inside the Shared, not around it: the second try of Retry(3, Shared(a)) sees
// the first outcome again.
//
// Shared panics with a *BuildError if a is nil.
func Shared(a Action) Action {
	checkAction("Shared", "a", a)
	return &sharedAction{base: base{shared: true}, a: a}
}

func (s *sharedAction) Description() string { return s.description(s) }

func (s *sharedAction) Run(ctx context.Context) (reconcile.Result, error) {
	scope, _ := ctx.Value(runScopeKey{}).(*runScope)
	if scope == nil {
		return invoke(ctx, hooksFrom(ctx), s.a)
	}
	c, started := scope.call(s)
	if started {
		return s.wait(ctx, c)
	}
	return s.first(ctx, c)
}

// first runs the action for the first use and publishes its outcome.
func (s *sharedAction) first(ctx context.Context, c *sharedCall) (res reconcile.Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			pe := newPanicError(s.a, v)
			c.err = pe
			close(c.done)
			panic(pe)
		}
	}()
	ctx = &sharedRunning{Context: ctx, s: s, parent: runningFrom(ctx)}
	c.res, c.err = invoke(ctx, hooksFrom(ctx), s.a)
	close(c.done)
	return c.res, c.err
}

// wait returns the outcome of the first use once it is there.
func (s *sharedAction) wait(ctx context.Context, c *sharedCall) (reconcile.Result, error) {
	select {
	case <-c.done:
		return c.res, c.err
	default:
	}
	for r := runningFrom(ctx); r != nil; r = r.parent {
		if r.s == s {
			return reconcile.Result{}, fmt.Errorf("flow: %s: %w", s.Description(), ErrSharedCycle)
		}
	}
	select {
	case <-c.done:
		return c.res, c.err
	case <-ctx.Done():
		return reconcile.Result{}, ctx.Err()
	}
}

// sharedCall is the one run of a Shared action within a run scope.
type sharedCall struct {
	done chan struct{}
	res  reconcile.Result
	err  error
}

// runScope records the Shared actions run in one workflow run. It is the context
// value that carries it, so starting a run costs one allocation.
type runScope struct {
	context.Context
	mu      sync.Mutex
	entries []sharedEntry
	inline  [4]sharedEntry // backing store for the first entries
}

type sharedEntry struct {
	s *sharedAction
	c *sharedCall
}

type runScopeKey struct{}

// Value returns the scope itself for runScopeKey and asks the parent otherwise.
func (r *runScope) Value(key any) any {
	if _, ok := key.(runScopeKey); ok {
		return r
	}
	return r.Context.Value(key)
}

// call returns the call of s in this run and whether an earlier use started it; if
// none did, it records a new call that the caller must complete.
func (r *runScope) call(s *sharedAction) (c *sharedCall, started bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.entries {
		if e.s == s {
			return e.c, true
		}
	}
	if r.entries == nil {
		r.entries = r.inline[:0]
	}
	c = &sharedCall{done: make(chan struct{})}
	r.entries = append(r.entries, sharedEntry{s: s, c: c})
	return c, false
}

// sharedRunning is the chain of Shared actions whose first use is running, innermost
// first; it lets a use detect that it waits for itself. It is the context value that
// carries it.
type sharedRunning struct {
	context.Context
	s      *sharedAction
	parent *sharedRunning
}

type sharedRunningKey struct{}

// Value returns the frame itself for sharedRunningKey and asks the parent otherwise.
func (r *sharedRunning) Value(key any) any {
	if _, ok := key.(sharedRunningKey); ok {
		return r
	}
	return r.Context.Value(key)
}

func runningFrom(ctx context.Context) *sharedRunning {
	r, _ := ctx.Value(sharedRunningKey{}).(*sharedRunning)
	return r
}

// ensureRunScope returns ctx if it has a run scope, and a child of ctx with a new one
// otherwise.
func ensureRunScope(ctx context.Context) context.Context {
	if ctx.Value(runScopeKey{}) != nil {
		return ctx
	}
	return WithRunScope(ctx)
}

// WithRunScope returns a child of ctx that starts a new workflow run: every Shared
// action run with it, or with a context derived from it, runs at most once. Use it to
// make several workflows that are run one after the other share their Shared actions,
// for example all the steps of one reconcile.
func WithRunScope(ctx context.Context) context.Context {
	return &runScope{Context: ctx}
}

// Run runs a as one workflow run: it starts a new run scope (see Shared), applies the
// hooks the context carries, and returns a's outcome. Run is the way to start a
// workflow whose Shared actions must run once even when a is not a combinator of this
// package.
func Run(ctx context.Context, a Action) (reconcile.Result, error) {
	ctx = WithRunScope(ctx)
	return invoke(ctx, hooksFrom(ctx), a)
}
