package children

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// drifted reports whether the live child differs from the applied form
// desired of a child, which calls for applying it again: its hash is not
// the desired one, or a value desired sets is not in live (see drift).
// manager is the step's field manager, whose fields the live child's
// managedFields name. With metadataOnly, live holds the child's metadata
// only (Kind.MetadataOnly): the fields outside metadata are judged by
// whether the manager still owns each of them.
func drifted(desired *unstructured.Unstructured, live client.Object, manager string, metadataOnly bool) (bool, error) {
	lu, err := liveUnstructured(live)
	if err != nil {
		return false, err
	}
	if lu.GetAnnotations()[annotationHash] != desired.GetAnnotations()[annotationHash] {
		return true, nil
	}
	d := &drift{managed: live.GetManagedFields(), manager: manager, metadataOnly: metadataOnly}
	return !d.upToDate(desired, lu), nil
}

// drift compares the applied form of a child with the live child, field by
// field, with what the managedFields of the live child say about who set
// each field.
//
// A value desired sets must be in live: maps are compared key by key (keys
// missing in desired are free), each element of a desired list must be
// covered by an element of the live list in any order (server-side apply
// keeps the elements other managers added), scalars must be equal, and
// strings that both parse as resource quantities are compared as
// quantities ("1000m" covers "1"). A null in desired sets nothing.
//
// A zero value in desired (0, false, "", an empty list or map) is where
// managedFields matter: server-side apply moves a field to the manager that
// changes it, and drops it from every manager when it is removed, so while
// the step's manager still owns a field nobody has changed it since the
// step applied it, whatever value the API server defaulted it to. A zero
// value the manager no longer owns must be in live as it is: an int set to
// 3 by another manager, a label set to "x", a field removed, all drift. An
// empty list or map the manager no longer owns drifts only when another
// manager replaced it as a whole (an atomic list or map); the elements
// others add to a merged list are theirs. Without an entry of the manager
// in managedFields (an object applied by an older bosun, a client or cache
// that strips managedFields, or a fake client), a zero value counts as
// unset, as typed Go objects cannot tell an unset field from a zero one.
type drift struct {
	managed []metav1.ManagedFieldsEntry
	manager string
	// metadataOnly is set when the live child holds its metadata only:
	// a field outside metadata is in place when the manager owns it.
	metadataOnly bool

	// path is the way from the root of the object to the value being
	// compared.
	path []step

	// parsed is set once mine and others are read from managed.
	parsed bool
	// mine holds the fields the manager applied; nil when managed has no
	// entry of the manager (or one that cannot be read).
	mine *fieldpath.Set
	// others holds the fields of each other manager.
	others []*fieldpath.Set
}

// step is one step of drift.path: a field of a map, or an element of a
// list (its desired value and index).
type step struct {
	field   string
	element any
	index   int
	inList  bool
}

// upToDate reports whether live holds every value desired sets.
func (d *drift) upToDate(desired, live *unstructured.Unstructured) bool {
	for k, v := range desired.Object {
		// The kind is the same by construction, and typed objects read
		// from some clients carry no type information.
		if k == "apiVersion" || k == "kind" {
			continue
		}
		d.path = append(d.path[:0], step{field: k})
		if d.metadataOnly && k != "metadata" {
			if !d.ownsAll(v) {
				return false
			}
			continue
		}
		if !d.covers(v, live.Object[k]) {
			return false
		}
	}
	return true
}

// ownsAll reports whether the manager owns every field desired sets at
// d.path, for a child whose values the cache does not hold: server-side
// apply moves a field to the manager that changes it and drops it from
// every manager when it is removed, so a field the manager applied and
// still owns holds the value it applied. An atomic list is owned whole; in
// a merged list, each element desired sets, and each field of it, must be
// owned. Without an entry of the manager in managedFields nothing is
// known, and the child is applied again.
func (d *drift) ownsAll(desired any) bool {
	d.parse()
	if d.mine == nil {
		return false
	}
	switch dv := desired.(type) {
	case nil:
		return true
	case map[string]any:
		if len(dv) == 0 {
			member, _ := lookup(d.mine, d.path)
			return member
		}
		n := len(d.path)
		for k, v := range dv {
			d.path = append(d.path[:n], step{field: k})
			if !d.ownsAll(v) {
				return false
			}
		}
		d.path = d.path[:n]
		return true
	case []any:
		member, below := lookup(d.mine, d.path)
		if !below || len(dv) == 0 {
			// Owned whole (an atomic list), or not at all.
			return member
		}
		// A merged list: each element the step applied, and each of its
		// fields, must still be the manager's, each element its own
		// entry (see claims).
		if !d.claims(dv) {
			return false
		}
		n := len(d.path)
		for i, de := range dv {
			d.path = append(d.path[:n], step{element: de, index: i, inList: true})
			if !d.ownsAll(de) {
				return false
			}
		}
		d.path = d.path[:n]
		return true
	}
	member, _ := lookup(d.mine, d.path)
	return member
}

