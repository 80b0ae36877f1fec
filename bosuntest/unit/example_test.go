package unit_test

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest/unit"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// One step, run through the engine against an in-memory client: what it
// wrote, and the Ready condition it left.
func ExampleReconcile() {
	double := bosun.NewStep("double", func(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
		req.Object.Status.Result = 2 * req.Object.Spec.Value
		return ctrl.Result{}, nil
	})
	t := &testing.T{} // in a test, the test's own t
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w"}, Spec: testapi.WidgetSpec{Value: 21}}
	out := unit.Reconcile(t, scheme(t), unit.Steps[*testapi.Widget](double), unit.Case[*testapi.Widget]{Object: w})
	for _, write := range out.Writes {
		fmt.Println(write)
	}
	ready := conditions.Find(out.Object.Status.Conditions, conditions.TypeReady)
	fmt.Println(out.Object.Status.Result, ready.Status, ready.Reason, out.Err)
	// Output:
	// patch status Widget ns/w
	// 42 True Succeeded <nil>
}

// A table of cases, each a subtest: given a world, expect what the pass
// does.
func ExampleRun() {
	testDouble := func(t *testing.T) {
		unit.Run(t, scheme(t), func() *bosun.Reconciler[*testapi.Widget] { return unit.Steps[*testapi.Widget](publish{}) },
			unit.Case[*testapi.Widget]{
				Name:         "publishes",
				Object:       widget(),
				ExpectWrites: []string{"patch Widget ns/w", "create ConfigMap ns/w", "patch status Widget ns/w"},
			},
		)
	}
	_ = testDouble
}
