package ref

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/statusfield"
)

// readyCondition is the default readiness: an object whose type keeps
// conditions (conditions.Object) is ready when its Ready condition is True
// and describes its current generation; an object of any other type is
// ready as soon as it exists. When it is not ready, why says what is
// missing, in words that end the condition message
// `Role "team-a/owner" is not ready: why`.
//
// The generation a Ready condition describes is its observedGeneration;
// when that is zero (a writer that does not set it), it is the object's
// status.observedGeneration, when its type has that field; when neither
// is set the condition counts as current.
func readyCondition[R client.Object](obj R) (ready bool, why string) {
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
