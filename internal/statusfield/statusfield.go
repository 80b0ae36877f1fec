// Package statusfield finds, by reflection, the Status field of a typed
// Kubernetes object and the fields inside it that the engine and its steps
// keep: status.observedGeneration, status.lastHandledReconcileAt. Where a
// field is in a type is worked out once per type and cached.
//
// An object qualifies when it is a non-nil pointer to a struct with an
// exported field Status, a struct or a non-nil pointer to one. Fields of
// Status may be promoted from embedded structs. Other objects, such as
// *unstructured.Unstructured, have no Status field here.
package statusfield

import (
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// pathKey names a field of the Status of a struct type; an empty name is
// Status itself.
type pathKey struct {
	t    reflect.Type
	name string
	kind reflect.Kind
}

// path is where a field is: the index of Status in the struct, and the
// index path of the field inside Status. ok is false when the type has no
// such field.
type path struct {
	ok     bool
	status int
	field  []int
}

// paths caches a path per pathKey.
var paths sync.Map // pathKey -> path

// find returns where the field name of kind k (any kind for an empty name)
// is in the Status of struct type t.
func find(t reflect.Type, name string, k reflect.Kind) path {
	key := pathKey{t, name, k}
	if p, ok := paths.Load(key); ok {
		return p.(path)
	}
	p := lookup(t, name, k)
	paths.Store(key, p)
	return p
}

// lookup is find without the cache.
func lookup(t reflect.Type, name string, k reflect.Kind) path {
	sf, ok := t.FieldByName("Status")
	if !ok || len(sf.Index) != 1 || !sf.IsExported() || sf.Anonymous {
		return path{}
	}
	p := path{ok: true, status: sf.Index[0]}
	if name == "" {
		return p
	}
	st := sf.Type
	if st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	if st.Kind() != reflect.Struct {
		return path{}
	}
	f, ok := st.FieldByName(name)
	if !ok || !f.IsExported() || f.Type.Kind() != k {
		return path{}
	}
	p.field = f.Index
	return p
}

// structOf returns the struct obj points to.
func structOf(obj any) (reflect.Value, bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	return v.Elem(), true
}

// Index returns the index of the field Status in struct type t, or -1.
func Index(t reflect.Type) int {
	if p := find(t, "", reflect.Invalid); p.ok {
		return p.status
	}
	return -1
}

// Of returns the settable Status field of the struct obj points to, as it
// is declared (a struct or a pointer, nil or not), and whether there is one.
func Of(obj any) (reflect.Value, bool) {
	v, ok := structOf(obj)
	if !ok {
		return reflect.Value{}, false
	}
	p := find(v.Type(), "", reflect.Invalid)
	if !p.ok {
		return reflect.Value{}, false
	}
	return v.Field(p.status), true
}

// Field returns the settable field name, of kind k, of obj's Status, and
// whether there is one: false too when Status is a nil pointer.
func Field(obj any, name string, k reflect.Kind) (reflect.Value, bool) {
	v, ok := structOf(obj)
	if !ok {
		return reflect.Value{}, false
	}
	p := find(v.Type(), name, k)
	if !p.ok {
		return reflect.Value{}, false
	}
	st := v.Field(p.status)
	if st.Kind() == reflect.Pointer {
		if st.IsNil() {
			return reflect.Value{}, false
		}
		st = st.Elem()
	}
	// A nil embedded pointer on the way makes the field unreachable.
	f, err := st.FieldByIndexErr(p.field)
	if err != nil {
		return reflect.Value{}, false
	}
	return f, true
}

// Copy sets the Status of dst to that of src, when both are pointers to
// structs of the same type with a Status field, and reports whether it
// did.
func Copy(dst, src any) bool {
	d, ok := Of(dst)
	if !ok {
		return false
	}
	s, ok := structOf(src)
	if !ok || s.Type() != reflect.ValueOf(dst).Elem().Type() {
		return false
	}
	d.Set(s.Field(find(s.Type(), "", reflect.Invalid).status))
	return true
}

// ObservedGeneration returns the int64 field Status.ObservedGeneration of
// obj, and whether there is one.
func ObservedGeneration(obj any) (int64, bool) {
	f, ok := Field(obj, "ObservedGeneration", reflect.Int64)
	if !ok {
		return 0, false
	}
	return f.Int(), true
}

// Rollback calls fn and, when it returns an error or panics, puts the
// status of obj back as it was before the call. The status is the field
// named Status of a typed object, or "status" of an unstructured one; an
// object without one is left as fn left it.
func Rollback(obj client.Object, fn func() error) (err error) {
	saved := obj.DeepCopyObject()
	done := false
	defer func() {
		if !done || err != nil {
			restore(obj, saved)
		}
	}()
	err = fn()
	done = true
	return err
}

// restore copies the status of saved, a deep copy of obj, back into obj.
func restore(obj client.Object, saved runtime.Object) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		s := saved.(*unstructured.Unstructured)
		if st, found := s.Object["status"]; found {
			u.Object["status"] = st
		} else {
			delete(u.Object, "status")
		}
		return
	}
	Copy(obj, saved)
}
