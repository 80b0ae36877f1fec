package bosun

import (
	"sync"
	"unique"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/trim"
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
//
// It also shares the strings that many objects hold alike: each object
// decoded from the API server has its own copy of its namespace, its
// label and annotation keys and short values, its owner references' API
// versions and kinds, its API version and kind, its finalizers and its
// conditions' types, statuses and reasons; the cache keeps one copy of
// each (Go's package unique),
// which takes a further tenth or so off a cache of small objects. Strings
// are immutable, so nothing a controller does with them can tell.
//
// When o carries an HTTP client, as the options a manager passes to its
// NewCache do, the cache reads through a copy of it that drops
// managedFields from the list and watch answers before they are decoded
// (but the children's, as above): they are about half the JSON of a small
// custom resource and more than half the CPU of decoding it. Package
// operator applies LeanCache there; to do the same:
//
//	opts.NewCache = func(cfg *rest.Config, o cache.Options) (cache.Cache, error) {
//		bosun.LeanCache(&o)
//		return cache.New(cfg, o)
//	}
//
// Its informers build their namespace index only when they are asked for
// the objects of one namespace while they hold objects of another: an
// informer of a cache over given namespaces (DefaultNamespaces) holds one
// namespace only, and answers such a list from all it holds. It wraps any
// NewInformer o already has.
//
// Its reads look up the scope of each kind and version in o's Mapper once
// rather than on every read (a cache over several namespaces asks it for
// every Get and List, which took 4% of a controller's CPU).
func LeanCache(o *cache.Options) {
	if o.HTTPClient != nil {
		o.HTTPClient = trim.Reads(o.HTTPClient)
	}
	if o.Mapper != nil {
		o.Mapper = &rememberingMapper{RESTMapper: o.Mapper}
	}
	o.NewInformer = lazyNamespaces(o.NewInformer)
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

// rememberingMapper is a RESTMapper that keeps the mapping of each kind
// asked for in one given version: a kind's scope and resource do not
// change while it is served in that version. Other lookups, and failed
// ones, go to the RESTMapper each time.
type rememberingMapper struct {
	meta.RESTMapper
	mappings sync.Map // schema.GroupVersionKind to *meta.RESTMapping
}

// RESTMapping returns a copy of the mapping kept for gk in versions[0],
// asking the RESTMapper on first use.
func (m *rememberingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if len(versions) != 1 || versions[0] == "" {
		return m.RESTMapper.RESTMapping(gk, versions...)
	}
	gvk := gk.WithVersion(versions[0])
	if v, ok := m.mappings.Load(gvk); ok {
		mapping := *v.(*meta.RESTMapping)
		return &mapping, nil
	}
	mapping, err := m.RESTMapper.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	kept := *mapping
	m.mappings.Store(gvk, &kept)
	return mapping, nil
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

// shareMap replaces the keys and short values of m with their canonical
// copies, in place.
func shareMap(m map[string]string) {
	for k, v := range m {
		sk, sv := share(k), share(v)
		if unsafe.StringData(sk) == unsafe.StringData(k) {
			if unsafe.StringData(sv) != unsafe.StringData(v) {
				m[k] = sv
			}
			continue
		}
		// Setting an existing key keeps the map's own copy of it: the
		// entry must be made anew to hold the shared one. The iteration
		// may come to it again, holding the shared key by then.
		delete(m, k)
		m[sk] = sv
	}
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
	shareMap(obj.GetLabels())
	shareMap(obj.GetAnnotations())
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
