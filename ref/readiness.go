package ref

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/statusfield"
)

// Readiness tells whether a referenced object is ready to be used. When
// it is not, why says what is missing, in words that end the condition
// message `Role "team-a/owner" is not ready: why`.
type Readiness[R client.Object] interface {
	Ready(obj R) (ready bool, why string)
}

// ReadinessFunc adapts a function to Readiness.
type ReadinessFunc[R client.Object] func(obj R) (ready bool, why string)

// Ready calls the function.
func (f ReadinessFunc[R]) Ready(obj R) (bool, string) { return f(obj) }

var (
	_ Readiness[client.Object] = ReadinessFunc[client.Object](nil)
	_ Readiness[client.Object] = ReadyCondition[client.Object]{}
	_ Readiness[client.Object] = Exists[client.Object]{}
)

// Exists is the Readiness of objects that are ready as soon as they exist,
// such as Secrets and ConfigMaps.
type Exists[R client.Object] struct{}

// Ready returns true.
func (Exists[R]) Ready(R) (bool, string) { return true, "" }

// ReadyCondition is the default Readiness: an object whose type keeps
// conditions (conditions.Object) is ready when its Ready condition is True
// and describes its current generation; an object of any other type is
// ready as soon as it exists.
//
// The generation a Ready condition describes is its observedGeneration;
// when that is zero (a writer that does not set it), it is the object's
// status.observedGeneration, when its type has that field; when neither
// is set the condition counts as current.
type ReadyCondition[R client.Object] struct{}

// Ready checks obj's Ready condition.
func (ReadyCondition[R]) Ready(obj R) (bool, string) {
	co, ok := any(obj).(conditions.Object)
	if !ok {
		return true, ""
	}
	c := conditions.Find(co.GetConditions(), conditions.TypeReady)
	switch {
	case c == nil:
		return false, "it has no Ready condition yet"
	case c.Status != metav1.ConditionTrue:
		why := fmt.Sprintf("its Ready condition is %s", c.Status)
		if c.Reason != "" {
			why += " (" + c.Reason + ")"
		}
		if c.Message != "" {
			why += ": " + c.Message
		}
		return false, why
	}
	observed := c.ObservedGeneration
	if observed == 0 {
		if g, ok := statusfield.ObservedGeneration(obj); ok {
			observed = g
		} else {
			return true, ""
		}
	}
	if gen := obj.GetGeneration(); observed != gen {
		return false, fmt.Sprintf("its Ready condition describes generation %d, not the current %d", observed, gen)
	}
	return true, ""
}
