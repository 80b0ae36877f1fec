package bosun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
//
// A composite's Do runs each of its steps' Do with Pass.Run, which
// records it and recovers a panic in it as the engine does for a step of
// Reconciler.Steps, and combines their outcomes as it likes:
//
//	func (b bundle) Do(ctx context.Context, req *bosun.Pass[*v1.Site]) (ctrl.Result, error) {
//		for _, s := range b.steps {
//			if res, err := req.Run(ctx, s); err != nil || res.RequeueAfter > 0 {
//				return res, err
//			}
//		}
//		return ctrl.Result{}, nil
//	}
type Composite[T client.Object] interface {
	Step[T]
	Named
	// Steps returns the steps the composite is made of, in order.
	Steps() []Step[T]
}

// Group is the composite the functions of this file make. Sequence, Join,
// OrderedJoin and ParallelJoin run the Do of several steps and combine
// their outcomes; If, Timeout and Retry change how, or whether, the Do of
// one step runs; WithConditions and WithSetup give one step conditions or
// setup it cannot declare itself. Each step's Do runs through Pass.Run, so
// it is recorded and a panic in it is recovered as it is for a step of
// Reconciler.Steps.
type Group[T client.Object] struct {
	kind   string
	name   string
	steps  []Step[T]
	do     func(ctx context.Context, req *Pass[T]) (ctrl.Result, error)
	conds  []string
	setups []Setuper[T]
	err    error // a configuration error, reported by Validate
}

var (
	_ Composite[client.Object] = (*Group[client.Object])(nil)
	_ ConditionOwner           = (*Group[client.Object])(nil)
	_ Setuper[client.Object]   = (*Group[client.Object])(nil)
)

// Sequence runs the Do of steps one after the other and stops at the
// first that interrupts: that returns an error (ErrStop included) or asks
// for a requeue. Its outcome is that step's, as the step returned it; when
// none interrupts, it is the join of all (see Join). Once ctx is done, no
// further step runs and the outcome is ctx's error. A Reconciler's Steps
// run this way.
func Sequence[T client.Object](steps ...Step[T]) *Group[T] {
	g := &Group[T]{kind: "Sequence", steps: steps}
	g.do = func(ctx context.Context, req *Pass[T]) (ctrl.Result, error) {
		return sequence(ctx, len(g.steps), func(ctx context.Context, i int) (ctrl.Result, error) {
			return req.Run(ctx, g.steps[i])
		})
	}
	return g
}

// Join runs the Do of every step, even when some interrupt, and joins
// their outcomes: every error is kept (in one errors.Join), ErrStop only
// when no step failed, and the shortest requeue wins. The steps run one
// after the other today; use OrderedJoin when their order matters. Once
// ctx is done, the steps left are skipped and ctx's error is joined in.
func Join[T client.Object](steps ...Step[T]) *Group[T] {
	return newJoin("Join", steps)
}

// OrderedJoin is Join with the order kept: the steps run one after the
// other, as given, and their errors are joined in that order.
func OrderedJoin[T client.Object](steps ...Step[T]) *Group[T] {
	return newJoin("OrderedJoin", steps)
}

func newJoin[T client.Object](kind string, steps []Step[T]) *Group[T] {
	g := &Group[T]{kind: kind, steps: steps}
	g.do = func(ctx context.Context, req *Pass[T]) (ctrl.Result, error) {
		var j joiner
		for _, s := range g.steps {
			if err := ctx.Err(); err != nil {
				j.add(ctrl.Result{}, err)
				break
			}
			j.add(req.Run(ctx, s))
		}
		return j.result()
	}
	return g
}

// ParallelJoin runs the Do of every step concurrently (the first in the
// calling goroutine), waits for all and joins their outcomes as Join
// does. When ctx is done already, no step runs and the outcome is ctx's
// error. The steps share the Pass: they must not change the same parts of
// the object, and must guard what they share. The conditions are one list
// in the object's status: steps in a ParallelJoin change theirs only
// through Pass.UpdateConditions, which holds the pass's lock on them, as
// the steps of packages ref and children do. Pass.Commit and Pass.Reload,
// which replace the object, fail in them with a terminal error. A
// managed.Step reads and writes the object's annotations as it goes, and
// commits them, so it must not run in one; use Join for it.
func ParallelJoin[T client.Object](steps ...Step[T]) *Group[T] {
	g := &Group[T]{kind: "ParallelJoin", steps: steps}
	g.do = func(ctx context.Context, req *Pass[T]) (ctrl.Result, error) {
		if err := ctx.Err(); err != nil {
			return ctrl.Result{}, err
		}
		if len(g.steps) == 0 {
			return ctrl.Result{}, nil
		}
		req.parallel.Add(1)
		defer req.parallel.Add(-1)
		outcomes := make([]outcome, len(g.steps))
		var wg sync.WaitGroup
		for i := 1; i < len(g.steps); i++ {
			wg.Go(func() {
				res, err := req.Run(ctx, g.steps[i])
				outcomes[i] = outcome{res: res, err: err}
			})
		}
		res, err := req.Run(ctx, g.steps[0])
		outcomes[0] = outcome{res: res, err: err}
		wg.Wait()
		return joinOutcomes(outcomes...)
	}
	return g
}

