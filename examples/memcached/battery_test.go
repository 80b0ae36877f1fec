package memcached

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest/faults"
	"github.com/bosunkit/bosun/bosuntest/oracle"
	cachev1 "github.com/bosunkit/bosun/examples/memcached/api/v1alpha1"
)

// TestBattery runs the reliability battery on the Memcached operator, set
// up as SetupWithManager sets it up, on the package's control plane, which
// runs the Deployments' pods on simulated nodes. Each Memcached should end
// Ready with one Deployment of its size and image and one Service, both
// controlled by it, and a status that counts and names its ready pods. A
// Memcached has no finalizer: its children go with the garbage collector,
// so a deleted Memcached must leave none behind.
func TestBattery(t *testing.T) {
	faults.RunBattery(t, shared.ControlPlane(t), faults.Operator{
		Name: "memcached",
		Setup: func(mgr ctrl.Manager, p *faults.Process) error {
			r := NewReconciler()
			p.Configure(&r.Options)
			return faults.Shard(bosun.ControllerManagedBy[*cachev1.Memcached](mgr), p).Complete(r)
		},
		Object: batteryMemcached,
		// One server more: the Deployment scales, the status follows.
		Change: func(o client.Object) { o.(*cachev1.Memcached).Spec.Size++ },
		// The status reports each state of a rollout it sees, once: the
		// Deployment not yet seen by its controller, pods being updated,
		// a pod listed but not ready, all ready. How many of those a pass
		// sees depends on the machine's pace (on an idle one most
		// collapse into one), so the budget is one write per state:
		// create, the Deployment, the Service and up to seven status
		// patches (4.0 writes per object on an idle machine); change, the
		// Deployment and up to seven status patches (3.5 on an idle
		// machine; 6 measured once on a loaded one); delete, nothing (the
		// garbage collector removes the children).
		Budget: faults.Budget{
			Create: faults.Cost{Writes: 9},
			Change: faults.Cost{Writes: 8},
		},
		Converged:  batteryConverged,
		Duplicates: batteryDuplicates,
		Cleaned:    batteryCleaned,
	})
}

// batteryMemcached returns the i-th Memcached of a battery scenario: one
// server, two for odd i.
func batteryMemcached(ns string, i int) client.Object {
	return &cachev1.Memcached{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cache-%d", i)},
		Spec:       cachev1.MemcachedSpec{Size: int32(1 + i%2)},
	}
}

// controlled returns the Deployments and Services in ns by the UID of the
// object that controls them.
func controlled(ctx context.Context, c client.Client, ns string) (map[types.UID][]*appsv1.Deployment, map[types.UID][]*corev1.Service, error) {
	deps, err := oracle.Controlled[*appsv1.Deployment](ctx, c, ns, &appsv1.DeploymentList{})
	if err != nil {
		return nil, nil, err
	}
	svcs, err := oracle.Controlled[*corev1.Service](ctx, c, ns, &corev1.ServiceList{})
	if err != nil {
		return nil, nil, err
	}
	return deps, svcs, nil
}

// batteryConverged checks that each Memcached controls one Deployment of
// its size and image and one Service, both named after it, and that its
// status counts its size of ready pods and names that many.
func batteryConverged(ctx context.Context, c client.Client, ns string, objs []client.Object) error {
	byDep, bySvc, err := controlled(ctx, c, ns)
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range objs {
		m := &cachev1.Memcached{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), m); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := checkMemcached(m, byDep[m.UID], bySvc[m.UID]); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", m.Name, err))
		}
	}
	return errors.Join(errs...)
}

// checkMemcached checks the status and the children of m.
func checkMemcached(m *cachev1.Memcached, deps []*appsv1.Deployment, svcs []*corev1.Service) error {
	var errs []error
	if m.Status.ReadyReplicas != m.Spec.Size || len(m.Status.Pods) != int(m.Spec.Size) {
		errs = append(errs, fmt.Errorf("status counts %d ready and names pods %v, want %d", m.Status.ReadyReplicas, m.Status.Pods, m.Spec.Size))
	}
	switch {
	case len(deps) != 1:
		errs = append(errs, fmt.Errorf("%d deployments, want 1", len(deps)))
	case deps[0].Name != m.Name:
		errs = append(errs, fmt.Errorf("deployment %s, want %s", deps[0].Name, m.Name))
	default:
		d := deps[0]
		if r, img := *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image; r != m.Spec.Size || img != m.Spec.Image {
			errs = append(errs, fmt.Errorf("deployment has %d replicas of %s, want %d of %s", r, img, m.Spec.Size, m.Spec.Image))
		}
	}
	switch {
	case len(svcs) != 1:
		errs = append(errs, fmt.Errorf("%d services, want 1", len(svcs)))
	case svcs[0].Name != m.Name:
		errs = append(errs, fmt.Errorf("service %s, want %s", svcs[0].Name, m.Name))
	default:
		if diff := cmp.Diff(Labels(m), svcs[0].Spec.Selector); diff != "" {
			errs = append(errs, fmt.Errorf("service selector (-want +got):\n%s", diff))
		}
	}
	return errors.Join(errs...)
}

// batteryDuplicates counts the Memcacheds that control more than one
// Deployment or Service.
func batteryDuplicates(ctx context.Context, c client.Client, ns string, objs []client.Object) (int, error) {
	byDep, bySvc, err := controlled(ctx, c, ns)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, o := range objs {
		if len(byDep[o.GetUID()]) > 1 || len(bySvc[o.GetUID()]) > 1 {
			n++
		}
	}
	return n, nil
}

// batteryCleaned checks that no Deployment or Service of a deleted
// Memcached is left.
func batteryCleaned(ctx context.Context, c client.Client, ns string, objs []client.Object) error {
	return oracle.NoOrphans(ctx, c, ns, oracle.UIDs(objs), &appsv1.DeploymentList{}, &corev1.ServiceList{})
}
