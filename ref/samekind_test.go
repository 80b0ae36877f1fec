package ref_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/ref"
)

// TestReferenceReconciledBySameController: a Widget refers to another
// Widget that the same controller reconciles, so that what makes the
// referenced Widget ready is the engine's own status write. The referrer
// is resolved once it is: the write's event is not one of the referrer's
// own writes, and the step's watch maps it to the referrer. The referenced
// Widget's first pass is held until the referrer has found it not ready,
// so that only the event of that write can bring the referrer's next pass.
func TestReferenceReconciledBySameController(t *testing.T) {
	t.Parallel()
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	e := &env{t: t, cp: cp, c: cp.Client, ns: ns}
	release := make(chan struct{})
	var held atomic.Bool
	gate := bosun.NewStep("gate", func(ctx context.Context, p *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
		if p.Object.Name == "r" && held.CompareAndSwap(false, true) {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return ctrl.Result{}, nil
	})
	bosuntest.RunManagerWith(t, cp, bosuntest.ManagerOptions{Namespaces: []string{ns}}, func(mgr ctrl.Manager) error {
		owner := ref.Resolve[*testapi.Widget, *testapi.Widget]("owner", refOf, ref.Optional())
		r := &bosun.Reconciler[*testapi.Widget]{
			Name:  "ref-same-" + ns,
			Steps: []bosun.Step[*testapi.Widget]{owner, useOwner(owner, true), gate},
		}
		// Two workers: the referrer's passes run while the referenced
		// Widget's first one is held.
		return bosun.ControllerManagedBy[*testapi.Widget](mgr).For(nil).
			WithOptions(controller.Options{MaxConcurrentReconciles: 2}).Complete(r)
	})
	e.create(widget(ns, "w", annName, "r"))
	e.expect(ns, "w", typeOwner, metav1.ConditionFalse, "ReferenceNotFound", "", nil)

	e.create(&testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "r"}, Spec: testapi.WidgetSpec{Value: 7}})
	e.expect(ns, "w", typeOwner, metav1.ConditionFalse, "ReferenceNotReady", "", nil)
	if !held.Load() {
		t.Fatal("the referenced Widget's first pass was not held")
	}
	close(release)
	e.expect(ns, "r", typeReady, metav1.ConditionTrue, conditions.ReasonSucceeded, "", nil)
	e.expect(ns, "w", typeOwner, metav1.ConditionTrue, "Resolved", fmt.Sprintf(`resolved to Widget "%s/r"`, ns), result(7))
	e.expect(ns, "w", typeReady, metav1.ConditionTrue, conditions.ReasonSucceeded, "", nil)
}