// sequence runs n steps with run, in order, and stops at the first whose
// outcome interrupts, which it returns; else it returns the join of all.
// Once ctx is done it runs no further step and returns ctx's error.
func sequence(ctx context.Context, n int, run func(ctx context.Context, i int) (ctrl.Result, error)) (ctrl.Result, error) {
	var j joiner
	for i := range n {
		if err := ctx.Err(); err != nil {
			return ctrl.Result{}, err
		}
		res, err := run(ctx, i)
		if interrupts(res, err) {
			return res, err
		}
		j.add(res, err)
	}
	return j.result()
}

// If runs the Do of step only when pred, called with the request as the
// Do phase reaches it, returns true; otherwise its outcome is a zero
// result and a nil error. The step's Cleanup, Post and Observe run
// whatever pred says.
func If[T client.Object](pred func(req *Pass[T]) bool, step Step[T]) *Group[T] {
	g := &Group[T]{kind: "If", steps: []Step[T]{step}}
	if pred == nil {
		g.err = fmt.Errorf("If: the predicate is nil")
	}
	g.do = func(ctx context.Context, req *Pass[T]) (ctrl.Result, error) {
		if !pred(req) {
			return ctrl.Result{}, nil
		}
		return req.Run(ctx, step)
	}
	return g
}

// Timeout gives the Do of step at most d: it runs with a context that
// ends d from now (or at the parent's deadline, if sooner). Go cannot stop
// a goroutine, so the step must honour its context. When the step returns
// after the deadline Timeout set, and the parent context is not done, the
// outcome is an error that names the step and d and wraps
// context.DeadlineExceeded and the step's own error, with the step's
// result; when the parent context ended first, the step's outcome is kept.
func Timeout[T client.Object](d time.Duration, step Step[T]) *Group[T] {
	g := &Group[T]{kind: "Timeout", steps: []Step[T]{step}}
	if d <= 0 {
		g.err = fmt.Errorf("Timeout: the duration must be positive, got %s", d)
	}
	g.do = func(ctx context.Context, req *Pass[T]) (ctrl.Result, error) {
		tctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		res, err := req.Run(tctx, step)
		if tctx.Err() == nil || ctx.Err() != nil {
			return res, err
		}
		return res, timedOut(StepName(step), d, withoutStop(err))
	}
	return g
}

// timedOut is the error of a step called name that overran d, with own,
// its own error (nil for none).
func timedOut(name string, d time.Duration, own error) error {
	if own == nil || errors.Is(own, context.DeadlineExceeded) {
		if own == nil {
			own = context.DeadlineExceeded
		}
		return fmt.Errorf("step %q timed out after %s: %w", name, d, own)
	}
	return fmt.Errorf("step %q timed out after %s: %w: %w", name, d, context.DeadlineExceeded, own)
}

// Retry runs the Do of step up to limit times in all, pausing interval
// between tries (none for zero), as long as it fails. It does not try
// again after ErrStop, a terminal error (reconcile.TerminalError) or
// context.Canceled, nor once ctx is done; a requeue without an error is a
// success. Its outcome is the last try's; when ctx ends during a pause,
// joined with ctx's error.
func Retry[T client.Object](limit int, interval time.Duration, step Step[T]) *Group[T] {
	g := &Group[T]{kind: "Retry", steps: []Step[T]{step}}
	switch {
	case limit <= 0:
		g.err = fmt.Errorf("Retry: the limit must be positive, got %d", limit)
	case interval < 0:
		g.err = fmt.Errorf("Retry: the interval must not be negative, got %s", interval)
	}
	g.do = func(ctx context.Context, req *Pass[T]) (ctrl.Result, error) {
		return retry(ctx, limit, interval, func(ctx context.Context) (ctrl.Result, error) { return req.Run(ctx, step) })
	}
	return g
}

// retry calls try up to limit times, pausing interval between calls, as
// long as its outcome is retryable; see Retry.
//
// apisize:own-wait: a pause ends early when ctx ends, and the outcome is
// then the last try's, joined with ctx's error; k8s.io/apimachinery's wait
// loops poll a condition and return their own error instead.
func retry(ctx context.Context, limit int, interval time.Duration, try func(ctx context.Context) (ctrl.Result, error)) (ctrl.Result, error) {
	for n := 1; ; n++ {
		res, err := try(ctx)
		if n >= limit || !retryable(ctx, err) {
			return res, err
		}
		if interval > 0 {
			t := time.NewTimer(interval)
			select {
			case <-ctx.Done():
				t.Stop()
			case <-t.C:
			}
		}
		if cerr := ctx.Err(); cerr != nil {
			return joinOutcomes(outcome{res: res, err: err}, outcome{err: cerr})
		}
	}
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
	if g.do == nil {
		return req.Run(ctx, g.steps[0])
	}
	return g.do(ctx, req)
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
