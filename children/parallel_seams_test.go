package children

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// TestSeamReviewParentCheckBesideParallelConditions: a pass that a
// child's deletion brought checks, before it makes the child again, that
// the parent is still there (parentGone). In a ParallelJoin, another step
// (a ref step, another children step) sets its condition on the parent
// at the same time through Pass.UpdateConditions; the check must not
// read the parent's conditions while they change. Run with -race: the
// race detector reports the read of the conditions.
func TestSeamReviewParentCheckBesideParallelConditions(t *testing.T) {
	scheme := widgetScheme(t)
	childDeleted := bosun.Trigger{Kind: "Watch", Source: "Owns", Event: "Delete", Object: client.ObjectKey{Namespace: "ns", Name: "w-index"}}
	step := NewStep[*testapi.Widget]("site", nil, []Kind{Of(&corev1.ConfigMap{})})
	ks, err := step.kinds(scheme)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", UID: "uid-w", Generation: 1}}
		cl := interceptor.NewClient(fake.NewClientBuilder().WithScheme(scheme).Build(), interceptor.Funcs{
			Apply: func(context.Context, client.WithWatch, runtime.ApplyConfiguration, ...client.ApplyOption) error {
				return nil
			},
		})
		req := &bosun.Pass[*testapi.Widget]{
			Object: w, Original: w.DeepCopy(), Client: cl, Log: logr.Discard(), Values: &bosun.Values{}, Trigger: childDeleted,
			APIReader: fake.NewClientBuilder().WithScheme(scheme).WithObjects(w.DeepCopy()).Build(),
		}
		cm := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"namespace": "ns", "name": "w-index"},
		}}
		p := &pass{children: []*child{{kind: &ks[0], ref: Ref{Kind: "ConfigMap", Namespace: "ns", Name: "w-index"}, change: true, applied: cm}}}
		apply := bosun.NewStep("apply", func(ctx context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
			_, err := applyChildren(ctx, step, req, p)
			return ctrl.Result{}, err
		})
		resolve := bosun.NewStep("resolve", func(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
			req.UpdateConditions(func(conds *[]metav1.Condition) {
				conditions.Set(conds, metav1.Condition{Type: "Resolved", Status: metav1.ConditionTrue, Reason: "Resolved"}, metav1.Now())
			})
			return ctrl.Result{}, nil
		})
		if _, err := bosun.ParallelJoin[*testapi.Widget](apply, resolve).Do(t.Context(), req); err != nil {
			t.Fatalf("pass %d: %v", i, err)
		}
		if c := conditions.Find(w.Status.Conditions, "Resolved"); c == nil {
			t.Fatalf("pass %d: no Resolved condition", i)
		}
	}
}
