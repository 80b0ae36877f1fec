// Package flow composes small, single-purpose reconcile actions into workflows and
// defines how their outcomes combine.
//
// An Action has a Description and a Run method that returns a controller-runtime
// reconcile.Result and an error, the same pair a Reconcile method returns. New and
// ActionFunc turn functions into actions; Nop does nothing.
//
// # Combinators
//
// Sequence runs actions in order and stops at the first one that interrupts the
// workflow. Join, OrderedJoin and ParallelJoin run all their
// actions and join the outcomes; ParallelJoin runs them concurrently and turns a
// panic into a *PanicError. Timeout gives an action a deadline, If, IfElse and When run
// actions conditionally, Retry tries again after errors, and
// Shared runs an action at most once per workflow run however many branches use it.
// Sequence, the joins and Retry stop early when the context is done.
//
// These are the words of the bosun engine too: bosun.Sequence, Join, OrderedJoin,
// ParallelJoin, If, Retry(limit, interval, step) and Timeout(d, step) arrange a
// reconciler's steps with these combinators, taking the same arguments in the same
// order, steps in place of actions.
//
// Constructors check their arguments: a nil action, a non-positive timeout or retry
// limit, a negative retry interval, a nil predicate or a nil hook is a programming
// error, and the constructor panics with a *BuildError naming the combinator and the
// argument, much like regexp.MustCompile does for a bad pattern.
//
// # Outcomes
//
// An outcome interrupts a workflow (see Interrupts) when it asks for a requeue or has
// an error. The helpers RequeueImmediately, RequeueAfter, RequeueIfError,
// RequeueIfErrorAndWrap, NoRequeue, Continue, Exit and ExitIf build outcomes. ErrExit
// stops a workflow without reporting a failure; IgnoreExit removes it again, and Final
// prepares an outcome to be returned to controller-runtime.
//
// "Requeue immediately" is expressed as RequeueAfter set to Immediately (one
// nanosecond), because Result.Requeue is deprecated in controller-runtime. Such a
// request is queued again at once, bypassing the rate limiter, so a step that asks for
// it on every pass makes the controller spin; return an error to be retried with
// backoff. Results from other code that still set Requeue are honoured: NeedsRequeue,
// Interrupts and the joins treat Requeue as a request to requeue.
//
// Joins combine outcomes by the rules of JoinResults: errors are joined with
// errors.Join (flattened, so errors.Is finds each of them), ErrExit gives way to any
// real error, Requeue is OR-ed and RequeueAfter is the shortest positive delay. An
// interruption therefore happens whenever any action wants it, and never later than
// the earliest one asked for.
//
// # Hooks
//
// WithHooks installs Hooks that run before and after an action and every action
// beneath it, combinators included. LogHook logs each action with the logr.Logger of
// the context. Workflows without hooks run without extra allocations.
//
// # Inspection
//
// Describe renders a workflow as one line of text, such as
// "Sequence(Join(A, B), Timeout(C, 1s))"; a combinator's Description is the same
// text. Optimize simplifies a workflow without changing its results. Mermaid and DOT
// draw it as a graph. A Trace, a Hook for tests, records which actions a run ran, in
// which order and with which outcome, and draws the run over that graph.
//
// A typical Reconcile method builds its workflow from the state it loaded and returns
// the final outcome:
//
//	res, err := flow.Sequence(
//		flow.New("ensure finalizer", r.ensureFinalizer),
//		flow.Join(
//			flow.New("sync service", r.syncService),
//			flow.If(!suspended, flow.New("sync deployment", r.syncDeployment)),
//		),
//	).Run(ctx)
//	return flow.Final(res, err)
//
// Maturity: stable. The combinators and the rules of outcomes are the base of the
// engine and of generated code; changes are listed in CHANGELOG.md.
package flow
