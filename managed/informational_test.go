package managed

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	v1 "github.com/bosunkit/bosun/managed/internal/bucketapi"
)

// TestConditionsOnlyInform checks that the step decides nothing from its
// own conditions: conditions rewritten by hand to say the opposite of the
// truth (the object never reconciled, the resource being deleted, not
// synced) change no call to the cloud, the drift count or the outcome, and
// the next pass writes the truth back.
func TestConditionsOnlyInform(t *testing.T) {
	cl := newCloud()
	e := start(t, cl, nil)
	e.create("told", 1, "", nil)
	e.wait("told", converged)
	name := e.ns + ".told"

	lie := func() {
		t.Helper()
		bosuntest.Eventually(t, func(ctx context.Context) error {
			b := &v1.Bucket{}
			if err := e.c.Get(ctx, e.key("told"), b); err != nil {
				return err
			}
			now := metav1.Now()
			conds := b.Status.Conditions
			for _, c := range []metav1.Condition{
				{Type: defaultConditionSynced, Status: metav1.ConditionUnknown, Reason: string(conditions.ReasonInitializing), Message: "by hand"},
				{Type: defaultConditionAvailable, Status: metav1.ConditionFalse, Reason: string(ReasonDeleting), Message: "by hand"},
			} {
				c.ObservedGeneration = b.Generation
				conditions.Set(&conds, c, now)
			}
			b.Status.Conditions = conds
			return e.c.Status().Update(ctx, b)
		})
	}

	// Drift behind the operator's back, with conditions that claim the
	// object was never synced: still one drift correction, by one Update.
	drift0 := counterValue(t, "bucket-"+e.ns, "managed")
	c0, u0, d0 := cl.counts()
	cl.set(func(c *cloud) { c.buckets[name].size = 7 })
	lie()
	bosuntest.Eventually(t, func(context.Context) error {
		if got, _ := cl.bucket(name); got.size != 1 {
			return fmt.Errorf("cloud size %d, want 1", got.size)
		}
		return nil
	})
	e.wait("told", converged)
	if got := counterValue(t, "bucket-"+e.ns, "managed") - drift0; got != 1 {
		t.Errorf("drift corrections counted %v, want 1", got)
	}
	if c, u, d := cl.counts(); c != c0 || u != u0+1 || d != d0 {
		t.Errorf("cloud calls after the lie: creates %d, updates %d, deletes %d more; want 0, 1, 0", c-c0, u-u0, d-d0)
	}

	// A condition that claims the resource is being deleted keeps neither
	// the event of the first Delete nor the Delete itself from happening.
	lie()
	e.delete("told")
	e.waitGone("told")
	if _, ok := cl.bucket(name); ok {
		t.Error("cloud bucket still exists after the object is gone")
	}
	if _, _, d := cl.counts(); d != d0+1 {
		t.Errorf("%d deletes, want 1", d-d0)
	}
}
