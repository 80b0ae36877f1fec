package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// historyDepth is how many versions of each object the kit keeps.
const historyDepth = 64

// version is one version of an object as a watch delivered it.
type version struct {
	raw     json.RawMessage // nil for a deletion
	uid     string
	at      time.Time
	deleted bool
}

// history holds the recent versions of every object the process's watches
// delivered, for stale reads.
type history struct {
	mu    sync.Mutex
	byKey map[string][]version
}

// add appends a version of the object key ("resource/namespace/name").
func (h *history) add(key string, deleted bool, uid string, raw json.RawMessage, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byKey == nil {
		h.byKey = map[string][]version{}
	}
	v := version{uid: uid, at: at, deleted: deleted}
	if !deleted {
		v.raw = append(json.RawMessage{}, raw...)
	}
	list := append(h.byKey[key], v)
	if len(list) > historyDepth {
		list = list[len(list)-historyDepth:]
	}
	h.byKey[key] = list
}

// visible returns the version of key a stale read sees, and false when it
// sees the object as it is.
func (h *history) visible(key string, s StaleReads, now time.Time) (version, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	list := h.byKey[key]
	if len(list) < 2 || now.Sub(list[len(list)-1].at) >= s.maxAge() {
		return version{}, false
	}
	// Lag versions back, but never a version superseded more than MaxAge
	// ago: a cache is late by a while, not by ever more.
	i := max(0, len(list)-1-s.Lag)
	for i < len(list)-1 && now.Sub(list[i+1].at) >= s.maxAge() {
		i++
	}
	return list[i], i < len(list)-1
}

// keys returns the keys with a version a stale read sees, under the prefix
// "resource/namespace/" (or "resource/" for every namespace).
func (h *history) keys(prefix string, s StaleReads, now time.Time) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for k, list := range h.byKey {
		if strings.HasPrefix(k, prefix) && len(list) >= 2 && now.Sub(list[len(list)-1].at) < s.maxAge() {
			out = append(out, k)
		}
	}
	return out
}

// staleClient serves the reads of a manager's client from the history when
// the plan makes them lag.
type staleClient struct {
	client.Client
	p *Process
}

// resourceFor returns the plural resource of obj.
func (c *staleClient) resourceFor(obj runtime.Object) (string, schema.GroupVersionKind, error) {
	gvk, err := c.GroupVersionKindFor(obj)
	if err != nil {
		return "", gvk, err
	}
	m, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return "", gvk, err
	}
	return m.Resource.Resource, gvk, nil
}

// Get implements client.Reader.
func (c *staleClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := c.Client.Get(ctx, key, obj, opts...)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	resource, gvk, rerr := c.resourceFor(obj)
	if rerr != nil || !c.p.plan.Stale.matches(resource) {
		return err
	}
	v, ok := c.p.history.visible(resource+"/"+key.Namespace+"/"+key.Name, c.p.plan.Stale, c.p.now())
	if !ok {
		return err
	}
	c.p.countStale()
	if v.deleted {
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: resource}, key.Name)
	}
	if derr := decodeInto(v.raw, obj); derr != nil {
		return fmt.Errorf("faults: reading a stale version of %s: %w", key, derr)
	}
	return nil
}

// List implements client.Reader.
func (c *staleClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	resource, gvk, err := c.resourceFor(list)
	if err != nil || !c.p.plan.Stale.matches(resource) {
		return nil //nolint:nilerr // a kind the kit cannot map is read as it is
	}
	lo := &client.ListOptions{}
	lo.ApplyOptions(opts)
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil //nolint:nilerr // not a list the kit can rewrite
	}
	now := c.p.now()
	seen := map[string]bool{}
	out := make([]runtime.Object, 0, len(items))
	for _, item := range items {
		m, err := meta.Accessor(item)
		if err != nil {
			out = append(out, item)
			continue
		}
		key := resource + "/" + m.GetNamespace() + "/" + m.GetName()
		seen[key] = true
		v, ok := c.p.history.visible(key, c.p.plan.Stale, now)
		switch {
		case !ok:
			out = append(out, item)
		case v.deleted:
			c.p.countStale()
		default:
			c.p.countStale()
			if o, ok := item.(client.Object); ok && decodeInto(v.raw, o) == nil {
				out = append(out, o)
			} else {
				out = append(out, item)
			}
		}
	}
	// Objects gone from the cache that a lagging reader still sees.
	// A field selector cannot be checked here, so such lists get none.
	if lo.FieldSelector == nil || lo.FieldSelector.Empty() {
		prefix := resource + "/"
		if lo.Namespace != "" {
			prefix += lo.Namespace + "/"
		}
		for _, key := range c.p.history.keys(prefix, c.p.plan.Stale, now) {
			if seen[key] {
				continue
			}
			v, ok := c.p.history.visible(key, c.p.plan.Stale, now)
			if !ok || v.deleted {
				continue
			}
			obj, err := c.newItem(list, gvk)
			if err != nil || decodeInto(v.raw, obj) != nil {
				continue
			}
			if lo.LabelSelector != nil && !lo.LabelSelector.Matches(labels.Set(obj.GetLabels())) {
				continue
			}
			c.p.countStale()
			out = append(out, obj)
		}
	}
	return meta.SetList(list, out)
}

// newItem returns an empty item of list.
func (c *staleClient) newItem(list client.ObjectList, gvk schema.GroupVersionKind) (client.Object, error) {
	if _, ok := list.(*unstructured.UnstructuredList); ok {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk.GroupVersion().WithKind(strings.TrimSuffix(gvk.Kind, "List")))
		return u, nil
	}
	o, err := c.Scheme().New(gvk.GroupVersion().WithKind(strings.TrimSuffix(gvk.Kind, "List")))
	if err != nil {
		return nil, err
	}
	obj, ok := o.(client.Object)
	if !ok {
		return nil, fmt.Errorf("%T is not an object", o)
	}
	return obj, nil
}

// decodeInto replaces obj's content with the JSON object raw.
func decodeInto(raw json.RawMessage, obj client.Object) error {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.UnmarshalJSON(raw)
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("cannot decode into %T", obj)
	}
	v.Elem().Set(reflect.Zero(v.Elem().Type()))
	return json.Unmarshal(raw, obj)
}
