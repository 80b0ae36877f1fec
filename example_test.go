package bosun_test

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// A reconciler with one step that divides spec.value by spec.divisor, run
// against a fake client. A zero divisor is a terminal error: Ready=False with
// the error's reason, and no retry until the spec changes.
func ExampleReconciler() {
	scheme := runtime.NewScheme()
	// The engine reads the object's Namespace for its policy annotation, so
	// the scheme needs the core types too.
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fmt.Println(err)
		return
	}
	if err := testapi.AddToScheme(scheme); err != nil {
		fmt.Println(err)
		return
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&testapi.Widget{}).WithObjects(
		&testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "six"}, Spec: testapi.WidgetSpec{Value: 6, Divisor: 3}},
		&testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "zero"}, Spec: testapi.WidgetSpec{Value: 6}},
	).Build()

	divide := bosun.NewStep("divide", func(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
		w := req.Object
		if w.Spec.Divisor == 0 {
			return ctrl.Result{}, conditions.Terminal("ZeroDivisor", errors.New("divisor is zero"))
		}
		w.Status.Result = w.Spec.Value / w.Spec.Divisor
		return ctrl.Result{}, nil
	})
	r := &bosun.Reconciler[*testapi.Widget]{
		Name:   "widgets",
		Client: c,
		Steps:  []bosun.Step[*testapi.Widget]{divide},
	}

	for _, name := range []string{"six", "zero"} {
		key := client.ObjectKey{Namespace: "demo", Name: name}
		_, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
		w := &testapi.Widget{}
		if err := c.Get(context.Background(), key, w); err != nil {
			fmt.Println(err)
			return
		}
		ready := conditions.Find(w.Status.Conditions, conditions.TypeReady)
		if ready == nil {
			fmt.Println("no Ready condition:", err)
			return
		}
		fmt.Printf("%s: result=%d Ready=%s/%s %q error=%v\n", name, w.Status.Result, ready.Status, ready.Reason, ready.Message, err)
	}
	// Output:
	// six: result=2 Ready=True/Succeeded "" error=<nil>
	// zero: result=0 Ready=False/ZeroDivisor "divisor is zero" error=terminal error: divisor is zero
}

// Typed per-request values hand data from one step to a later one.
func ExampleNewKey() {
	total := bosun.NewKey[int]("total")
	var v bosun.Values
	total.Set(&v, 42)
	n, ok := total.Get(&v)
	fmt.Println(n, ok)
	// Output:
	// 42 true
}

// ControllerManagedBy registers a reconciler with a manager, filling in its
// clients and event recorder and checking its configuration first.
func ExampleControllerManagedBy() {
	setup := func(mgr ctrl.Manager) error {
		return bosun.ControllerManagedBy[*testapi.Widget](mgr).
			For(&testapi.Widget{}).
			Complete(&bosun.Reconciler[*testapi.Widget]{
				Name:  "widgets",
				Steps: []bosun.Step[*testapi.Widget]{bosun.Nop[*testapi.Widget]{}},
			})
	}
	_ = setup
}
