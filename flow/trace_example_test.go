package flow_test

import (
	"context"
	"errors"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/flow"
)

// A Trace records a run of a workflow through hooks, and draws the run
// over the workflow's graph: here the status was updated, the cleanup
// failed, and the next run was left out.
func ExampleTrace() {
	ok := func(context.Context) (reconcile.Result, error) { return reconcile.Result{}, nil }
	status := flow.New("UpdateStatus", ok)
	cleanup := flow.New("CleanUp", func(context.Context) (reconcile.Result, error) {
		return reconcile.Result{}, errors.New("forbidden")
	})
	next := flow.New("RunNext", ok)
	workflow := flow.Join(status, cleanup, flow.If(false, next))

	trace := &flow.Trace{}
	_, _ = flow.WithHooks(workflow, trace).Run(context.Background())

	fmt.Print(trace)
	fmt.Print(trace.Mermaid(workflow))
	// Output:
	// 1 UpdateStatus: ok
	// 2 CleanUp: error: forbidden
	// flowchart TD
	//     n0{{"Join"}}
	//     n1["UpdateStatus (run 1: ok)"]
	//     n2["CleanUp (run 2: error: forbidden)"]
	//     subgraph s0 ["If false"]
	//         n3["RunNext"]
	//     end
	//     n4{{"Join end"}}
	//     n0 --> n1
	//     n1 --> n4
	//     n0 --> n2
	//     n2 --> n4
	//     n0 --> n3
	//     n3 --> n4
	//     classDef succeeded fill:#d4edda,stroke:#28a745
	//     classDef requeued fill:#fff3cd,stroke:#d39e00
	//     classDef exited fill:#e2e3e5,stroke:#6c757d
	//     classDef failed fill:#f8d7da,stroke:#dc3545
	//     classDef running fill:#cce5ff,stroke:#004085
	//     classDef notrun stroke-dasharray:5 5,color:#6c757d
	//     class n1 succeeded
	//     class n2 failed
	//     class n3 notrun
}
