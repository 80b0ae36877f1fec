package bosun_test

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/internal/testapi"
)

// publish is a step that cleans up what it published and owns the
// Published condition.
type publish struct{}

func (publish) Name() string         { return "publish" }
func (publish) Conditions() []string { return []string{"Published"} }

func (publish) Do(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}

func (publish) Cleanup(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}

// Graph describes a reconciler without a client and without running
// anything; Mermaid draws it, with the steps of a composite inside it and
// the steps that clean up in a chain of their own.
func ExampleReconciler_Graph() {
	step := func(name string) bosun.StepFunc[*testapi.Widget] {
		return bosun.NewStep(name, func(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
			return ctrl.Result{}, nil
		})
	}
	r := &bosun.Reconciler[*testapi.Widget]{
		Name:      "widgets",
		Finalizer: "example.com/published",
		Steps: []bosun.Step[*testapi.Widget]{
			step("validate"),
			bosun.Sequence[*testapi.Widget](step("render"), publish{}).Named("release"),
		},
	}
	g := r.Graph()
	for _, s := range g.Steps {
		fmt.Println(s.Name, s.Kind, s.Phases, len(s.Steps))
	}
	fmt.Print(g.Mermaid())
	// Output:
	// validate  [do] 0
	// release Sequence [do] 2
	// ---
	// title: "reconciler widgets, finalizer example.com/published"
	// ---
	// flowchart TD
	//     subgraph s0 ["do, in step order"]
	//         n0["validate: do"]
	//         subgraph s1 ["release: do"]
	//             n1["render: do"]
	//             n2["publish: do, cleanup; conditions Published"]
	//         end
	//     end
	//     subgraph s2 ["cleanup, on deletion, in reverse order"]
	//         n3["publish"]
	//     end
	//     n1 --> n2
	//     n0 --> n1
}
