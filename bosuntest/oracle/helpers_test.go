package oracle_test

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// createWidget makes a Widget with finalizers in namespace ns.
func createWidget(t *testing.T, c client.Client, ns, name string, finalizers ...string) *testapi.Widget {
	t.Helper()
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Finalizers: finalizers}, Spec: testapi.WidgetSpec{Value: 1}}
	if err := c.Create(t.Context(), w); err != nil {
		t.Fatalf("creating widget %s: %v", name, err)
	}
	return w
}

// setReady writes the Ready condition of w through the status subresource,
// for generation gen, and status.observedGeneration when statusGen is not
// zero. It updates w.
func setReady(t *testing.T, c client.Client, w *testapi.Widget, status metav1.ConditionStatus, reason, message string, gen, statusGen int64) {
	t.Helper()
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(w), w); err != nil {
		t.Fatalf("reading widget %s: %v", w.Name, err)
	}
	meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{
		Type: conditions.TypeReady, Status: status, Reason: reason, Message: message, ObservedGeneration: gen,
	})
	w.Status.ObservedGeneration = statusGen
	if err := c.Status().Update(t.Context(), w); err != nil {
		t.Fatalf("writing the status of widget %s: %v", w.Name, err)
	}
}

// bumpGeneration changes w's spec, so that its generation goes up.
func bumpGeneration(t *testing.T, c client.Client, w *testapi.Widget) {
	t.Helper()
	base := w.DeepCopy()
	w.Spec.Value++
	if err := c.Patch(t.Context(), w, client.MergeFrom(base)); err != nil {
		t.Fatalf("patching widget %s: %v", w.Name, err)
	}
}

// removeFinalizers clears w's finalizers, if w is still there.
func removeFinalizers(t *testing.T, c client.Client, w *testapi.Widget) {
	t.Helper()
	// Not t.Context(): this also runs in cleanups, after it has ended.
	ctx := context.Background()
	err := c.Get(ctx, client.ObjectKeyFromObject(w), w)
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		t.Fatalf("reading widget %s: %v", w.Name, err)
	}
	base := w.DeepCopy()
	w.Finalizers = nil
	if err := c.Patch(ctx, w, client.MergeFrom(base)); err != nil {
		t.Fatalf("removing the finalizers of widget %s: %v", w.Name, err)
	}
}

// deleteObject deletes obj.
func deleteObject(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Delete(t.Context(), obj); err != nil {
		t.Fatalf("deleting %s: %v", obj.GetName(), err)
	}
}

// runtimeToUnstructured returns obj's JSON form as an Unstructured.
func runtimeToUnstructured(obj client.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}
