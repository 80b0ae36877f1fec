package bosun

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// LeanCache trims what a manager's cache keeps of every object to what
// controllers read: it drops metadata.managedFields, the server-side apply
// bookkeeping that is often the largest part of a small object (some 40%
// of the heap of a cache of small custom resources), after any
// DefaultTransform o already has. Package operator sets it on the managers
// it makes; pass a manager's cache options through it to do the same:
//
//	opts := ctrl.Options{Scheme: scheme}
//	bosun.LeanCache(&opts.Cache)
//	mgr, err := ctrl.NewManager(cfg, opts)
//
// It is safe for the engine and for steps that write with patches,
// server-side apply or Update: the API server keeps an object's
// managedFields when a write leaves them out. The children of a set
// (objects labelled bosun.dev/set, see package children) keep their
// managedFields but the entries of subresources (status, scale): the
// children step reads its own Apply entries to tell a field it set to its
// zero value from one another manager changed, and the other managers'
// entries to tell an empty list or map it set that another manager
// filled in from elements merged into it. A controller that reads the
// managedFields of other objects from the cache must not use it (or must
// read around the cache, with the manager's APIReader).
func LeanCache(o *cache.Options) {
	o.DefaultTransform = stripManagedFields(o.DefaultTransform)
}

// setLabel marks the children of a set (children.LabelSet).
const setLabel = "bosun.dev/set"

// stripManagedFields returns a transform that runs then, when set, and
// drops the managedFields of the object it returns, but for the entries
// of the children of a set that are not of a subresource.
func stripManagedFields(then toolscache.TransformFunc) toolscache.TransformFunc {
	return func(in any) (any, error) {
		if then != nil {
			out, err := then(in)
			if err != nil {
				return nil, err
			}
			in = out
		}
		obj, err := meta.Accessor(in)
		if err != nil || obj.GetManagedFields() == nil {
			return in, nil
		}
		if _, child := obj.GetLabels()[setLabel]; !child {
			obj.SetManagedFields(nil)
			return in, nil
		}
		var kept []metav1.ManagedFieldsEntry
		for _, e := range obj.GetManagedFields() {
			if e.Subresource == "" {
				kept = append(kept, e)
			}
		}
		obj.SetManagedFields(kept)
		return in, nil
	}
}
