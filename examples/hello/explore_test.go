package hello

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/explore"
	"github.com/bosunkit/bosun/bosuntest/oracle"
	hellov1 "github.com/bosunkit/bosun/examples/hello/api/v1alpha1"
	"github.com/bosunkit/bosun/internal/figures"
)

// TestBatteryExplore drives the Greeting controller through sequences of
// spec changes read off its CRD: names of the shortest and longest length
// and the removal of the template (which the API server defaults again);
// the templates the generator makes, and the removal of the immutable
// configMapName, are refused by the CRD's validation rules and skipped. On
// each change the controller settles, a pass that finds nothing new writes
// nothing, no step takes more than 10 passes, no error is logged behind a
// Ready True, and each Greeting goes once deleted, its ConfigMap with it.
// It runs 2 seeds of 6 steps, 20 of 12 at the battery's full size, and
// records the figures of the exploration.
func TestBatteryExplore(t *testing.T) {
	seeds, steps := figures.Size(2, 20), figures.Size(6, 12)
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	passes, writes, logs := &bosuntest.ReconcileCounter{}, &bosuntest.WriteCounter{}, &bosuntest.LogRecorder{}
	// The manager sees the test's namespace only, not the Greetings other
	// tests leave behind.
	bosuntest.RunManagerWith(t, cp, bosuntest.ManagerOptions{Namespaces: []string{ns}}, func(mgr ctrl.Manager) error {
		bosun.ObservationOf(mgr).AddObserver(bosun.PassObserverFunc(func(_ context.Context, r bosun.PassReport) {
			passes.Record(bosuntest.ReconcileCall{Request: reconcile.Request{NamespacedName: r.Object}, Start: r.Start, Duration: r.Duration})
		}))
		mgr = bosuntest.ManagerWithLogger(mgr, logs.Wrap(mgr.GetLogger()))
		return SetupWithManager(bosuntest.ManagerWithClient(mgr, writes.Wrap(passes.WrapClient(mgr.GetClient()))))
	})
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := explore.SpecSchema(crds[0], hellov1.GroupVersion.Version)
	if err != nil {
		t.Fatal(err)
	}
	target := explore.Target{
		Client: cp.Client,
		GVK:    hellov1.GroupVersion.WithKind("Greeting"),
		Spec:   spec,
		// The "gopher" sample: a template of its own, so that its removal
		// is a change.
		Base:   map[string]any{"name": "Gopher", "template": "Hi %s, welcome aboard."},
		Passes: passes,
		Writes: writes,
		Logs:   logs,
		Leftovers: func(ctx context.Context, obj client.Object) error {
			return oracle.NoOrphans(ctx, cp.Client, ns, oracle.UIDs([]client.Object{obj}), &corev1.ConfigMapList{})
		},
	}
	stats, failures := &explore.Stats{}, 0
	for seed := range uint64(seeds) {
		if err := explore.Run(t.Context(), target, ns, explore.Options{Seed: seed, Steps: steps, Stats: stats}); err != nil {
			failures++
			t.Errorf("seed %d: %v", seed, err)
		}
	}
	stats.Record(t, "hello", failures)
}
