package unit

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/children"
)

// ChildOf returns a copy of child marked as a member of the set named set
// of parent, as the children step (package children) marks each child it
// applies: the labels children.LabelSet (set) and children.LabelOwner (the
// parent's UID), a controller owner reference to parent that blocks its
// deletion, and the parent's namespace when child has none. The set's name
// is the step's (the name given to children.NewStep or
// children.Generating). Put the copy in Case.Given for a child an earlier
// pass made, or in Case.ExpectObjects to expect the step's marks too.
//
// scheme tells parent's kind, for the owner reference. parent must have a
// UID, as every stored object has: give the test's object one. The copy
// carries no hash of an earlier apply (the step's own annotation), so the
// step applies a given child once even when it is as desired. The children
// of children.NewUnownedStep carry the parent's key in annotations
// instead of an owner reference: ChildOf does not make those.
func ChildOf[C client.Object](t bosuntest.TB, scheme *runtime.Scheme, parent client.Object, set string, child C) C {
	t.Helper()
	switch {
	case parent == nil || reflect.ValueOf(parent).IsNil():
		t.Fatalf("unit: ChildOf: no parent")
	case reflect.ValueOf(child).IsNil():
		t.Fatalf("unit: ChildOf: no child")
	case parent.GetUID() == "":
		t.Fatalf("unit: ChildOf: parent %s has no UID: give it one, as the API server would", client.ObjectKeyFromObject(parent))
	case set == "":
		t.Fatalf("unit: ChildOf: no set name: give the children step's name")
	}
	gvk, err := apiutil.GVKForObject(parent, scheme)
	if err != nil {
		t.Fatalf("unit: ChildOf: the kind of the parent: %v", err)
	}
	c := child.DeepCopyObject().(C)
	if c.GetNamespace() == "" {
		c.SetNamespace(parent.GetNamespace())
	}
	labels := c.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[children.LabelSet] = set
	labels[children.LabelOwner] = string(parent.GetUID())
	c.SetLabels(labels)
	c.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion:         gvk.GroupVersion().String(),
		Kind:               gvk.Kind,
		Name:               parent.GetName(),
		UID:                parent.GetUID(),
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}})
	return c
}
