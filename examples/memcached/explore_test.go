package memcached

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/explore"
	"github.com/bosunkit/bosun/bosuntest/oracle"
	cachev1 "github.com/bosunkit/bosun/examples/memcached/api/v1alpha1"
	"github.com/bosunkit/bosun/internal/figures"
)

// TestBatteryExplore drives the Memcached controller through sequences of
// spec changes read off its CRD: sizes from none to ten, ports at their
// bounds, and the removal of the image and the port (which the API server
// defaults again); the image has a pattern, of which the generator makes
// no values. The generator does not read the CRD's CEL rules: the API
// server refuses the changes of the port, which is immutable, and the
// exploration goes on without them. On each change the controller settles with the pods running,
// a pass that finds nothing new writes nothing, no step takes more than 10
// passes, no error is logged behind a Ready True, and each Memcached goes
// once deleted, its Deployment and Service with it (through the garbage
// collector). It runs 2 seeds of 6 steps, 20 of 12 at the battery's full
// size, and records the figures of the exploration.
func TestBatteryExplore(t *testing.T) {
	// A step may roll ten pods: ten new ones come and ten old ones go,
	// each bringing up to three passes (created, being deleted, gone), and
	// the Deployment's status changes a few times for each of them. A hot
	// loop would not settle at all.
	const passBudget = 120
	seeds, steps := figures.Size(2, 20), figures.Size(6, 12)
	cp := shared.ControlPlane(t)
	e := newEnv(t, cp)
	logs := &bosuntest.LogRecorder{}
	e.mgr = bosuntest.RunManagerWith(t, cp, bosuntest.ManagerOptions{Configure: LimitPodCache}, func(mgr ctrl.Manager) error {
		return e.setup(bosuntest.ManagerWithLogger(mgr, logs.Wrap(mgr.GetLogger())))
	})
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := explore.SpecSchema(crds[0], cachev1.GroupVersion.Version)
	if err != nil {
		t.Fatal(err)
	}
	target := explore.Target{
		Client: e.c,
		GVK:    cachev1.GroupVersion.WithKind("Memcached"),
		Spec:   spec,
		// The sample, with a port of its own, so that its removal is a
		// change.
		Base:   map[string]any{"size": int64(3), "image": cachev1.DefaultImage, "port": int64(11311)},
		Passes: &e.passes.ReconcileCounter,
		Writes: e.writes,
		Logs:   logs,
		Leftovers: func(ctx context.Context, obj client.Object) error {
			return oracle.NoOrphans(ctx, e.c, e.ns, oracle.UIDs([]client.Object{obj}), &appsv1.DeploymentList{}, &corev1.ServiceList{})
		},
	}
	stats, failures := &explore.Stats{}, 0
	for seed := range uint64(seeds) {
		if err := explore.Run(t.Context(), target, e.ns, explore.Options{Seed: seed, Steps: steps, Stats: stats, PassBudget: passBudget}); err != nil {
			failures++
			t.Errorf("seed %d: %v", seed, err)
		}
	}
	stats.Record(t, "memcached", failures)
}
