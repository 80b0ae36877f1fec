package children

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// TestCovers compares values of a child with no managedFields entry of
// the step's manager: zero values count as unset.
func TestCovers(t *testing.T) {
	tests := []struct {
		name          string
		desired, live any
		want          bool
	}{
		{"equal strings", "a", "a", true},
		{"different strings", "a", "b", false},
		{"empty string is unset", "", "defaulted", true},
		{"zero int is unset", int64(0), int64(80), true},
		{"ints", int64(3), int64(3), true},
		{"int against float", int64(3), float64(3), true},
		{"different ints", int64(3), int64(4), false},
		{"false is unset", false, true, true},
		{"true needs true", true, false, false},
		{"null is unset", nil, "x", true},
		{"quantities", "1000m", "1", true},
		{"different quantities", "1", "2", false},
		{"extra live keys", map[string]any{"a": "1"}, map[string]any{"a": "1", "b": "2"}, true},
		{"missing live key", map[string]any{"a": "1"}, map[string]any{"b": "2"}, false},
		{"removed label", map[string]any{"labels": map[string]any{"x": "y"}}, map[string]any{"labels": map[string]any{}}, false},
		{"list in any order", []any{"a", "b"}, []any{"b", "a"}, true},
		{"list with extra live elements", []any{map[string]any{"uid": "1"}}, []any{map[string]any{"uid": "2"}, map[string]any{"uid": "1", "kind": "X"}}, true},
		{"list element missing", []any{"a", "c"}, []any{"a", "b"}, false},
		{"empty list is unset", []any{}, nil, true},
		{"list against scalar", []any{"a"}, "a", false},
		{"map against scalar", map[string]any{"a": "1"}, "a", false},
		{"type mismatch", "3", int64(3), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (&drift{}).covers(tt.desired, tt.live); got != tt.want {
				t.Errorf("covers(%v, %v) = %t, want %t", tt.desired, tt.live, got, tt.want)
			}
		})
	}
}

func TestHashIgnoresItselfAndOrder(t *testing.T) {
	a := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "x", "labels": map[string]any{"a": "1", "b": "2"}},
		"data":     map[string]any{"k": "v"},
	}}
	b := a.DeepCopy()
	b.SetLabels(map[string]string{"b": "2", "a": "1"})
	b.SetAnnotations(map[string]string{annotationHash: "old"})
	ha, err := hashOf(a)
	if err != nil {
		t.Fatal(err)
	}
	hb, err := hashOf(b)
	if err != nil {
		t.Fatal(err)
	}
	if ha != hb {
		t.Errorf("hashes differ for the same object: %s and %s", ha, hb)
	}
	c := a.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "data", "k")
	hc, err := hashOf(c)
	if err != nil {
		t.Fatal(err)
	}
	if hc == ha {
		t.Errorf("removing a field left the hash %s unchanged", ha)
	}
}

func TestToUnstructuredDropsServerFields(t *testing.T) {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "x", ResourceVersion: "7", UID: "u", Generation: 2, CreationTimestamp: metav1.Now()},
		Data:       map[string]string{"k": "v"},
	}
	u, err := toUnstructured(cm)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"metadata": map[string]any{"name": "x"}, "data": map[string]any{"k": "v"}}
	if diff := cmp.Diff(want, u.Object); diff != "" {
		t.Errorf("applied form (-want +got):\n%s", diff)
	}
}

func TestDefaultReadiness(t *testing.T) {
	tests := []struct {
		name string
		obj  client.Object
		want bool
	}{
		{"deployment available", &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Generation: 2},
			Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)},
			Status:     availableStatus(2, 2),
		}, true},
		{"deployment not seen", &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Generation: 3},
			Status:     appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 1, AvailableReplicas: 1},
		}, false},
		{"deployment short of replicas", &appsv1.Deployment{
			Spec:   appsv1.DeploymentSpec{Replicas: ptr.To[int32](3)},
			Status: appsv1.DeploymentStatus{UpdatedReplicas: 3, AvailableReplicas: 2},
		}, false},
		{"statefulset ready", &appsv1.StatefulSet{Status: appsv1.StatefulSetStatus{Replicas: 1, ReadyReplicas: 1, CurrentReplicas: 1, UpdatedReplicas: 1, CurrentRevision: "r1", UpdateRevision: "r1"}}, true},
		{"statefulset rolling", &appsv1.StatefulSet{Status: appsv1.StatefulSetStatus{Replicas: 1, ReadyReplicas: 1, CurrentReplicas: 1, CurrentRevision: "r1", UpdateRevision: "r2"}}, false},
		{"daemonset short", &appsv1.DaemonSet{Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, UpdatedNumberScheduled: 3, NumberAvailable: 2}}, false},
		{"job complete", &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}}, true},
		{"job failed", &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}}}, false},
		{"job running", &batchv1.Job{}, false},
		{"cluster ip service", &corev1.Service{}, true},
		{"load balancer without address", &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer}}, false},
		{"pvc pending", &corev1.PersistentVolumeClaim{Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}, false},
		{"pod ready", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}, true},
		{"configmap present", &corev1.ConfigMap{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := DefaultReadiness(tt.obj)
			if got != tt.want {
				t.Errorf("ready = %t (%q), want %t", got, msg, tt.want)
			}
			if !got && msg == "" {
				t.Error("not ready without a message")
			}
		})
	}
}

