package managed

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	v1 "github.com/bosunkit/bosun/managed/internal/bucketapi"
)

// conflicted are the conditions of a Bucket whose external name is taken by
// a resource that is not its own.
var conflicted = map[string]cond{
	conditions.TypeReady:   {metav1.ConditionFalse, ReasonExternalResourceConflict},
	defaultConditionSynced: {metav1.ConditionFalse, ReasonExternalResourceConflict},
}

// TestDefaultNamesArePerNamespace checks that two Buckets of the same name
// in two namespaces get two external resources, and that deleting one
// leaves the other's alone.
func TestDefaultNamesArePerNamespace(t *testing.T) {
	cl := newCloud()
	e := startRig(t, cl, rig{namespaces: 1})
	a, b := e, e.in(e.others[0])
	a.create("shop", 1, "shop-conn", nil)
	b.create("shop", 2, "shop-conn", nil)
	ba := a.wait("shop", converged)
	bb := b.wait("shop", converged)

	wantA, wantB := a.ns+".shop", b.ns+".shop"
	if diff := cmp.Diff([]string{wantA, wantB}, []string{ExternalName(ba), ExternalName(bb)}); diff != "" {
		t.Errorf("external names (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sortedKeys(map[string]bool{wantA: true, wantB: true}), cl.live()); diff != "" {
		t.Errorf("cloud buckets (-want +got):\n%s", diff)
	}
	if got, _ := cl.bucket(wantA); got.size != 1 || got.owner != Identity(ba) {
		t.Errorf("bucket of namespace A: size %d owner %q, want 1 and %q", got.size, got.owner, Identity(ba))
	}

	b.delete("shop")
	b.waitGone("shop")
	if diff := cmp.Diff([]string{wantA}, cl.live()); diff != "" {
		t.Errorf("cloud buckets after deleting B's (-want +got):\n%s", diff)
	}
	cl.set(func(c *cloud) {
		if n := c.creates[string(ba.UID)] + c.creates[string(bb.UID)]; n != 2 {
			t.Errorf("%d creates, want 2", n)
		}
		if c.updates[string(bb.UID)] != 0 || c.deletes[string(ba.UID)] != 0 {
			t.Errorf("B updated %d times, A deleted %d times; want neither", c.updates[string(bb.UID)], c.deletes[string(ba.UID)])
		}
	})
}

// TestNeverAdoptsAnotherObjectsResource runs the step with bare object
// names (NameFromMetadata), so that Buckets of the same name in two
// namespaces share an external name: the second finds the first's bucket,
// marked as the first's, and reports a conflict. It does not update it,
// late-initialise from it, publish its details or, when deleted, delete it.
func TestNeverAdoptsAnotherObjectsResource(t *testing.T) {
	cl := newCloud()
	e := startRig(t, cl, rig{namespaces: 1, opts: []Option{WithExternalName(NameFromMetadata)}})
	a, b := e, e.in(e.others[0])
	a.create("shop", 1, "shop-conn", nil)
	ba := a.wait("shop", converged)

	b.create("shop", 2, "shop-conn", nil)
	bb := b.wait("shop", conflicted)
	msg := conditions.Find(bb.Status.Conditions, defaultConditionSynced).Message
	if !strings.Contains(msg, `"shop"`) || strings.Contains(msg, "s3cr3t") {
		t.Errorf("Synced message %q: want it to name the external name and hold no secret", msg)
	}
	if bb.Spec.Region != "" {
		t.Errorf("B's spec.region %q, want nothing late-initialised from A's bucket", bb.Spec.Region)
	}
	if ExternalName(bb) != "" {
		t.Errorf("B recorded external name %q for a bucket that is not its own", ExternalName(bb))
	}
	if _, err := b.secret(t.Context(), "shop-conn"); err == nil {
		t.Error("B's connection secret exists: A's details were published to it")
	}

	b.delete("shop")
	b.waitGone("shop")
	got, ok := cl.bucket("shop")
	if !ok || got.size != 1 || got.owner != Identity(ba) {
		t.Errorf("A's bucket after B is gone: %+v, exists %v; want it untouched", got, ok)
	}
	cl.set(func(c *cloud) {
		if u, d := c.updates[string(bb.UID)], c.deletes[string(bb.UID)]; u+d != 0 {
			t.Errorf("B updated A's bucket %d times and deleted it %d times, want neither", u, d)
		}
	})
	a.wait("shop", converged)
}

// TestUnmarkedResourceIsAdoptedOnlyWhereGranted puts objects on buckets made
// outside the operator, with no owner mark: one under the name the step
// chooses, one named by hand, one named by hand with a forged record of a
// create, one observe-only, and one named by hand that is deleted at once.
// Without a grant none is adopted: each is Synced and Ready False with
// ReasonAdoptionNotGranted, no name is recorded for the one under the
// chosen name, no bucket is updated, repaired or deleted, no connection
// Secret is written, and the deleted object leaves its bucket. Once an
// administrator annotates the Namespace, the hand-named ones are adopted and
// re-marked by Update, the observe-only one is observed and then adopted
// when it switches to full management, and the one under the chosen name,
// which nobody asked to adopt, is a conflict until its name is set by hand.
func TestUnmarkedResourceIsAdoptedOnlyWhereGranted(t *testing.T) {
	cl := newCloud()
	e := start(t, cl, nil)
	legacy, watched := e.ns+".legacy", e.ns+".watched"
	buckets := []string{legacy, watched, "outside-1", "outside-2", "outside-3"}
	cl.set(func(c *cloud) {
		for _, n := range buckets {
			c.buckets[n] = &cloudBucket{size: 9, region: defaultRegion, password: "old", created: time.Now().Add(-time.Hour)}
		}
	})
	longAgo := formatTime(time.Now().Add(-time.Hour))
	notGranted := map[string]cond{
		conditions.TypeReady:   {metav1.ConditionFalse, ReasonAdoptionNotGranted},
		defaultConditionSynced: {metav1.ConditionFalse, ReasonAdoptionNotGranted},
	}

	e.create("legacy", 1, "legacy-conn", nil)
	e.create("named", 1, "named-conn", annotated(AnnotationExternalName, "outside-1"))
	e.create("forged", 1, "forged-conn", annotated(AnnotationExternalName, "outside-2",
		AnnotationCreatePending, longAgo, annotationCreateSucceeded, longAgo))
	e.create("watched", 1, "watched-conn", annotated(AnnotationManagementPolicies, string(policyObserve)))
	e.create("leaver", 1, "leaver-conn", annotated(AnnotationExternalName, "outside-3"))
	for _, n := range []string{"legacy", "named", "forged", "watched", "leaver"} {
		b := e.wait(n, notGranted)
		msg := conditions.Find(b.Status.Conditions, defaultConditionSynced).Message
		if !strings.Contains(msg, AnnotationAdoptExternal) || !strings.Contains(msg, e.ns) {
			t.Errorf("%s: Synced message %q does not say which annotation on which Namespace grants adoption", n, msg)
		}
		if b.Status.AtProvider != nil {
			t.Errorf("%s: status.atProvider %+v taken from a bucket that is not its own", n, b.Status.AtProvider)
		}
	}
	if got := ExternalName(e.get("legacy")); got != "" {
		t.Errorf("external name %q recorded for a bucket the step did not adopt", got)
	}
	e.delete("leaver")
	e.waitGone("leaver")
	for _, n := range buckets {
		if got, ok := cl.bucket(n); !ok || got.size != 9 || got.owner != "" || got.deleted {
			t.Errorf("bucket %s without a grant: %+v (exists %t), want it untouched", n, got, ok)
		}
	}
	for _, n := range []string{"legacy-conn", "named-conn", "forged-conn", "watched-conn", "leaver-conn"} {
		if _, err := e.secret(t.Context(), n); !apierrors.IsNotFound(err) {
			t.Errorf("connection secret %s: %v, want NotFound", n, err)
		}
	}
	cl.set(func(c *cloud) {
		if n := sum(c.creates) + sum(c.updates) + sum(c.deletes) + sum(c.repairs); n != 0 {
			t.Errorf("%d creates, updates, deletes and repairs without a grant, want none", n)
		}
	})

	// The administrator grants adoption to the namespace.
	bosuntest.Eventually(t, func(ctx context.Context) error {
		ns := &corev1.Namespace{}
		if err := e.c.Get(ctx, client.ObjectKey{Name: e.ns}, ns); err != nil {
			return err
		}
		ns.Annotations = map[string]string{AnnotationAdoptExternal: "true"}
		return e.c.Update(ctx, ns)
	})
	for _, c := range []struct{ object, bucket string }{{"named", "outside-1"}, {"forged", "outside-2"}} {
		b := e.wait(c.object, converged)
		if got, _ := cl.bucket(c.bucket); got.size != 1 || got.owner != Identity(b) {
			t.Errorf("bucket %s after the grant: size %d owner %q, want 1 and %q", c.bucket, got.size, got.owner, Identity(b))
		}
	}
	// Nobody asked to adopt legacy's bucket: a conflict until they do.
	e.wait("legacy", conflicted)
	e.change("legacy", func(b *v1.Bucket) { SetExternalName(b, legacy) })
	bl := e.wait("legacy", converged)
	if got, _ := cl.bucket(legacy); got.size != 1 || got.owner != Identity(bl) {
		t.Errorf("legacy bucket after adoption: size %d owner %q, want 1 and %q", got.size, got.owner, Identity(bl))
	}

	// Observing an unmarked bucket is allowed once granted; switching to
	// full management afterwards adopts it.
	e.wait("watched", map[string]cond{
		conditions.TypeReady:      {metav1.ConditionTrue, conditions.ReasonSucceeded},
		defaultConditionAvailable: {metav1.ConditionTrue, ReasonAvailable},
		defaultConditionSynced:    {metav1.ConditionTrue, ReasonReconcileSuccess},
	})
	e.change("watched", func(b *v1.Bucket) { b.Annotations[AnnotationManagementPolicies] = string(policyAll) })
	// Observe-only was converged too (Synced True): wait for the cloud.
	owner := Identity(e.get("watched"))
	bosuntest.Eventually(t, func(context.Context) error {
		if got, _ := cl.bucket(watched); got.size != 1 || got.owner != owner {
			return fmt.Errorf("watched bucket after switching to full management: size %d owner %q, want 1 and %q", got.size, got.owner, owner)
		}
		return nil
	})
	e.wait("watched", converged)
	if got, _ := cl.bucket("outside-3"); got.owner != "" || got.size != 9 {
		t.Errorf("bucket outside-3 of the deleted object: %+v, want it untouched", got)
	}
	if c, _, d := cl.counts(); c+d != 0 {
		t.Errorf("%d creates and %d deletes, want none", c, d)
	}
}

// TestAdoptionGrantedByOption checks that WithAdoptionGranted grants every
// object adoption, with no annotation on its Namespace: a hand-set name
// adopts an unmarked bucket, and deleting the object deletes it.
func TestAdoptionGrantedByOption(t *testing.T) {
	cl := newCloud()
	e := start(t, cl, nil, WithAdoptionGranted())
	cl.set(func(c *cloud) {
		c.buckets["outside"] = &cloudBucket{size: 9, region: defaultRegion, password: "old", created: time.Now().Add(-time.Hour)}
	})
	e.create("named", 1, "", annotated(AnnotationExternalName, "outside"))
	b := e.wait("named", converged)
	if got, _ := cl.bucket("outside"); got.size != 1 || got.owner != Identity(b) {
		t.Errorf("bucket after adoption: size %d owner %q, want 1 and %q", got.size, got.owner, Identity(b))
	}
	e.delete("named")
	e.waitGone("named")
	if _, ok := cl.bucket("outside"); ok {
		t.Error("the adopted bucket is still there after its object was deleted")
	}
}

// TestCrashWindowAdoptsUnmarked is TestCrashWindowAdopts on a cloud that
// keeps no owner marks: a bucket found after a create whose outcome was lost
// is still the object's own, and adopted.
func TestCrashWindowAdoptsUnmarked(t *testing.T) {
	cl := newCloud()
	cl.noMarks = true
	e := start(t, cl, failOutcome, WithTiming(Timing{CreationGrace: 500 * time.Millisecond}))
	const n = 5
	for i := range n {
		e.create(fmt.Sprintf("crash-%d", i), 1, "", nil)
	}
	for i := range n {
		e.wait(fmt.Sprintf("crash-%d", i), converged)
	}
	cl.set(func(c *cloud) {
		if len(c.creates) != n || sum(c.creates) != n {
			t.Errorf("%d objects made %d creates, want %d and %d", len(c.creates), sum(c.creates), n, n)
		}
	})
}
