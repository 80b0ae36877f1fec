package managed

import (
	"reflect"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The step decides what to do from the object's spec, its annotations,
// the status fields it keeps (status.observedGeneration, the change log),
// what Observe reports and its memory of the calls it made lately (see
// memo); never from its own conditions, which only inform (see the
// package documentation).

// statusField returns the Status field of the struct obj points to, when
// there is one that can be set.
func statusField(obj client.Object) (reflect.Value, bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	f := v.Elem().FieldByName("Status")
	if !f.IsValid() || !f.CanSet() {
		return reflect.Value{}, false
	}
	return f, true
}

// observedGeneration returns obj's status.observedGeneration, the
// generation the engine last finished a pass over, and whether its type has
// that field.
func observedGeneration(obj client.Object) (int64, bool) {
	st, ok := statusField(obj)
	if !ok {
		return 0, false
	}
	if st.Kind() == reflect.Pointer {
		if st.IsNil() {
			return 0, false
		}
		st = st.Elem()
	}
	if st.Kind() != reflect.Struct {
		return 0, false
	}
	f := st.FieldByName("ObservedGeneration")
	if !f.IsValid() || f.Kind() != reflect.Int64 {
		return 0, false
	}
	return f.Int(), true
}

// keepStatus sets the status of dst to that of src, the copy Observe
// worked on, when their type has a Status field: what Observe wrote there
// of the external resource (status.atProvider, by convention) is kept,
// whatever it did to the copy's spec.
func keepStatus[T client.Object](dst, src T) {
	d, ok := statusField(dst)
	if !ok {
		return
	}
	s, _ := statusField(src)
	d.Set(s)
}