func TestConditions(t *testing.T) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("example.com/v1")
	u.SetKind("Gadget")
	s := NewStep[*testapi.Widget]("s", nil, []Kind{
		Of(&appsv1.Deployment{}),
		{Object: &corev1.ConfigMap{}, Condition: "ConfigReady"},
		Of(u),
	})
	if diff := cmp.Diff([]string{"DeploymentReady", "ConfigReady", "GadgetReady"}, s.Conditions()); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if got := NewStep[*corev1.ConfigMap]("s", nil, []Kind{Of(&corev1.Secret{})}).Conditions(); got != nil {
		t.Errorf("a parent without conditions gets conditions %v", got)
	}
}

func TestResolveRejects(t *testing.T) {
	scheme := testScheme(t)
	tests := []struct {
		name  string
		kinds []Kind
	}{
		{"nil object", []Kind{{}}},
		{"twice", []Kind{Of(&corev1.ConfigMap{}), Of(&corev1.ConfigMap{})}},
		{"not in scheme", []Kind{Of(&testapi.Widget{})}},
		{"shared condition", []Kind{{Object: &corev1.ConfigMap{}, Condition: "X"}, {Object: &corev1.Secret{}, Condition: "X"}}},
		{"unstructured without kind", []Kind{Of(&unstructured.Unstructured{})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := resolve(tt.kinds, scheme); err == nil {
				t.Error("resolve accepted the kinds")
			}
		})
	}
}

// testScheme returns a scheme with the built-in kinds only.
func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// widgetScheme returns a scheme with the built-in kinds and the Widget.
func widgetScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := testScheme(t)
	if err := testapi.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestReportMessageIsBounded reports 2000 long-named children that are not
// created yet: the ConfigMapReady message names a few, counts the rest,
// and stays far below the API server's limit.
func TestReportMessageIsBounded(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	step := NewStep[*testapi.Widget]("many", nil, []Kind{Of(&corev1.ConfigMap{})})
	ks, err := step.kinds(scheme)
	if err != nil {
		t.Fatal(err)
	}
	p := &pass{}
	for i := range 2000 {
		name := fmt.Sprintf("%s-%04d", strings.Repeat("n", 240), i)
		p.children = append(p.children, &child{kind: &ks[0], ref: Ref{Kind: "ConfigMap", Namespace: "ns", Name: name}})
	}
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", Generation: 1}}
	req := &bosun.Pass[*testapi.Widget]{Object: w, Client: fake.NewClientBuilder().WithScheme(scheme).Build()}
	reportKinds(step, req, p)
	c := conditions.Find(w.Status.Conditions, "ConfigMapReady")
	if c == nil {
		t.Fatal("no ConfigMapReady condition")
	}
	if len(c.Message) > 8192 {
		t.Errorf("message is %d bytes, want a short one", len(c.Message))
	}
	if !strings.Contains(c.Message, "2000 of 2000 ConfigMap not ready") || !strings.HasSuffix(c.Message, "and 1980 more") {
		t.Errorf("message = %.300q..., want the count and %q", c.Message, "and 1980 more")
	}
}

// TestPlanRecoversPanic checks that Plan, which runs outside the engine,
// turns a panic of the desired-set function into an error.
func TestPlanRecoversPanic(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	step := NewStep("boom", func(context.Context, *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		panic("boom")
	}, []Kind{Of(&corev1.ConfigMap{})})
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w"}}
	_, err := step.Plan(t.Context(), &bosun.Pass[*testapi.Widget]{Object: w, Client: fake.NewClientBuilder().WithScheme(scheme).Build()})
	if r, _, _ := conditions.FromError(err); r != conditions.ReasonPanic {
		t.Errorf("Plan error %v has reason %q, want %q", err, r, conditions.ReasonPanic)
	}
}

