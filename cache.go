package bosun

import (
	"k8s.io/apimachinery/pkg/api/meta"
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
// managedFields when a write leaves them out. A controller that reads
// managedFields from the cache must not use it (or must read around the
// cache, with the manager's APIReader).
func LeanCache(o *cache.Options) {
	o.DefaultTransform = stripManagedFields(o.DefaultTransform)
}

// stripManagedFields returns a transform that runs then, when set, and
// drops the managedFields of the object it returns.
func stripManagedFields(then toolscache.TransformFunc) toolscache.TransformFunc {
	return func(in any) (any, error) {
		if then != nil {
			out, err := then(in)
			if err != nil {
				return nil, err
			}
			in = out
		}
		if obj, err := meta.Accessor(in); err == nil && obj.GetManagedFields() != nil {
			obj.SetManagedFields(nil)
		}
		return in, nil
	}
}
