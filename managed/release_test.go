package managed

import (
	"context"
	"fmt"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
)

// TestReleaseAfterCleanupDeletes deletes a Bucket whose deletes the cloud
// refuses until the step's backoff has grown to seconds, then sets
// bosun.dev/release-finalizer=true while the backoff runs, the cloud
// accepting deletes again: the one more cleanup the annotation asks for
// calls Delete, and the bucket is gone from the cloud when the finalizer
// goes. Budget: one Delete for the last cleanup.
func TestReleaseAfterCleanupDeletes(t *testing.T) {
	cl := newCloud()
	cl.refuseDeletesUntil = time.Now().Add(time.Hour)
	e := start(t, cl, nil)
	e.create("b", 1, "", nil)
	e.wait("b", converged)
	name := e.waitName("b")
	e.delete("b")
	// Refused deletes back off 100 ms, 200 ms, ...: after the sixth, the
	// next is 6.4 s away.
	const refused = 6
	bosuntest.Eventually(t, func(context.Context) error {
		if _, _, d := cl.counts(); d < refused {
			return fmt.Errorf("%d deletes, want %d refused", d, refused)
		}
		return nil
	})
	cl.set(func(c *cloud) { c.refuseDeletesUntil = time.Time{} })
	_, _, before := cl.counts()
	b := e.get("b")
	patch := client.MergeFrom(b.DeepCopy())
	b.Annotations[bosun.AnnotationReleaseFinalizer] = "true"
	if err := e.c.Patch(t.Context(), b, patch); err != nil {
		t.Fatal(err)
	}
	e.waitGone("b")
	_, _, after := cl.counts()
	if after == before {
		t.Errorf("no Delete call after %s=true: the finalizer went without the last cleanup's delete", bosun.AnnotationReleaseFinalizer)
	}
	if _, live := cl.bucket(name); live {
		t.Errorf("bucket %s is still in the cloud after the last cleanup released the finalizer; want it deleted", name)
	}
}
