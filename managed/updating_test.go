package managed

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	v1 "github.com/bosunkit/bosun/managed/internal/bucketapi"
)

// TestUpdatingReason checks that while a spec change is being applied
// Synced (and so Ready) says Updating, Available stays True since the
// bucket is usable all along, and Synced is True again once the cloud
// shows the change.
func TestUpdatingReason(t *testing.T) {
	cl := newCloud()
	cl.updateDelay = 2 * time.Second
	e := start(t, cl, nil)
	e.create("grow", 1, "", nil)
	e.wait("grow", converged)

	e.change("grow", func(b *v1.Bucket) { b.Spec.Size = 2 })
	updating := map[string]cond{
		conditions.TypeReady:      {metav1.ConditionFalse, ReasonUpdating},
		defaultConditionSynced:    {metav1.ConditionFalse, ReasonUpdating},
		defaultConditionAvailable: {metav1.ConditionTrue, ReasonAvailable},
	}
	b := e.wait("grow", updating)
	if at := b.Status.AtProvider; at == nil || at.Size != 1 {
		t.Errorf("status.atProvider while updating = %+v, want the old size 1", at)
	}
	e.wait("grow", converged)
	bosuntest.Eventually(t, func(context.Context) error {
		if got, _ := cl.bucket(e.ns + ".grow"); got.size != 2 {
			return fmt.Errorf("cloud size %d, want 2", got.size)
		}
		return nil
	})
}
