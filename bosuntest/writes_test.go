package bosuntest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
)

// newPod returns a Pod that the API server accepts; without a scheduler it
// stays pending.
func newPod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "example.invalid/main"}}},
	}
}

func TestWriteCounter(t *testing.T) {
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	ctx := t.Context()
	var counter bosuntest.WriteCounter
	c := counter.Wrap(cp.Client)

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}, Data: map[string]string{"a": "1"}}
	pod := newPod(ns, "pod")
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	must("create ConfigMap", c.Create(ctx, cm))
	again := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}}
	if err := c.Create(ctx, again); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating the ConfigMap again: %v, want AlreadyExists", err)
	}
	cm.Data["b"] = "2"
	must("update ConfigMap", c.Update(ctx, cm))
	base := cm.DeepCopy()
	cm.Data["c"] = "3"
	must("patch ConfigMap", c.Patch(ctx, cm, client.MergeFrom(base)))
	must("apply ConfigMap", c.Apply(ctx, corev1ac.ConfigMap("applied", ns).WithData(map[string]string{"x": "y"}),
		client.FieldOwner("bosuntest")))
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace(ns)
	u.SetName("applied-unstructured")
	must("apply unstructured ConfigMap", c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("bosuntest")))
	must("create Pod", c.Create(ctx, pod))
	pod.Status.Message = "updated"
	must("update Pod status", c.Status().Update(ctx, pod))
	base2 := pod.DeepCopy()
	pod.Status.Message = "patched"
	must("patch Pod status", c.Status().Patch(ctx, pod, client.MergeFrom(base2)))
	must("evict Pod", c.SubResource("eviction").Create(ctx, pod, &policyv1.Eviction{}))
	must("delete ConfigMap", c.Delete(ctx, cm))
	must("delete all ConfigMaps", c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(ns)))

	// Reads are not counted.
	must("get Namespace", c.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{}))
	must("list ConfigMaps", c.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns)))
	// Writes made around the counting client are not counted.
	must("create ConfigMap directly", cp.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "direct"}}))

	want := []bosuntest.Write{
		{Verb: "create", Kind: "ConfigMap", Namespace: ns, Name: "cm"},
		{Verb: "create", Kind: "ConfigMap", Namespace: ns, Name: "cm"},
		{Verb: "update", Kind: "ConfigMap", Namespace: ns, Name: "cm"},
		{Verb: "patch", Kind: "ConfigMap", Namespace: ns, Name: "cm"},
		{Verb: "apply", Kind: "ConfigMap", Namespace: ns, Name: "applied"},
		{Verb: "apply", Kind: "ConfigMap", Namespace: ns, Name: "applied-unstructured"},
		{Verb: "create", Kind: "Pod", Namespace: ns, Name: "pod"},
		{Verb: "update", Subresource: "status", Kind: "Pod", Namespace: ns, Name: "pod"},
		{Verb: "patch", Subresource: "status", Kind: "Pod", Namespace: ns, Name: "pod"},
		{Verb: "create", Subresource: "eviction", Kind: "Pod", Namespace: ns, Name: "pod"},
		{Verb: "delete", Kind: "ConfigMap", Namespace: ns, Name: "cm"},
		{Verb: "deleteallof", Kind: "ConfigMap", Namespace: ns},
	}
	if diff := cmp.Diff(want, counter.Writes()); diff != "" {
		t.Errorf("Writes() (-want +got):\n%s", diff)
	}
	wantCounts := map[string]int{
		"create ConfigMap":      2,
		"update ConfigMap":      1,
		"patch ConfigMap":       1,
		"apply ConfigMap":       2,
		"create Pod":            1,
		"update status Pod":     1,
		"patch status Pod":      1,
		"create eviction Pod":   1,
		"delete ConfigMap":      1,
		"deleteallof ConfigMap": 1,
	}
	if diff := cmp.Diff(wantCounts, counter.Counts()); diff != "" {
		t.Errorf("Counts() (-want +got):\n%s", diff)
	}
	if got := counter.Total(); got != len(want) {
		t.Errorf("Total() = %d, want %d", got, len(want))
	}

	counter.Reset()
	if got := counter.Total(); got != 0 {
		t.Errorf("Total() after Reset = %d, want 0", got)
	}
	if got := counter.Counts(); len(got) != 0 {
		t.Errorf("Counts() after Reset = %v, want none", got)
	}
	must("create after Reset", c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "after"}}))
	if diff := cmp.Diff(map[string]int{"create ConfigMap": 1}, counter.Counts()); diff != "" {
		t.Errorf("Counts() after Reset and a create (-want +got):\n%s", diff)
	}
}

