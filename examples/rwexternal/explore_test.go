package rwexternal

import (
	"context"
	"fmt"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/explore"
	rwv1 "github.com/bosunkit/bosun/examples/rwexternal/api/v1alpha1"
	"github.com/bosunkit/bosun/internal/figures"
)

// TestBatteryExplore drives the RWExternal controller through sequences of
// spec changes read off its CRD. Both fields of the spec are names
// restricted by a pattern, of which the generator makes no values, so the
// one change is the removal of the output's name, which leaves the base
// spec (the "alpha" sample, with the default output) as it is: each
// sequence checks that an RWExternal settles, that a pass that finds
// nothing new writes nothing, that no error is logged behind a Ready True,
// and that a deleted RWExternal leaves no output behind. It runs 2 seeds
// of 6 steps, 20 of 12 at the battery's full size, and records the figures
// of the exploration.
func TestBatteryExplore(t *testing.T) {
	seeds, steps := figures.Size(2, 20), figures.Size(6, 12)
	cp := shared.ControlPlane(t)
	e := newEnv(t, cp)
	passes, writes, logs := &bosuntest.ReconcileCounter{}, &bosuntest.WriteCounter{}, &bosuntest.LogRecorder{}
	// The manager sees the test's namespace only, not the RWExternals
	// other tests leave behind.
	bosuntest.RunManagerWith(t, cp, bosuntest.ManagerOptions{Namespaces: []string{e.ns}}, func(mgr ctrl.Manager) error {
		bosun.ObservationOf(mgr).AddObserver(bosun.PassObserverFunc(func(_ context.Context, r bosun.PassReport) {
			passes.Record(bosuntest.ReconcileCall{Request: reconcile.Request{NamespacedName: r.Object}, Start: r.Start, Duration: r.Duration})
		}))
		mgr = bosuntest.ManagerWithLogger(mgr, logs.Wrap(mgr.GetLogger()))
		return SetupWithManager(bosuntest.ManagerWithClient(mgr, writes.Wrap(passes.WrapClient(mgr.GetClient()))))
	})
	if err := PrepareSamples(t.Context(), e.c, e.ns); err != nil {
		t.Fatal(err)
	}
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := explore.SpecSchema(crds[0], rwv1.GroupVersion.Version)
	if err != nil {
		t.Fatal(err)
	}
	target := explore.Target{
		Client: e.c,
		GVK:    rwv1.GroupVersion.WithKind("RWExternal"),
		Spec:   spec,
		Base:   map[string]any{"inputSecret": "alpha-credentials"},
		Passes: passes,
		Writes: writes,
		Logs:   logs,
		Leftovers: func(ctx context.Context, obj client.Object) error {
			outputs, err := outputsOf(ctx, e.c, e.ns)
			if err != nil {
				return err
			}
			if left := outputs[obj.GetName()]; len(left) > 0 {
				return fmt.Errorf("%s left %d output secrets, first %s", obj.GetName(), len(left), left[0].Name)
			}
			return nil
		},
	}
	stats, failures := &explore.Stats{}, 0
	for seed := range uint64(seeds) {
		if err := explore.Run(t.Context(), target, e.ns, explore.Options{Seed: seed, Steps: steps, Stats: stats}); err != nil {
			failures++
			t.Errorf("seed %d: %v", seed, err)
		}
	}
	stats.Record(t, "rwexternal", failures)
}
