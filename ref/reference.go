package ref

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Reference names the object one object refers to: by Name, or by a label
// Selector that must match exactly one object. Namespace, when set, is the
// namespace to look in; empty means the referring object's own. For a
// cluster-scoped kind Namespace is ignored.
//
// The zero Reference names nothing: the step reports it ("NoReference")
// unless the reference is Optional. A Reference with both a Name and a
// Selector is invalid.
type Reference struct {
	// Name is the name of the referenced object.
	Name string
	// Namespace is where the referenced object is; empty means the
	// referring object's namespace.
	Namespace string
	// Selector selects the referenced object by its labels; exactly one
	// object may match. An empty selector matches every object.
	Selector *metav1.LabelSelector
}

// ByName returns a reference to the object called name in the referring
// object's namespace (or to the cluster-scoped object called name).
func ByName(name string) Reference { return Reference{Name: name} }

// BySelector returns a reference to the one object in the referring
// object's namespace whose labels sel matches.
func BySelector(sel *metav1.LabelSelector) Reference { return Reference{Selector: sel} }

// ByLabels returns a reference to the one object in the referring object's
// namespace that carries all of the labels set.
func ByLabels(set map[string]string) Reference {
	return Reference{Selector: &metav1.LabelSelector{MatchLabels: set}}
}

// InNamespace returns r looking in namespace ns instead of the referring
// object's. A step follows a reference into another namespace only when
// it was made with AllowCrossNamespace.
func (r Reference) InNamespace(ns string) Reference {
	r.Namespace = ns
	return r
}

// IsZero reports whether r names nothing: no name and no selector.
func (r Reference) IsZero() bool { return r.Name == "" && r.Selector == nil }

// String describes r: "db", "team-a/db", "selector app=db",
// "team-a/selector app=db", or "none".
func (r Reference) String() string {
	var what string
	switch {
	case r.Name != "":
		what = r.Name
	case r.Selector != nil:
		what = "selector " + selectorString(r.Selector)
	default:
		return "none"
	}
	if r.Namespace != "" {
		return r.Namespace + "/" + what
	}
	return what
}

// selectorString renders sel as a label selector expression; an invalid
// selector is rendered as Go prints it.
func selectorString(sel *metav1.LabelSelector) string {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return fmt.Sprintf("%v", *sel)
	}
	if s.Empty() {
		return "<everything>"
	}
	return s.String()
}

// The values of the field index a step registers on the referring kind.
// A name reference to N in namespace S is indexed under "S/N" and "/N", a
// selector reference into namespace S under "S/*" and "/*". An event on a
// namespaced object looks up "S/N" and "S/*"; one on a cluster-scoped
// object, whose namespace is empty, "/N" and "/*". Names hold no "/" and
// no "*", so the forms never collide, and the index needs no knowledge of
// the referenced kind's scope.
const selectorMark = "*"

// indexValues returns the index values of r made by an object in namespace
// own.
func indexValues(r Reference, own string) []string {
	var last string
	switch {
	case r.Name != "":
		last = r.Name
	case r.Selector != nil:
		last = selectorMark
	default:
		return nil
	}
	ns := r.Namespace
	if ns == "" {
		ns = own
	}
	if ns == "" {
		return []string{"/" + last}
	}
	return []string{ns + "/" + last, "/" + last}
}

// lookupKeys returns the index values under which the referrers of the
// object namespace/name are found: by name, then by selector.
func lookupKeys(namespace, name string) (byName, bySelector string) {
	return namespace + "/" + name, namespace + "/" + selectorMark
}
