package ref

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// onceKey is the key of Builder.Once for one step's setup.
type onceKey struct{ field string }

// selects reports whether the selector of r matches the labels of obj. A
// selector that does not parse matches nothing.
func selects(r Reference, obj client.Object) bool {
	if r.Selector == nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(r.Selector)
	if err != nil {
		return false
	}
	return sel.Matches(labels.Set(obj.GetLabels()))
}

// listOf returns an empty list of obj's kind, made by scheme.
func listOf(scheme *runtime.Scheme, obj client.Object) (client.ObjectList, error) {
	if scheme == nil {
		return nil, errors.New("no scheme")
	}
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return nil, fmt.Errorf("the kind of %T: %w", obj, err)
	}
	listKind := gvk.GroupVersion().WithKind(gvk.Kind + "List")
	made, err := scheme.New(listKind)
	if err != nil {
		return nil, fmt.Errorf("the list type of %s: %w", gvk.Kind, err)
	}
	list, ok := made.(client.ObjectList)
	if !ok {
		return nil, fmt.Errorf("the list type of %s: %T is not a list", gvk.Kind, made)
	}
	return list, nil
}
