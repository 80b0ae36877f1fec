package bosun_test

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/flow"
	"github.com/bosunkit/bosun/internal/testapi"
)

// publish is a step whose Do runs a workflow; it cleans up what it
// published and owns the Published condition.
type publish struct{}

func (publish) Name() string         { return "publish" }
func (publish) Conditions() []string { return []string{"Published"} }

func (p publish) Do(ctx context.Context, _ *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	return p.Workflow().Run(ctx)
}

func (publish) Cleanup(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	return flow.Continue()
}

// Workflow is what Do runs; Graph draws it inside the step.
func (publish) Workflow() flow.Action {
	step := func(name string) flow.Action {
		return flow.New(name, func(context.Context) (ctrl.Result, error) { return flow.Continue() })
	}
	return flow.Sequence(step("render"), step("write"))
}

// Graph describes a reconciler without a client and without running
// anything; Mermaid draws it, with the workflow of publish inside it and
// the steps that clean up in a chain of their own.
func ExampleReconciler_Graph() {
	validate := bosun.NewStep("validate", func(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
		return flow.Continue()
	})
	r := &bosun.Reconciler[*testapi.Widget]{
		Name:      "widgets",
		Finalizer: "example.com/published",
		Steps:     []bosun.Step[*testapi.Widget]{validate, publish{}},
	}
	g := r.Graph()
	for _, s := range g.Steps {
		fmt.Println(s.Name, s.Phases, s.Conditions)
	}
	fmt.Print(g.Mermaid())
	// Output:
	// validate [do] []
	// publish [do cleanup] [Published]
	// ---
	// title: "reconciler widgets, finalizer example.com/published"
	// ---
	// flowchart TD
	//     subgraph s0 ["do, in step order"]
	//         n0["validate: do"]
	//         subgraph s1 ["publish: do, cleanup; conditions Published"]
	//             n1["render"]
	//             n2["write"]
	//         end
	//     end
	//     subgraph s2 ["cleanup, on deletion, in reverse order"]
	//         n3["publish"]
	//     end
	//     n1 --> n2
	//     n0 --> n1
}
