package children

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// TestCustomResourceReadiness checks DefaultReadiness on kinds it does not
// know: custom resources by their Ready condition and its generation,
// built-in kinds by their presence.
func TestCustomResourceReadiness(t *testing.T) {
	widget := func(generation, observed int64, conds ...metav1.Condition) client.Object {
		return &testapi.Widget{
			ObjectMeta: metav1.ObjectMeta{Name: "w", Generation: generation},
			Status:     testapi.WidgetStatus{ObservedGeneration: observed, Conditions: conds},
		}
	}
	ready := func(status metav1.ConditionStatus, generation int64) metav1.Condition {
		return metav1.Condition{Type: "Ready", Status: status, ObservedGeneration: generation, Reason: "Reconciled", Message: "all good"}
	}
	gadget := func(conds ...any) client.Object {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Gadget",
			"metadata": map[string]any{"name": "g", "generation": int64(4)},
		}}
		if conds != nil {
			u.Object["status"] = map[string]any{"conditions": conds}
		}
		return u
	}
	type result struct {
		Ready   bool
		Message string
	}
	tests := []struct {
		name string
		obj  client.Object
		want result
	}{
		{"no status conditions", widget(3, 0), result{true, ""}},
		{"Ready True for the generation", widget(3, 0, ready(metav1.ConditionTrue, 3)), result{true, ""}},
		{"Ready True, condition behind", widget(3, 0, ready(metav1.ConditionTrue, 2)),
			result{false, "Ready is True for generation 2, not yet for generation 3"}},
		{"Ready True, status behind", widget(3, 2, ready(metav1.ConditionTrue, 0)),
			result{false, "Ready is True for generation 2, not yet for generation 3"}},
		{"Ready True, status up to date", widget(3, 3, ready(metav1.ConditionTrue, 0)), result{true, ""}},
		{"Ready True, no generation observed", widget(3, 0, ready(metav1.ConditionTrue, 0)), result{true, ""}},
		{"Ready False", widget(1, 0, metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, ObservedGeneration: 1, Reason: "Provisioning", Message: "waiting for the disk"}),
			result{false, "Ready is False (Provisioning): waiting for the disk"}},
		{"Ready Unknown", widget(1, 0, metav1.Condition{Type: "Ready", Status: metav1.ConditionUnknown, Reason: "Starting"}),
			result{false, "Ready is Unknown (Starting)"}},
		{"conditions without Ready", widget(1, 0, metav1.Condition{Type: "Synced", Status: metav1.ConditionTrue, Reason: "Synced"}),
			result{false, "no Ready condition yet"}},
		{"unstructured custom resource ready", gadget(map[string]any{"type": "Ready", "status": "True", "observedGeneration": int64(4)}), result{true, ""}},
		{"unstructured custom resource behind", gadget(map[string]any{"type": "Ready", "status": "True", "observedGeneration": int64(3)}),
			result{false, "Ready is True for generation 3, not yet for generation 4"}},
		{"unstructured custom resource without conditions", gadget(), result{true, ""}},
		{"built-in kind with conditions but no Ready", &autoscalingv2.HorizontalPodAutoscaler{Status: autoscalingv2.HorizontalPodAutoscalerStatus{
			Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionFalse}},
		}}, result{true, ""}},
		{"unstructured built-in kind", &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Namespace",
			"status": map[string]any{"conditions": []any{map[string]any{"type": "NamespaceDeletionContentFailure", "status": "True"}}},
		}}, result{true, ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, msg := DefaultReadiness(tt.obj)
			if diff := cmp.Diff(tt.want, result{ok, msg}); diff != "" {
				t.Errorf("readiness (-want +got):\n%s", diff)
			}
		})
	}
}

// partOf is the desired set of TestCustomResourceChildReadiness: one
// Widget child, "<parent>-part", with the parent's spec.value.
func partOf(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
	return []client.Object{&testapi.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: req.Object.Name + "-part"},
		Spec:       testapi.WidgetSpec{Value: req.Object.Spec.Value},
	}}, nil
}

// setChildStatus writes the status of the child Widget name as its own
// controller would.
func (e *env) setChildStatus(name string, observed int64, conds ...metav1.Condition) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		w := &testapi.Widget{}
		if err := e.c.Get(e.t.Context(), client.ObjectKey{Namespace: e.ns, Name: name}, w); err != nil {
			return err
		}
		for i := range conds {
			conds[i].LastTransitionTime = metav1.Now()
		}
		w.Status = testapi.WidgetStatus{ObservedGeneration: observed, Conditions: conds}
		return e.c.Status().Update(e.t.Context(), w)
	})
	if err != nil {
		e.t.Fatalf("writing the status of %s: %v", name, err)
	}
}

