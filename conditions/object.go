package conditions

import (
	"reflect"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Object is a Kubernetes object whose status holds a list of conditions, the shape the
// engine expects of the types it reconciles. GetConditions may return the stored slice
// itself, so code that changes the list hands it back with SetConditions.
type Object interface {
	client.Object
	// GetConditions returns the status conditions.
	GetConditions() []metav1.Condition
	// SetConditions replaces the status conditions.
	SetConditions([]metav1.Condition)
}

// ObservedGenerationSetter is implemented by objects that record the generation their
// status describes. SetObservedGeneration uses it in preference to reflection.
type ObservedGenerationSetter interface {
	// SetObservedGeneration records gen as the observed generation.
	SetObservedGeneration(gen int64)
}

// SetObservedGeneration records gen as the generation obj's status describes, and
// reports whether obj has a place for it. It calls obj's SetObservedGeneration method
// when there is one; otherwise it sets the int64 field Status.ObservedGeneration of the
// struct obj points to, when Status is a struct or a non-nil pointer to one and has
// that field. Other objects are left alone and give false.
func SetObservedGeneration(obj client.Object, gen int64) bool {
	if s, ok := obj.(ObservedGenerationSetter); ok {
		s.SetObservedGeneration(gen)
		return true
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return false
	}
	p := pathFor(v.Elem().Type())
	if !p.ok {
		return false
	}
	status := v.Elem().Field(p.status)
	if p.statusPointer {
		if status.IsNil() {
			return false
		}
		status = status.Elem()
	}
	status.Field(p.observed).SetInt(gen)
	return true
}

// generationPath locates Status.ObservedGeneration in a struct type.
type generationPath struct {
	ok            bool // the type has the field
	status        int  // index of Status
	statusPointer bool // Status is a pointer to a struct
	observed      int  // index of ObservedGeneration in the Status struct
}

// generationPaths caches a generationPath per struct type.
var generationPaths sync.Map // reflect.Type -> generationPath

// pathFor returns where Status.ObservedGeneration is in struct type t.
func pathFor(t reflect.Type) generationPath {
	if p, ok := generationPaths.Load(t); ok {
		return p.(generationPath)
	}
	p := findPath(t)
	generationPaths.Store(t, p)
	return p
}

// findPath looks for an exported field Status, a struct or a pointer to one, with an
// exported int64 field ObservedGeneration.
func findPath(t reflect.Type) generationPath {
	sf, ok := t.FieldByName("Status")
	if !ok || len(sf.Index) != 1 || !sf.IsExported() {
		return generationPath{}
	}
	p := generationPath{status: sf.Index[0]}
	st := sf.Type
	if st.Kind() == reflect.Pointer {
		p.statusPointer = true
		st = st.Elem()
	}
	if st.Kind() != reflect.Struct {
		return generationPath{}
	}
	of, ok := st.FieldByName("ObservedGeneration")
	if !ok || len(of.Index) != 1 || !of.IsExported() || of.Type.Kind() != reflect.Int64 {
		return generationPath{}
	}
	p.observed = of.Index[0]
	p.ok = true
	return p
}
