package managed

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/conditions"
	v1 "github.com/bosunkit/bosun/managed/internal/bucketapi"
)

// TestHungObserveTimesOut makes Observe of one Bucket wait for as long as
// its context lasts: with a call timeout the pass ends, Synced and Ready
// say that Observe timed out, and the controller, which runs one reconcile
// at a time, meanwhile brings another Bucket to Ready.
func TestHungObserveTimesOut(t *testing.T) {
	const timeout = 300 * time.Millisecond
	cl := newCloud()
	cl.hang = map[string]bool{"hung": true}
	e := start(t, cl, nil, WithTiming(Timing{Call: timeout}))
	e.create("hung", 1, "", nil)
	e.create("fine", 1, "", nil)
	e.wait("fine", converged)
	b := e.wait("hung", map[string]cond{
		conditions.TypeReady:   {metav1.ConditionFalse, ReasonObserveFailed},
		defaultConditionSynced: {metav1.ConditionFalse, ReasonObserveFailed},
	})
	msg := conditions.Find(b.Status.Conditions, defaultConditionSynced).Message
	if !strings.Contains(msg, "timed out after "+timeout.String()) {
		t.Errorf("Synced message %q does not say the call timed out after %s", msg, timeout)
	}
	cl.set(func(c *cloud) { c.hang = nil })
	e.change("hung", func(b *v1.Bucket) { b.Labels = map[string]string{"nudge": "1"} })
	e.wait("hung", converged)
}
