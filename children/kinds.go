package children

import (
	"errors"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Kind declares a kind of child: the step prunes, watches and reports the
// health of children of the declared kinds only.
type Kind struct {
	// Object is an empty object of the kind, such as &appsv1.Deployment{}.
	// An *unstructured.Unstructured must carry its apiVersion and kind.
	Object client.Object
	// Readiness tells whether a live child of the kind is ready for use;
	// when it is not, message says what is missing, and appears in the
	// parent's condition. Nil means the default check (see Readiness in the
	// package documentation); Present makes any child that exists ready.
	Readiness func(obj client.Object) (ready bool, message string)
	// Condition is the type of the condition that reports the health of the
	// children of the kind. Empty means the kind's name followed by
	// "Ready", such as "DeploymentReady".
	Condition string
	// MaxUnavailable, when above zero, rolls a change of the desired
	// children of the kind out a few at a time: a pass updates a live
	// child that is ready only while fewer than MaxUnavailable children
	// of the kind are not ready, in the order the DesiredFunc returns
	// them, and the others wait for a later pass (Plan.Held), which the
	// events of the children bring as they become ready. Meanwhile the
	// kind's condition is False with the reason RollingUpdate and counts
	// the children updated, waiting and in progress. A child that is not
	// ready counts whatever the cause, and is updated at once, as is a
	// child to create or one changed by hand since the step applied it
	// (drift); children no longer desired are pruned at once. Zero, the
	// default, changes every child at once. See "Rolling updates" in the
	// package documentation.
	MaxUnavailable int
	// MetadataOnly watches and caches the children of the kind as
	// metadata only (metav1.PartialObjectMetadata), not whole: for kinds
	// whose children are large, such as ConfigMaps and Secrets of data,
	// that the operator writes but does not read back. The step then
	// tells drift by the hash annotation and by managedFields: a field it
	// applied that its field manager no longer owns (someone changed or
	// removed it) is applied again. Readiness sees the metadata only;
	// unset, it is Present, and MaxUnavailable needs one set. See
	// "Caching" in the package documentation.
	MetadataOnly bool
}

// Of declares the kind of obj with the default readiness check and
// condition type.
func Of(obj client.Object) Kind { return Kind{Object: obj} }

// ErrUndeclaredKind is wrapped by the error of a pass whose desired
// children include an object of a kind the step does not declare.
var ErrUndeclaredKind = errors.New("child of an undeclared kind")

// kind is a declared Kind resolved against a scheme.
type kind struct {
	Kind
	gvk       schema.GroupVersionKind
	condition string
	ready     func(client.Object) (bool, string)
}

// resolve returns the kinds with their group, version and kind looked up in
// scheme, or an error naming the first that cannot be.
func resolve(kinds []Kind, scheme *runtime.Scheme) ([]kind, error) {
	out := make([]kind, 0, len(kinds))
	seen := map[schema.GroupVersionKind]bool{}
	conds := map[string]bool{}
	for i, k := range kinds {
		if k.Object == nil || reflect.ValueOf(k.Object).IsNil() {
			return nil, fmt.Errorf("kind %d has no object", i)
		}
		gvk, err := gvkOf(k.Object, scheme)
		if err != nil {
			return nil, fmt.Errorf("kind %d: %w", i, err)
		}
		if seen[gvk] {
			return nil, fmt.Errorf("kind %s is declared twice", gvk.Kind)
		}
		seen[gvk] = true
		if k.MaxUnavailable < 0 {
			return nil, fmt.Errorf("kind %s: MaxUnavailable is %d, want 0 (no limit) or more", gvk.Kind, k.MaxUnavailable)
		}
		if k.MetadataOnly && k.MaxUnavailable > 0 && k.Readiness == nil {
			// Every child would count as ready at once, and the roll-out
			// would pace nothing.
			return nil, fmt.Errorf("kind %s: MaxUnavailable paces a roll-out by readiness, which the metadata of a MetadataOnly kind does not tell: give the kind a Readiness", gvk.Kind)
		}
		r := kind{Kind: k, gvk: gvk, condition: conditionType(k), ready: k.Readiness}
		if conds[r.condition] {
			return nil, fmt.Errorf("kinds share the condition type %q", r.condition)
		}
		conds[r.condition] = true
		if r.ready == nil {
			r.ready = DefaultReadiness
			if k.MetadataOnly {
				r.ready = Present
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// gvkOf returns the group, version and kind of obj: from its type
// information if it is unstructured, else from scheme.
func gvkOf(obj runtime.Object, scheme *runtime.Scheme) (schema.GroupVersionKind, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		gvk := u.GroupVersionKind()
		if gvk.Kind == "" || gvk.Version == "" {
			return gvk, errors.New("unstructured object without apiVersion and kind")
		}
		return gvk, nil
	}
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return gvk, fmt.Errorf("looking up the kind of %T: %w", obj, err)
	}
	return gvk, nil
}

// newObject returns an empty object of k's type, to read a live child
// into: its metadata only for a MetadataOnly kind.
func (k kind) newObject() client.Object {
	if k.MetadataOnly {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(k.gvk)
		return m
	}
	if _, ok := k.Object.(*unstructured.Unstructured); ok {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(k.gvk)
		return u
	}
	return reflect.New(reflect.TypeOf(k.Object).Elem()).Interface().(client.Object)
}

// newList returns an empty list of k's type: of metadata only for a
// MetadataOnly kind.
func (k kind) newList(scheme *runtime.Scheme) (client.ObjectList, error) {
	listGVK := k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List")
	if k.MetadataOnly {
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(listGVK)
		return l, nil
	}
	if _, ok := k.Object.(*unstructured.Unstructured); ok {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(listGVK)
		return l, nil
	}
	obj, err := scheme.New(listGVK)
	if err != nil {
		return nil, fmt.Errorf("making a list of %s: %w", k.gvk.Kind, err)
	}
	l, ok := obj.(client.ObjectList)
	if !ok {
		return nil, fmt.Errorf("%T is not a list", obj)
	}
	return l, nil
}
