package flow_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/flow"
)

// step returns an action that prints its name and returns res and err.
func step(name string, res reconcile.Result, err error) flow.Action {
	return flow.New(name, func(context.Context) (reconcile.Result, error) {
		fmt.Println("run", name)
		return res, err
	})
}

// A reconcile workflow: the finalizer first, then the children in any order. The
// outcome is turned into what a Reconcile method returns with Final.
func Example() {
	suspended := false
	w := flow.Sequence(
		step("ensure finalizer", reconcile.Result{}, nil),
		flow.Join(
			step("sync service", reconcile.Result{}, nil),
			step("sync deployment", reconcile.Result{RequeueAfter: 30 * time.Second}, nil),
			flow.If(!suspended, step("schedule next job", reconcile.Result{RequeueAfter: 10 * time.Second}, nil)),
		),
		step("never reached: the join asked for a requeue", reconcile.Result{}, nil),
	)
	res, err := flow.Final(w.Run(context.Background()))
	fmt.Println(res.RequeueAfter, err)
	// Output:
	// run ensure finalizer
	// run sync service
	// run sync deployment
	// run schedule next job
	// 10s <nil>
}

// Sequence stops at the first action that interrupts the workflow; ErrExit stops it
// without a failure, and Final removes it.
func ExampleSequence() {
	w := flow.Sequence(
		step("check", reconcile.Result{}, nil),
		flow.New("nothing to do", func(context.Context) (reconcile.Result, error) {
			fmt.Println("run nothing to do")
			return flow.ExitIf(true)
		}),
		step("update", reconcile.Result{}, nil),
	)
	res, err := w.Run(context.Background())
	fmt.Println(errors.Is(err, flow.ErrExit))
	res, err = flow.Final(res, err)
	fmt.Println(res.IsZero(), err)
	// Output:
	// run check
	// run nothing to do
	// true
	// true <nil>
}

// Join runs every action and joins the outcomes: errors are kept together, ErrExit
// gives way to a real error, and the shortest requeue wins.
func ExampleJoin() {
	errConflict := errors.New("conflict")
	errQuota := errors.New("quota exceeded")
	res, err := flow.Join(
		step("a", reconcile.Result{RequeueAfter: time.Minute}, nil),
		step("b", reconcile.Result{}, flow.ErrExit),
		step("c", reconcile.Result{RequeueAfter: 5 * time.Second}, errConflict),
		step("d", reconcile.Result{}, errQuota),
	).Run(context.Background())
	fmt.Println(res.RequeueAfter)
	fmt.Println(errors.Is(err, errConflict), errors.Is(err, errQuota), errors.Is(err, flow.ErrExit))
	// Output:
	// run a
	// run b
	// run c
	// run d
	// 5s
	// true true false
}

// JoinResults applies the join rules to outcomes gathered by other means.
func ExampleJoinResults() {
	res, err := flow.JoinResults(
		flow.Outcome{Result: reconcile.Result{RequeueAfter: time.Hour}},
		flow.Outcome{Result: reconcile.Result{RequeueAfter: time.Minute}, Err: flow.ErrExit},
	)
	fmt.Println(res.RequeueAfter, err)
	// Output:
	// 1m0s flow: exit workflow
}

// ParallelJoin turns a panicking child into an error; the other children finish.
func ExampleParallelJoin() {
	_, err := flow.ParallelJoin(
		flow.New("fragile", func(context.Context) (reconcile.Result, error) { panic("nil map") }),
		flow.New("sturdy", func(context.Context) (reconcile.Result, error) { return flow.Continue() }),
	).Run(context.Background())
	var pe *flow.PanicError
	fmt.Println(errors.Is(err, flow.ErrPanic), errors.As(err, &pe), pe.Action, pe.Value)
	// Output:
	// true true fragile nil map
}

// Timeout gives an action a deadline; the action must honour its context.
func ExampleTimeout() {
	slow := flow.New("wait for pod", func(ctx context.Context) (reconcile.Result, error) {
		<-ctx.Done()
		return flow.RequeueIfError(ctx.Err())
	})
	_, err := flow.Timeout(10*time.Millisecond, slow).Run(context.Background())
	fmt.Println(errors.Is(err, flow.ErrTimeout))
	fmt.Println(err)
	// Output:
	// true
	// flow: action "wait for pod" timed out after 10ms: context deadline exceeded
}

