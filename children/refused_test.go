package children

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/internal/testapi"
)

// TestRefusedAdoptionReportsNoChange checks that a pass over a cache that shows
// the parent alive and its child orphaned (the garbage collector took the
// owner reference off for an orphan delete the cache does not show yet)
// applies nothing, since the API server has the parent being deleted.
// It must then not tell the user it updated the child: no ChildrenChanged
// event "updated 1" for an apply it did not make.
func TestRefusedAdoptionReportsNoChange(t *testing.T) {
	scheme := widgetScheme(t)
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", UID: "uid-w", Generation: 1}, Spec: testapi.WidgetSpec{Value: 1}}
	// The child as the cache shows it: the set's labels for the parent, no
	// owner reference, an older value.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm-0", UID: "uid-cm", ResourceVersion: "5",
		Labels: map[string]string{LabelSet: "web", LabelOwner: "uid-w"}}, Data: map[string]string{"value": "0"}}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	mapper.Add(testapi.GroupVersion.WithKind("Widget"), meta.RESTScopeNamespace)
	applies := 0
	cache := interceptor.NewClient(fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(mapper).WithObjects(w.DeepCopy(), cm).Build(), interceptor.Funcs{
		Apply: func(context.Context, client.WithWatch, runtime.ApplyConfiguration, ...client.ApplyOption) error {
			applies++
			return nil
		},
	})
	deleting := w.DeepCopy()
	deleting.DeletionTimestamp, deleting.Finalizers = &metav1.Time{Time: time.Now()}, []string{"orphan"}
	api := fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(mapper).WithObjects(deleting, cm.DeepCopy()).Build()
	rec := events.NewFakeRecorder(10)
	step := NewStep("web", webApp, []Kind{Of(&corev1.ConfigMap{})})
	req := &bosun.Pass[*testapi.Widget]{Object: w.DeepCopy(), Original: w.DeepCopy(), Client: cache, APIReader: api, Log: logr.Discard(), Recorder: rec}
	if _, err := step.Do(t.Context(), req); err != nil {
		t.Fatalf("Do: %v", err)
	}
	close(rec.Events)
	if applies != 0 {
		t.Fatalf("%d applies for a parent being deleted, want 0", applies)
	}
	for e := range rec.Events {
		t.Errorf("event %q recorded on a parent being deleted, for a pass that applied nothing", e)
	}
}
