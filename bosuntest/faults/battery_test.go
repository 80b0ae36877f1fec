package faults_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest/faults"
	"github.com/bosunkit/bosun/children"
	"github.com/bosunkit/bosun/internal/testapi"
)

// TestBattery runs the whole battery on the test operator: a ConfigMap
// and an external resource per Widget.
func TestBattery(t *testing.T) {
	st := &store{}
	faults.RunBattery(t, shared.ControlPlane(t), faults.Operator{
		Name:  "faults-test",
		Setup: setup(st),
		Object: func(ns string, i int) client.Object {
			return &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("w%d", i)}, Spec: testapi.WidgetSpec{Value: int64(i + 1)}}
		},
		Converged:  converged(st),
		Duplicates: duplicates(st),
		Cleaned: func(ctx context.Context, c client.Client, ns string, objs []client.Object) error {
			return cleaned(st)(ctx, c, ns, objs)
		},
		External: true,
		Change:   func(o client.Object) { o.(*testapi.Widget).Spec.Value += 10 },
		// Create: the finalizer, the ConfigMap, the pending mark, the
		// outcome, the first-available mark and two status writes; one
		// external create. Change: the ConfigMap and the status. Delete:
		// the fence, the status and the finalizer's release; one external
		// delete.
		Budget: faults.Budget{
			Create: faults.Cost{Writes: 7, External: 1},
			Change: faults.Cost{Writes: 2},
			Delete: faults.Cost{Writes: 3, External: 1},
			Poll:   1, PollEvery: time.Second,
		},
		// Three Deployments per Widget, rolled out one at a time. Create:
		// the Deployments besides the rest, and a status write more for
		// each Deployment a pass sees before the deployment controller
		// reported it (the condition counts the children ready; at full
		// size, 10 Widgets, the controller reports them one by one: 12.1
		// writes per Widget). Change: the matrix changes
		// the spec twice, the second time during the first's roll-out;
		// each costs at most the ConfigMap, the three Deployments, a
		// status write as each zone's turn comes (the condition counts
		// the roll-out's progress) and the last one, Ready: 8 writes.
		Rolling: &faults.Rolling{
			Setup:          setupRolling(st, 1),
			List:           &appsv1.DeploymentList{},
			MaxUnavailable: 1,
			Ready: func(o client.Object) bool {
				ready, _ := children.DefaultReadiness(o)
				return ready
			},
			Budget: faults.Budget{
				Create: faults.Cost{Writes: 13, External: 1},
				Change: faults.Cost{Writes: 16},
				Delete: faults.Cost{Writes: 3, External: 1},
				Poll:   1, PollEvery: time.Second,
			},
		},
	})
}
