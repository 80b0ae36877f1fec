package ref_test

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
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/ref"
)

// A Widget names another Widget, its owner, in an annotation; the owner
// step resolves it and a later step uses it. Run once without the owner,
// and once with it: one pass of each, against an in-memory client.
func ExampleResolve() {
	owner := ref.Resolve[*testapi.Widget, *testapi.Widget]("owner",
		func(w *testapi.Widget) ref.Reference { return ref.ByName(w.Annotations["example.com/owner"]) })
	copyValue := bosun.NewStep("copyValue", func(_ context.Context, p *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
		o, _ := owner.Resolved(p) // owner ended the pass unless it resolved
		p.Object.Status.Result = o.Spec.Value
		return ctrl.Result{}, nil
	})
	newReconciler := func() *bosun.Reconciler[*testapi.Widget] {
		return &bosun.Reconciler[*testapi.Widget]{Name: "widgets", Steps: []bosun.Step[*testapi.Widget]{owner, copyValue}}
	}
	// In an operator, bosun.ControllerManagedBy[*testapi.Widget](mgr).Complete(newReconciler())
	// also watches the owners, through the field index the step registers.

	t := &testing.T{} // in a test, the test's own t
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", Annotations: map[string]string{"example.com/owner": "boss"}}}
	boss := &testapi.Widget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "boss", Generation: 1},
		Spec:       testapi.WidgetSpec{Value: 42},
		Status: testapi.WidgetStatus{Conditions: []metav1.Condition{{
			Type: conditions.TypeReady, Status: metav1.ConditionTrue, Reason: string(conditions.ReasonSucceeded), ObservedGeneration: 1,
		}}},
	}
	for _, given := range [][]client.Object{nil, {boss}} {
		out := unit.Reconcile(t, scheme(t), newReconciler(), unit.Case[*testapi.Widget]{Object: w, Given: given})
		c := conditions.Find(out.Object.Status.Conditions, owner.Condition())
		fmt.Printf("%s %s: %s; result %d, error %v\n", c.Type, c.Reason, c.Message, out.Object.Status.Result, out.Err)
	}
	// Output:
	// OwnerResolved ReferenceNotFound: Widget "ns/boss" does not exist; result 0, error <nil>
	// OwnerResolved Resolved: resolved to Widget "ns/boss"; result 42, error <nil>
}

// A reference by labels, to a Secret in the referrer's namespace, which
// is ready as soon as it exists; and an optional one to a ConfigMap.
func ExampleBySelector() {
	credentials := ref.Resolve[*testapi.Widget, *corev1.Secret]("credentials",
		func(w *testapi.Widget) ref.Reference {
			return ref.BySelector(&metav1.LabelSelector{MatchLabels: map[string]string{"example.com/for": w.Name}})
		})
	settings := ref.Resolve[*testapi.Widget, *corev1.ConfigMap]("settings",
		func(w *testapi.Widget) ref.Reference { return ref.ByName(w.Annotations["example.com/settings"]) },
		ref.Optional(), ref.WithCondition("SettingsFound"))
	fmt.Println(credentials.Condition(), settings.Condition())
	// Output: CredentialsResolved SettingsFound
}

// A readiness of the user's: a Widget is usable once its value is set.
func ExampleReadyWhen() {
	owner := ref.Resolve[*testapi.Widget, *testapi.Widget]("owner",
		func(w *testapi.Widget) ref.Reference { return ref.ByName(w.Annotations["example.com/owner"]) },
		ref.ReadyWhen(func(o *testapi.Widget) (bool, string) { return o.Spec.Value != 0, "its value is not set yet" }))
	fmt.Println(owner.Name(), owner.Condition())
	// Output: owner OwnerResolved
}