// Retry tries an action again while it fails with a real error.
func ExampleRetry() {
	tries := 0
	flaky := flow.New("flaky", func(context.Context) (reconcile.Result, error) {
		tries++
		if tries < 3 {
			return flow.RequeueIfError(errors.New("try again"))
		}
		return flow.Continue()
	})
	_, err := flow.Retry(5, 0, flaky).Run(context.Background())
	fmt.Println(tries, err)
	// Output:
	// 3 <nil>
}

// Shared runs an action once per workflow run, however many branches use it.
func ExampleShared() {
	load := flow.Shared(step("load config", reconcile.Result{}, nil))
	w := flow.Sequence(
		flow.Join(load, step("sync a", reconcile.Result{}, nil)),
		flow.Join(load, step("sync b", reconcile.Result{}, nil)),
	)
	_, _ = w.Run(context.Background())
	fmt.Println("second run")
	_, _ = w.Run(context.Background())
	// Output:
	// run load config
	// run sync a
	// run sync b
	// second run
	// run load config
	// run sync a
	// run sync b
}

// WithHooks runs hooks around an action and every action beneath it.
func ExampleWithHooks() {
	depth := 0
	trace := flow.HookFuncs{
		Pre: func(ctx context.Context, a flow.Action) context.Context {
			fmt.Printf("%*sstart %s\n", 2*depth, "", a.Description())
			depth++
			return ctx
		},
		Post: func(_ context.Context, a flow.Action, _ reconcile.Result, err error) {
			depth--
			fmt.Printf("%*send %s: %v\n", 2*depth, "", a.Description(), err)
		},
	}
	w := flow.WithHooks(flow.Sequence(
		flow.New("a", func(context.Context) (reconcile.Result, error) { return flow.Continue() }),
		flow.New("b", func(context.Context) (reconcile.Result, error) { return flow.Exit() }),
	), trace)
	_, _ = w.Run(context.Background())
	// Output:
	// start Sequence(a, b)
	//   start a
	//   end a: <nil>
	//   start b
	//   end b: flow: exit workflow
	// end Sequence(a, b): flow: exit workflow
}

// Describe and Optimize show and simplify the shape of a workflow.
func ExampleOptimize() {
	a := flow.New("A", func(context.Context) (reconcile.Result, error) { return flow.Continue() })
	b := flow.New("B", func(context.Context) (reconcile.Result, error) { return flow.Continue() })
	w := flow.Sequence(
		flow.Sequence(a, flow.If(false, b)),
		flow.Join(flow.Join(a, b), flow.Nop()),
		flow.Timeout(time.Second, flow.Timeout(time.Minute, b)),
	)
	fmt.Println(flow.Describe(w))
	fmt.Println(flow.Describe(flow.Optimize(w)))
	// Output:
	// Sequence(Sequence(A, If(false, B)), Join(Join(A, B), Nop), Timeout(Timeout(B, 1m0s), 1s))
	// Sequence(A, Join(A, B), Timeout(B, 1s))
}

// Mermaid draws a workflow; DOT draws the same graph for Graphviz.
func ExampleMermaid() {
	a := flow.New("A", func(context.Context) (reconcile.Result, error) { return flow.Continue() })
	b := flow.New("B", func(context.Context) (reconcile.Result, error) { return flow.Continue() })
	c := flow.New("C", func(context.Context) (reconcile.Result, error) { return flow.Continue() })
	fmt.Print(flow.Mermaid(flow.Sequence(flow.Join(a, b), flow.Timeout(time.Second, c))))
	// Output:
	// flowchart TD
	//     n0{{"Join"}}
	//     n1["A"]
	//     n2["B"]
	//     n3{{"Join end"}}
	//     subgraph s0 ["Timeout 1s"]
	//         n4["C"]
	//     end
	//     n0 --> n1
	//     n1 --> n3
	//     n0 --> n2
	//     n2 --> n3
	//     n3 --> n4
}

// A bad argument is a programming error: the constructor panics with a *BuildError.
func ExampleBuildError() {
	defer func() {
		err, _ := recover().(error)
		var be *flow.BuildError
		fmt.Println(errors.As(err, &be), be.Combinator, be.Argument)
		fmt.Println(err)
	}()
	flow.Timeout(0, flow.Nop())
	// Output:
	// true Timeout d
	// flow: Timeout: argument d: must be positive, got 0s
}

// IgnoreExit removes ErrExit, also from inside a joined error.
func ExampleIgnoreExit() {
	errSync := errors.New("sync failed")
	_, err := flow.IgnoreExit(reconcile.Result{}, errors.Join(flow.ErrExit, errSync))
	fmt.Println(err)
	_, err = flow.IgnoreExit(flow.Exit())
	fmt.Println(err)
	// Output:
	// sync failed
	// <nil>
}
