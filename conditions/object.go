package conditions

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/internal/statusfield"
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
	f, ok := statusfield.Field(obj, "ObservedGeneration", reflect.Int64)
	if !ok {
		return false
	}
	f.SetInt(gen)
	return true
}
