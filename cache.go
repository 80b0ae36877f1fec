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
// (objects labelled bosun.dev/set, see package children) keep the entries
// of their server-side applies, which the children step reads to tell a
// field it set to its zero value from one another manager changed; only
// their Update entries go. A controller that reads other managedFields
// from the cache must not use it (or must read around the cache, with the
// manager's APIReader).
func LeanCache(o *cache.Options) {
	o.DefaultTransform = stripManagedFields(o.DefaultTransform)
}

// setLabel marks the children of a set (children.LabelSet).
const setLabel = "bosun.dev/set"

// stripManagedFields returns a transform that runs then, when set, and
// drops the managedFields of the object it returns, but for the Apply
// entries of the children of a set.
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
		var applied []metav1.ManagedFieldsEntry
		for _, e := range obj.GetManagedFields() {
			if e.Operation == metav1.ManagedFieldsOperationApply {
				applied = append(applied, e)
			}
		}
		obj.SetManagedFields(applied)
		return in, nil
	}
}