func TestWriteString(t *testing.T) {
	tests := []struct {
		w          bosuntest.Write
		op, string string
	}{
		{
			w:  bosuntest.Write{Verb: "patch", Subresource: "status", Kind: "Greeting", Namespace: "ns", Name: "hello"},
			op: "patch status Greeting", string: "patch status Greeting ns/hello",
		},
		{w: bosuntest.Write{Verb: "create", Kind: "Namespace", Name: "ns"}, op: "create Namespace", string: "create Namespace ns"},
	}
	for _, tt := range tests {
		if got := tt.w.Op(); got != tt.op {
			t.Errorf("%#v.Op() = %q, want %q", tt.w, got, tt.op)
		}
		if got := tt.w.String(); got != tt.string {
			t.Errorf("%#v.String() = %q, want %q", tt.w, got, tt.string)
		}
	}
}

func TestWriteCounterSharedByClients(t *testing.T) {
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	var counter bosuntest.WriteCounter
	a, b := counter.Wrap(cp.Client), counter.Wrap(cp.Client)
	for i, c := range []client.Client{a, b} {
		name := []string{"a", "b"}[i]
		if err := c.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
			t.Fatalf("creating %s: %v", name, err)
		}
	}
	if got := counter.Total(); got != 2 {
		t.Errorf("Total() = %d, want the 2 writes of both clients", got)
	}
}

func TestNewClientFunc(t *testing.T) {
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	var counter bosuntest.WriteCounter
	injector := &bosuntest.ConflictInjector{Fraction: 1, Verbs: []string{"update"}}
	newClient := bosuntest.NewClientFunc(injector.Wrap, counter.Wrap)
	c, err := newClient(cp.Config, client.Options{Scheme: cp.Scheme})
	if err != nil {
		t.Fatalf("creating client: %v", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}}
	if err := c.Create(t.Context(), cm); err != nil {
		t.Fatalf("creating ConfigMap: %v", err)
	}
	if err := c.Update(t.Context(), cm); !apierrors.IsConflict(err) {
		t.Fatalf("updating ConfigMap: %v, want the injected conflict", err)
	}
	// The counter wraps the injector, so it counts the refused update too.
	if diff := cmp.Diff(map[string]int{"create ConfigMap": 1, "update ConfigMap": 1}, counter.Counts()); diff != "" {
		t.Errorf("Counts() (-want +got):\n%s", diff)
	}
	if got := injector.Injected(); got != 1 {
		t.Errorf("Injected() = %d, want 1", got)
	}

	if _, err := newClient(nil, client.Options{}); err == nil {
		t.Error("NewClientFunc's function accepted a nil config")
	}
}

func TestWrappedClientWatch(t *testing.T) {
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	var counter bosuntest.WriteCounter

	// cp.Client, like a manager's client, cannot watch.
	_, err := counter.Wrap(cp.Client).Watch(t.Context(), &corev1.ConfigMapList{}, client.InNamespace(ns))
	if !errors.Is(err, bosuntest.ErrWatchUnsupported) {
		t.Errorf("Watch through a client that cannot watch: %v, want ErrWatchUnsupported", err)
	}

	ww, err := client.NewWithWatch(cp.Config, client.Options{Scheme: cp.Scheme})
	if err != nil {
		t.Fatalf("creating watching client: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w, err := counter.Wrap(ww).Watch(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatalf("Watch through a watching client: %v", err)
	}
	defer w.Stop()
	if err := cp.Client.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "seen"}}); err != nil {
		t.Fatalf("creating ConfigMap: %v", err)
	}
	ev := <-w.ResultChan()
	if got := ev.Object.(client.Object).GetName(); got != "seen" {
		t.Errorf("watched event for %q, want %q", got, "seen")
	}
}

func TestManagerWithClient(t *testing.T) {
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	var counter bosuntest.WriteCounter
	bosuntest.RunManager(t, cp, func(mgr ctrl.Manager) error {
		return setupCopier(ns)(bosuntest.ManagerWithClient(mgr, counter.Wrap(mgr.GetClient())))
	})
	src := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "src", Labels: map[string]string{"bosuntest/copy": "yes"}},
		Data:       map[string]string{"value": "v"},
	}
	if err := cp.Client.Create(t.Context(), src); err != nil {
		t.Fatalf("creating source ConfigMap: %v", err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		return cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "src-copy"}, &corev1.ConfigMap{})
	})
	// The copier's create went through the counting client; the test's own
	// create of the source did not.
	bosuntest.Eventually(t, func(context.Context) error {
		want := []bosuntest.Write{{Verb: "create", Kind: "ConfigMap", Namespace: ns, Name: "src-copy"}}
		if diff := cmp.Diff(want, counter.Writes()); diff != "" {
			return errors.New("writes (-want +got):\n" + diff)
		}
		return nil
	})
}
