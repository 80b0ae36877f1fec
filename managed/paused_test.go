package managed

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	v1 "github.com/bosunkit/bosun/managed/internal/bucketapi"
)

// TestSkipPolicyIsPaused checks that under the engine's skip policy Synced
// is False with ReconcilePaused while Available, and so Ready, follow what
// is observed.
func TestSkipPolicyIsPaused(t *testing.T) {
	cl := newCloud()
	// Observing a bucket made outside the operator is adoption.
	e := start(t, cl, nil, WithAdoptionGranted())
	e.create("skipped", 1, "", annotated(bosun.AnnotationReconcilePolicy, string(bosun.PolicySkip)))
	b := e.wait("skipped", map[string]cond{
		conditions.TypeReady:      {metav1.ConditionFalse, ReasonUnavailable},
		defaultConditionAvailable: {metav1.ConditionFalse, ReasonUnavailable},
		defaultConditionSynced:    {metav1.ConditionFalse, conditions.ReasonReconcilePaused},
	})
	if msg := conditions.Find(b.Status.Conditions, defaultConditionSynced).Message; !strings.Contains(msg, string(bosun.PolicySkip)) {
		t.Errorf("Synced message %q does not say that the skip policy pauses the object", msg)
	}

	cl.set(func(c *cloud) {
		c.buckets[e.ns+".skipped"] = &cloudBucket{size: 1, region: defaultRegion, created: time.Now().Add(-time.Hour)}
	})
	b = e.wait("skipped", map[string]cond{
		conditions.TypeReady:      {metav1.ConditionTrue, conditions.ReasonSucceeded},
		defaultConditionAvailable: {metav1.ConditionTrue, ReasonAvailable},
		defaultConditionSynced:    {metav1.ConditionFalse, conditions.ReasonReconcilePaused},
	})
	// The status Observe writes is kept; the spec it fills in is not.
	if diff := cmp.Diff(&v1.BucketObservation{Size: 1, Region: defaultRegion}, b.Status.AtProvider); diff != "" {
		t.Errorf("status.atProvider under the skip policy (-want +got):\n%s", diff)
	}
	if b.Spec.Region != "" {
		t.Errorf("spec.region %q, want it left empty under the skip policy", b.Spec.Region)
	}
	if c, u, d := cl.counts(); c+u+d != 0 {
		t.Errorf("cloud calls: creates %d, updates %d, deletes %d; want none", c, u, d)
	}
}

// TestWriteFailedSetsSynced checks that a failed write of the engine is
// reported in Synced with the write's reason, and Available is left as it
// was.
func TestWriteFailedSetsSynced(t *testing.T) {
	s := NewStep[*v1.Bucket](NopConnector[*v1.Bucket]())
	b := &v1.Bucket{ObjectMeta: metav1.ObjectMeta{Name: "w", Generation: 3}}
	avail := metav1.Condition{Type: defaultConditionAvailable, Status: metav1.ConditionTrue, Reason: string(ReasonAvailable), Message: "the external resource is available", ObservedGeneration: 3}
	b.Status.Conditions = []metav1.Condition{
		avail,
		{Type: defaultConditionSynced, Status: metav1.ConditionTrue, Reason: string(ReasonReconcileSuccess), Message: "the external resource is reconciled", ObservedGeneration: 3},
	}
	s.WriteFailed(&bosun.Pass[*v1.Bucket]{Object: b}, "SaveFailed", errors.New(`spec.region: Invalid value: "Not Valid!"`))

	synced := conditions.Find(b.Status.Conditions, defaultConditionSynced)
	got := []any{synced.Status, synced.Reason, synced.ObservedGeneration, strings.Contains(synced.Message, "Not Valid!")}
	if diff := cmp.Diff([]any{metav1.ConditionFalse, "SaveFailed", int64(3), true}, got); diff != "" {
		t.Errorf("Synced (-want +got):\n%s\nmessage %q", diff, synced.Message)
	}
	if diff := cmp.Diff(avail, *conditions.Find(b.Status.Conditions, defaultConditionAvailable)); diff != "" {
		t.Errorf("Available (-want +got):\n%s", diff)
	}
}

// TestRefusedLateInitialisationIsReported adopts a bucket whose region the
// Bucket's schema does not allow: the spec Observe late-initialises from it
// is refused by the API server, and Synced and Ready say so (SaveFailed)
// until the user sets a region.
func TestRefusedLateInitialisationIsReported(t *testing.T) {
	cl := newCloud()
	e := start(t, cl, nil, WithAdoptionGranted())
	name := e.ns + ".odd"
	cl.set(func(c *cloud) {
		c.buckets[name] = &cloudBucket{size: 1, region: "Not Valid!", created: time.Now().Add(-time.Hour)}
	})
	e.create("odd", 1, "", annotated(AnnotationExternalName, name))
	b := e.wait("odd", map[string]cond{
		conditions.TypeReady:   {metav1.ConditionFalse, "SaveFailed"},
		defaultConditionSynced: {metav1.ConditionFalse, "SaveFailed"},
	})
	if msg := conditions.Find(b.Status.Conditions, defaultConditionSynced).Message; !strings.Contains(msg, "spec.region") {
		t.Errorf("Synced message %q does not name the refused field", msg)
	}
	if b.Spec.Region != "" {
		t.Errorf("spec.region %q stored, want the refused value kept out", b.Spec.Region)
	}

	e.change("odd", func(b *v1.Bucket) { b.Spec.Region = "us-2" })
	e.wait("odd", converged)
	if got, _ := cl.bucket(name); got.region != "us-2" {
		t.Errorf("cloud region %q, want us-2", got.region)
	}
}