// claims reports whether each element of the desired list at d.path
// finds an entry of its own among the manager's elements of that list: an
// element that leaves a key field to the API server's default (a port
// without its protocol) matches an entry only in part, and such an entry
// must not be one that another desired element matches exactly, or that
// an earlier element took. Else, once the element's own entry is gone
// (removed by hand), it would count as in place through another's.
func (d *drift) claims(desired []any) bool {
	node, ok := nodeAt(d.mine, d.path)
	if !ok {
		return false
	}
	taken := map[string]bool{}
	var partial []string
	for i, de := range desired {
		pe, exact, ok := match(node, step{element: de, index: i, inList: true})
		if !ok {
			return false
		}
		if !exact {
			partial = append(partial, pe.String())
			continue
		}
		taken[pe.String()] = true
	}
	for _, pe := range partial {
		if taken[pe] {
			return false
		}
		taken[pe] = true
	}
	return true
}

// nodeAt returns the node of s at path: the fields of s under it.
func nodeAt(s *fieldpath.Set, path []step) (*fieldpath.Set, bool) {
	for _, st := range path {
		pe, ok := element(s, st)
		if !ok {
			return nil, false
		}
		if s, ok = s.Children.Get(pe); !ok {
			return nil, false
		}
	}
	return s, true
}

