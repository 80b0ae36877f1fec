package bosun_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// patientCleanup is a step whose Cleanup never fails but asks to come back
// in an hour, as one that waits for a slow external deletion would, and
// counts its calls.
type patientCleanup struct{ calls *atomic.Int32 }

func (patientCleanup) Do(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}

func (c patientCleanup) Cleanup(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	c.calls.Add(1)
	return ctrl.Result{RequeueAfter: time.Hour}, nil
}

// TestPendingCleanupIsBlockedOnTime deletes a Widget whose cleanup asks to
// come back in an hour: the engine brings the pass back at the deadline
// instead, and DeletionBlocked shows then, with the reason CleanupPending
// and a message naming the step that waits.
func TestPendingCleanupIsBlockedOnTime(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const deadline = 3 * time.Second
	c := patientCleanup{calls: &atomic.Int32{}}
	f.run(&bosun.Reconciler[*testapi.Widget]{
		Name:      "pending-on-time",
		Finalizer: testFinalizer,
		Steps:     []bosun.Step[*testapi.Widget]{c},
		Options:   bosun.Options{DeletionDeadline: deadline},
	}, runOptions{})
	f.deleteReady("w")
	blocked := f.waitDeletionBlocked("w")
	// The reason users match, as docs/OPERATIONS.md spells it.
	if blocked.Reason != string(conditions.ReasonCleanupPending) {
		t.Errorf("DeletionBlocked reason %q, want CleanupPending (the cleanup waits, it did not fail)", blocked.Reason)
	}
	for _, want := range []string{"within 3s of the deletion", `step "patientCleanup" is waiting`} {
		if !strings.Contains(blocked.Message, want) {
			t.Errorf("DeletionBlocked message %q lacks %q", blocked.Message, want)
		}
	}
	w, err := f.get(t.Context(), "w")
	if err != nil {
		t.Fatal(err)
	}
	// Both times are whole seconds, and the deletion's is at or before the
	// moment it was asked: a pass that came back at the deadline shows the
	// condition 0 or 1 s after it. Nothing else brings a pass back (the
	// engine's own writes bring none), so without the deadline's requeue
	// the condition would wait for the hour.
	late := blocked.LastTransitionTime.Sub(w.DeletionTimestamp.Time) - deadline
	if late < 0 || late > 2*time.Second {
		t.Errorf("DeletionBlocked showed %s after the deadline of %s; want it at the deadline", late, deadline)
	}
	if n := c.calls.Load(); n < 2 {
		t.Errorf("%d cleanups, want the one at the deletion and the one at the deadline", n)
	}
}
