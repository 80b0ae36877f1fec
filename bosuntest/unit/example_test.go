package unit_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest/unit"
	"github.com/bosunkit/bosun/children"
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

// A child that an earlier pass of a children step made, given to the
// pass: the step knows it for a member of its set, so it prunes it once
// it is no longer desired.
func ExampleChildOf() {
	t := &testing.T{} // in a test, the test's own t
	s := scheme(t)
	none := func(context.Context, *bosun.Pass[*testapi.Widget]) ([]client.Object, error) { return nil, nil }
	step := children.NewStep("parts", none, []children.Kind{children.Of(&corev1.ConfigMap{})})

	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", UID: "0a1b"}}
	old := unit.ChildOf(t, s, w, "parts", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "part-0"}})
	fmt.Println(old.Namespace, old.Labels[children.LabelSet], old.OwnerReferences[0].Kind, old.OwnerReferences[0].Name)

	out := unit.Reconcile(t, s, unit.Steps[*testapi.Widget](step), unit.Case[*testapi.Widget]{Object: w, Given: []client.Object{old}})
	for _, write := range out.Writes {
		fmt.Println(write)
	}
	// Output:
	// ns parts Widget w
	// delete ConfigMap ns/part-0
	// patch status Widget ns/w
}
