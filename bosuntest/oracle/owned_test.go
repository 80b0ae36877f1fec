package oracle_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/oracle"
	"github.com/bosunkit/bosun/internal/testapi"
)

func TestControlled(t *testing.T) {
	cp := shared.ControlPlane(t)
	c := cp.Client
	ns := bosuntest.Namespace(t, c)
	a := createWidget(t, c, ns, "a")
	b := createWidget(t, c, ns, "b")
	ref := func(w *testapi.Widget, controller bool) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: testapi.GroupVersion.String(), Kind: "Widget", Name: w.Name, UID: w.UID, Controller: ptr.To(controller)}
	}
	for name, refs := range map[string][]metav1.OwnerReference{
		"a-1":      {ref(a, true)},
		"a-2":      {ref(b, false), ref(a, true)}, // owned by b, controlled by a
		"b-1":      {ref(b, true)},
		"loose":    nil,
		"owned-by": {ref(b, false)},
	} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: refs}}
		if err := c.Create(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
	}
	want := map[types.UID][]string{a.UID: {"a-1", "a-2"}, b.UID: {"b-1"}}

	typed, err := oracle.Controlled[*corev1.ConfigMap](t.Context(), c, ns, &corev1.ConfigMapList{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, names(typed)); diff != "" {
		t.Errorf("Controlled, typed (-want +got):\n%s", diff)
	}

	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("v1")
	list.SetKind("ConfigMapList")
	loose, err := oracle.Controlled[*unstructured.Unstructured](t.Context(), c, ns, list)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, names(loose)); diff != "" {
		t.Errorf("Controlled, unstructured (-want +got):\n%s", diff)
	}

	if _, err := oracle.Controlled[*corev1.Secret](t.Context(), c, ns, &corev1.ConfigMapList{}); err == nil || !strings.Contains(err.Error(), "not a *v1.Secret") {
		t.Errorf("Controlled with the wrong item type = %v, want it refused", err)
	}

	if diff := cmp.Diff([]types.UID{b.UID, a.UID}, oracle.UIDs([]client.Object{b, a})); diff != "" {
		t.Errorf("UIDs (-want +got):\n%s", diff)
	}
}

// names returns the names of the objects of byOwner.
func names[T client.Object](byOwner map[types.UID][]T) map[types.UID][]string {
	out := map[types.UID][]string{}
	for uid, objs := range byOwner {
		for _, o := range objs {
			out[uid] = append(out[uid], o.GetName())
		}
	}
	return out
}