// childGeneration returns the generation of the child Widget name.
func (e *env) childGeneration(name string) int64 {
	e.t.Helper()
	w := &testapi.Widget{}
	if err := e.c.Get(e.t.Context(), client.ObjectKey{Namespace: e.ns, Name: name}, w); err != nil {
		e.t.Fatalf("reading %s: %v", name, err)
	}
	return w.Generation
}

// TestCustomResourceChildReadiness keeps a Widget as the child of a Widget:
// the parent is ready while the child has no conditions, follows the
// child's Ready condition (its reason and message in the parent's
// WidgetReady), and is not ready while the child's Ready is for an older
// generation than the one the step just applied.
func TestCustomResourceChildReadiness(t *testing.T) {
	step := NewStep("parts", partOf, []Kind{Of(&testapi.Widget{})})
	e := start(t, reconciler(step))
	e.create("crd", 1, 0)
	ready := map[string]cond{
		"WidgetReady":        {metav1.ConditionTrue, ReasonReady},
		conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded},
	}
	notReady := map[string]cond{
		"WidgetReady":        {metav1.ConditionFalse, ReasonNotReady},
		conditions.TypeReady: {metav1.ConditionFalse, ReasonNotReady},
	}
	// message returns the WidgetReady message of the parent w.
	message := func(w *testapi.Widget) string { return conditions.Find(w.Status.Conditions, "WidgetReady").Message }

	// No conditions yet: ready when it exists, as before.
	e.waitConditions("crd", ready)

	gen := e.childGeneration("crd-part")
	e.setChildStatus("crd-part", 0, metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, ObservedGeneration: gen,
		Reason: "Provisioning", Message: "waiting for the disk"})
	w := e.waitConditions("crd", notReady)
	if want := "1 of 1 Widget not ready: crd-part: Ready is False (Provisioning): waiting for the disk"; message(w) != want {
		t.Errorf("WidgetReady message = %q, want %q", message(w), want)
	}

	e.setChildStatus("crd-part", 0, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, ObservedGeneration: gen, Reason: "Provisioned"})
	e.waitConditions("crd", ready)

	// A new spec for the child: its Ready is for the generation before.
	e.setSpec("crd", 2, 0)
	w = e.waitConditions("crd", notReady)
	next := e.childGeneration("crd-part")
	if next == gen {
		t.Fatalf("the child's generation is still %d after its spec changed", gen)
	}
	if want := fmt.Sprintf("not yet for generation %d", next); !strings.Contains(message(w), want) {
		t.Errorf("WidgetReady message = %q, want it to say %q", message(w), want)
	}

	// Its controller catches up, saying so in status.observedGeneration.
	e.setChildStatus("crd-part", next, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Provisioned"})
	e.waitConditions("crd", ready)

	// Conditions, but none of them Ready.
	e.setChildStatus("crd-part", next, metav1.Condition{Type: "Synced", Status: metav1.ConditionTrue, Reason: "Synced"})
	w = e.waitConditions("crd", notReady)
	if !strings.Contains(message(w), "no Ready condition") {
		t.Errorf("WidgetReady message = %q, want it to say there is no Ready condition", message(w))
	}
}

// A custom resource among the children is ready by its own Ready
// condition, once that condition is for its latest generation.
func TestDefaultReadyFollowsGenerations(t *testing.T) {
	gadget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g", "generation": int64(2)},
		"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Ready", "status": "True", "reason": "Reconciled", "observedGeneration": int64(1)},
		}},
	}}
	ready, msg := DefaultReadiness(gadget)
	if ready || msg != "Ready is True for generation 1, not yet for generation 2" {
		t.Errorf("DefaultReadiness = %t %q, want false %q", ready, msg, "Ready is True for generation 1, not yet for generation 2")
	}

	// Its controller sees generation 2 and finds a problem.
	_ = unstructured.SetNestedSlice(gadget.Object, []any{
		map[string]any{"type": "Ready", "status": "False", "reason": "QuotaExceeded", "message": "no room for 3 gadgets", "observedGeneration": int64(2)},
	}, "status", "conditions")
	ready, msg = DefaultReadiness(gadget)
	if ready || msg != "Ready is False (QuotaExceeded): no room for 3 gadgets" {
		t.Errorf("DefaultReadiness = %t %q, want false %q", ready, msg, "Ready is False (QuotaExceeded): no room for 3 gadgets")
	}

	// And solves it.
	_ = unstructured.SetNestedSlice(gadget.Object, []any{
		map[string]any{"type": "Ready", "status": "True", "reason": "Reconciled", "observedGeneration": int64(2)},
	}, "status", "conditions")
	ready, msg = DefaultReadiness(gadget)
	if !ready || msg != "" {
		t.Errorf("DefaultReadiness = %t %q, want true %q", ready, msg, "")
	}
}