// TestNoChildrenForAParentGone checks that a pass that a child's deletion
// brought does not make the missing child again when the parent is gone
// from the API server (the garbage collector deleting the children of a
// deleted parent, whose own delete event has not reached the cache), and
// does make it when the parent is there, or when another event brought
// the pass; and that a pass does not put its owner reference back on a
// child the garbage collector orphaned for a parent being deleted, which
// the cache does not show yet.
func TestNoChildrenForAParentGone(t *testing.T) {
	scheme := widgetScheme(t)
	childDeleted := bosun.Trigger{Kind: "Watch", Source: "Owns", Event: "Delete", Object: client.ObjectKey{Namespace: "ns", Name: "w-index"}}
	// A child of the parent's own name, as a Deployment and a Service of
	// a Memcached are: seen failing before the fix (taken for the
	// parent's own delete, and made again).
	namesake := bosun.Trigger{Kind: "Watch", Source: "Owns", Event: "Delete", Object: client.ObjectKey{Namespace: "ns", Name: "w"}}
	// The child as the cache shows it: missing, without the parent's owner
	// reference (the garbage collector took it off for an orphan delete of
	// the parent, and the cache does not show that delete yet), or owned.
	const (
		missing = iota
		orphaned
		owned
	)
	tests := []struct {
		name      string
		trigger   *bosun.Trigger
		child     int
		parentIn  bool
		deleting  bool
		wantApply int
	}{
		{"parent gone, a child's deletion", &childDeleted, missing, false, false, 0},
		{"parent gone, the deletion of a child of its name", &namesake, missing, false, false, 0},
		{"parent being deleted, a child's deletion", &childDeleted, missing, true, true, 0},
		{"parent there, a child's deletion", &childDeleted, missing, true, false, 1},
		{"parent there, the deletion of a child of its name", &namesake, missing, true, false, 1},
		{"parent gone, another cause", nil, missing, false, false, 1},
		// Seen failing before the fix: 1 apply, which put the owner
		// reference back, and the garbage collector deleted the child
		// (TestGarbageCollectorCollectsChildren/orphan in CI).
		{"parent being deleted, an orphaned child", nil, orphaned, true, true, 0},
		{"parent gone, an orphaned child", nil, orphaned, false, false, 0},
		{"parent there, an orphaned child", nil, orphaned, true, false, 1},
		{"parent gone, an owned child", nil, owned, false, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step := NewStep[*testapi.Widget]("site", nil, []Kind{Of(&corev1.ConfigMap{})})
			ks, err := step.kinds(scheme)
			if err != nil {
				t.Fatal(err)
			}
			w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", UID: "uid-w", Generation: 1}}
			reader := fake.NewClientBuilder().WithScheme(scheme)
			if tt.parentIn {
				live := w.DeepCopy()
				if tt.deleting {
					live.DeletionTimestamp, live.Finalizers = &metav1.Time{Time: time.Now()}, []string{"test.bosun.dev/hold"}
				}
				reader = reader.WithObjects(live)
			}
			applies := 0
			cl := interceptor.NewClient(fake.NewClientBuilder().WithScheme(scheme).Build(), interceptor.Funcs{
				Apply: func(context.Context, client.WithWatch, runtime.ApplyConfiguration, ...client.ApplyOption) error {
					applies++
					return nil
				},
			})
			cm := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"namespace": "ns", "name": "w-index"},
			}}
			ownerRef := metav1.OwnerReference{APIVersion: "test.bosun.dev/v1", Kind: "Widget", Name: "w", UID: w.UID, Controller: ptr.To(true)}
			cm.SetOwnerReferences([]metav1.OwnerReference{ownerRef})
			c := &child{kind: &ks[0], ref: Ref{Kind: "ConfigMap", Namespace: "ns", Name: "w-index"}, change: true, applied: cm}
			switch tt.child {
			case orphaned:
				c.live = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w-index", UID: "uid-cm"}}
			case owned:
				c.live = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w-index", UID: "uid-cm", OwnerReferences: []metav1.OwnerReference{ownerRef}}}
			}
			p := &pass{children: []*child{c}}
			req := &bosun.Pass[*testapi.Widget]{Object: w, Client: cl, APIReader: reader.Build(), Log: logr.Discard()}
			if tt.trigger != nil {
				req.Trigger = *tt.trigger
			}
			if _, err := applyChildren(t.Context(), step, req, p); err != nil {
				t.Fatal(err)
			}
			if applies != tt.wantApply {
				t.Errorf("%d applies, want %d", applies, tt.wantApply)
			}
		})
	}
}
