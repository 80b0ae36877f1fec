package oracle

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// UIDs returns the UIDs of objs, in order: the owners NoOrphans takes, or
// the keys of what Controlled returns.
func UIDs(objs []client.Object) []types.UID {
	out := make([]types.UID, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.GetUID())
	}
	return out
}

// Controlled lists list in namespace ("" for all namespaces) and returns
// its items by the UID of the object that controls them: the owner of
// their ownerReference with controller set. Items with no controller are
// left out. T is the type of an item as the list holds it, such as
// *batchv1.Job for a *batchv1.JobList or *unstructured.Unstructured for an
// *unstructured.UnstructuredList; any other type is refused.
//
// A test checks with it that each object controls the children it should,
// and counts duplicates: an object controlling two children where it
// should control one.
func Controlled[T client.Object](ctx context.Context, c client.Client, namespace string, list client.ObjectList) (map[types.UID][]T, error) {
	l := freshList(list)
	if err := c.List(ctx, l, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("oracle: listing %s: %w", kindOf(c, list), err)
	}
	objs, err := items(l)
	if err != nil {
		return nil, fmt.Errorf("oracle: %w", err)
	}
	out := map[types.UID][]T{}
	for _, o := range objs {
		item, ok := o.(T)
		if !ok {
			var want T
			return nil, fmt.Errorf("oracle: an item of %s is a %T, not a %T", kindOf(c, list), o, want)
		}
		if ref := metav1.GetControllerOf(o); ref != nil {
			out[ref.UID] = append(out[ref.UID], item)
		}
	}
	return out, nil
}