// covers reports whether live holds the value desired at d.path (see
// drift).
func (d *drift) covers(desired, live any) bool {
	switch dv := desired.(type) {
	case nil:
		return true
	case map[string]any:
		l, ok := live.(map[string]any)
		if len(dv) == 0 {
			return len(l) == 0 || d.emptyCovered()
		}
		if !ok {
			return false
		}
		n := len(d.path)
		for k, v := range dv {
			d.path = append(d.path[:n], step{field: k})
			if !d.covers(v, l[k]) {
				return false
			}
		}
		d.path = d.path[:n]
		return true
	case []any:
		l, ok := live.([]any)
		if len(dv) == 0 {
			return len(l) == 0 || d.emptyCovered()
		}
		if !ok {
			return false
		}
		n := len(d.path)
		for i, de := range dv {
			found := false
			for _, le := range l {
				// A failed comparison leaves d.path as it was
				// deep down: it is set again for each element.
				d.path = append(d.path[:n], step{element: de, index: i, inList: true})
				if d.covers(de, le) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		d.path = d.path[:n]
		return true
	case string:
		if dv == "" {
			return live == "" || d.owned()
		}
		l, ok := live.(string)
		if !ok {
			return false
		}
		return dv == l || sameQuantity(dv, l)
	case bool:
		if !dv {
			return live == false || d.owned()
		}
		return live == true
	case int64, int32, int, float64:
		dn, _ := number(dv)
		ln, ok := number(live)
		if dn == 0 {
			return ok && ln == 0 || d.owned()
		}
		return ok && dn == ln
	}
	return equality.Semantic.DeepEqual(desired, live)
}

// owned reports whether the zero value desired at d.path counts as in
// place: the manager still owns it, or nothing is known of its fields.
func (d *drift) owned() bool {
	d.parse()
	if d.mine == nil {
		return true
	}
	member, _ := lookup(d.mine, d.path)
	return member
}

// emptyCovered reports whether the empty list or map desired at d.path
// counts as in place although live holds elements: the manager still owns
// it, nothing is known of its fields, or the elements were added by others
// to a merged list or map rather than by one manager replacing it whole.
func (d *drift) emptyCovered() bool {
	if d.owned() {
		return true
	}
	for _, s := range d.others {
		if member, below := lookup(s, d.path); member && !below {
			return false
		}
	}
	return true
}

// parse reads the fields of the manager's Apply entries, and of every
// other manager's entries, from d.managed, once. Entries of subresources
// (status, scale) are left out: the applied form has no status.
func (d *drift) parse() {
	if d.parsed {
		return
	}
	d.parsed = true
	for _, e := range d.managed {
		if e.Subresource != "" || e.FieldsV1 == nil {
			continue
		}
		s := &fieldpath.Set{}
		if err := s.FromJSON(e.FieldsV1.GetRawReader()); err != nil {
			// The API server wrote it; should it not read, the object
			// is compared as if it had no managedFields.
			continue
		}
		if e.Manager == d.manager && e.Operation == metav1.ManagedFieldsOperationApply {
			if d.mine == nil {
				d.mine = s
			} else {
				d.mine = d.mine.Union(s)
			}
			continue
		}
		d.others = append(d.others, s)
	}
}

// lookup follows path down the field set s. member reports whether s
// holds the node at path, or a node above it that has no fields of s
// under it (an atomic list or map, owned as a whole); below whether s
// holds fields under the node.
func lookup(s *fieldpath.Set, path []step) (member, below bool) {
	for i, st := range path {
		pe, ok := element(s, st)
		if !ok {
			return false, false
		}
		child, hasChild := s.Children.Get(pe)
		if i == len(path)-1 || !hasChild {
			return s.Members.Has(pe), hasChild
		}
		s = child
	}
	return false, false
}

// element returns the path element of s's node that st leads to: a field
// name, or, for a list element, the key (k:), value (v:) or index (i:)
// element of s that matches the desired element. A key field the desired
// element leaves out matches any value, since the API server may have
// defaulted it (such as a port's protocol); a key that names every field
// wins over one that matches with defaults.
func element(s *fieldpath.Set, st step) (fieldpath.PathElement, bool) {
	pe, _, ok := match(s, st)
	return pe, ok
}

// match is element, and tells whether the element matched every key
// field (exact) or only those the desired element sets.
func match(s *fieldpath.Set, st step) (pe fieldpath.PathElement, exact, ok bool) {
	if !st.inList {
		return fieldpath.FieldNameElement(st.field), true, true
	}
	var partial *fieldpath.PathElement
	try := func(pe fieldpath.PathElement) bool {
		switch {
		case pe.Index != nil:
			return *pe.Index == st.index
		case pe.Value != nil:
			return scalarEqual((*pe.Value).Unstructured(), st.element)
		case pe.Key != nil:
			m, ok := st.element.(map[string]any)
			if !ok {
				return false
			}
			exact, some := true, false
			for _, f := range *pe.Key {
				v, ok := m[f.Name]
				if !ok || v == nil {
					exact = false
					continue
				}
				if !scalarEqual(f.Value.Unstructured(), v) {
					return false
				}
				some = true
			}
			if some && !exact && partial == nil {
				partial = &pe
			}
			return exact
		}
		return false
	}
	for pe := range s.Members.All() {
		if try(pe) {
			return pe, true, true
		}
	}
	for pe := range s.Children.All() {
		if try(pe) {
			return pe, true, true
		}
	}
	if partial != nil {
		return *partial, false, true
	}
	return fieldpath.PathElement{}, false, false
}

// scalarEqual reports whether a and b are the same scalar, numbers
// compared by value.
func scalarEqual(a, b any) bool {
	if an, ok := number(a); ok {
		bn, ok := number(b)
		return ok && an == bn
	}
	return a == b
}

// number returns v as a float64 if it is a number.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// sameQuantity reports whether a and b parse as equal resource quantities.
func sameQuantity(a, b string) bool {
	qa, err := resource.ParseQuantity(a)
	if err != nil {
		return false
	}
	qb, err := resource.ParseQuantity(b)
	if err != nil {
		return false
	}
	return qa.Cmp(qb) == 0
}

// liveUnstructured returns the live object in unstructured form, for
// comparison.
func liveUnstructured(obj client.Object) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %T: %w", obj, err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}
