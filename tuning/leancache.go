package tuning

import (
	"unique"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/trim"
)

// LeanCache trims what a manager's cache keeps of every object to what
// controllers read, through the cache's DefaultTransform (after any
// transform o already has): it drops metadata.managedFields, the
// server-side apply bookkeeping that is often the largest part of a small
// object, and shares the short strings many objects hold alike. Package
// operator sets it on the managers it makes; pass a manager's cache
// options through it to do the same:
//
//	opts := ctrl.Options{Scheme: scheme}
//	tuning.LeanCache(&opts.Cache)
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
//
// The strings it shares are those each object decoded from the API server
// has a copy of: its namespace, its label and annotation keys and short
// values, its owner references' API versions and kinds, its API version
// and kind, its finalizers and its conditions' types, statuses and
// reasons. The cache keeps one copy of each (Go's package unique).
// Strings are immutable, so nothing a controller does with them can tell.
//
// Together the two halve the heap of a cache of small custom resources
// (docs/TUNING.md). LeanCache changes nothing else: the cache's informers,
// its HTTP client and its RESTMapper are controller-runtime's.
func LeanCache(o *cache.Options) {
	then := o.DefaultTransform
	o.DefaultTransform = func(in any) (any, error) {
		if then != nil {
			out, err := then(in)
			if err != nil {
				return nil, err
			}
			in = out
		}
		if obj, err := meta.Accessor(in); err == nil {
			stripManagedFields(obj)
			shareStrings(in, obj)
		}
		return in, nil
	}
}

// shareLimit is the longest string shareStrings shares: longer ones (a
// message, a blob in an annotation) are seldom held by two objects.
const shareLimit = 64

// share returns the canonical copy of s, or s itself when it is long.
func share(s string) string {
	if s == "" || len(s) > shareLimit {
		return s
	}
	return unique.Make(s).Value()
}

// shareMap returns m with its keys and short values replaced by their
// canonical copies: a new map, as a map keeps its own copy of a key that
// is set again.
func shareMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[share(k)] = share(v)
	}
	return out
}

// shareStrings replaces the strings of in, whose metadata is obj, that
// objects commonly hold alike with shared copies (see LeanCache).
func shareStrings(in any, obj metav1.Object) {
	if ro, ok := in.(runtime.Object); ok {
		if tm, ok := ro.GetObjectKind().(*metav1.TypeMeta); ok {
			tm.APIVersion, tm.Kind = share(tm.APIVersion), share(tm.Kind)
		}
	}
	obj.SetNamespace(share(obj.GetNamespace()))
	if l := obj.GetLabels(); len(l) > 0 {
		obj.SetLabels(shareMap(l))
	}
	if a := obj.GetAnnotations(); len(a) > 0 {
		obj.SetAnnotations(shareMap(a))
	}
	if fs := obj.GetFinalizers(); len(fs) > 0 {
		for i := range fs {
			fs[i] = share(fs[i])
		}
		obj.SetFinalizers(fs)
	}
	if refs := obj.GetOwnerReferences(); len(refs) > 0 {
		for i := range refs {
			refs[i].APIVersion, refs[i].Kind = share(refs[i].APIVersion), share(refs[i].Kind)
		}
		obj.SetOwnerReferences(refs)
	}
	if co, ok := in.(conditions.Object); ok {
		if conds := co.GetConditions(); len(conds) > 0 {
			for i := range conds {
				c := &conds[i]
				c.Type, c.Status, c.Reason, c.Message = share(c.Type), metav1.ConditionStatus(share(string(c.Status))), share(c.Reason), share(c.Message)
			}
			co.SetConditions(conds)
		}
	}
}

// setLabel marks the children of a set (children.LabelSet).
const setLabel = trim.KeepLabel

// stripManagedFields drops the managedFields of obj, but for the entries
// of the children of a set that are not of a subresource.
func stripManagedFields(obj metav1.Object) {
	if obj.GetManagedFields() == nil {
		return
	}
	if _, child := obj.GetLabels()[setLabel]; !child {
		obj.SetManagedFields(nil)
		return
	}
	var kept []metav1.ManagedFieldsEntry
	for _, e := range obj.GetManagedFields() {
		if e.Subresource == "" {
			kept = append(kept, e)
		}
	}
	obj.SetManagedFields(kept)
}
