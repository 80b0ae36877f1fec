package trust

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/explore"
	"github.com/bosunkit/bosun/bosuntest/oracle"
	"github.com/bosunkit/bosun/controlplane"
	trustv1alpha1 "github.com/bosunkit/bosun/examples/trust/api/v1alpha1"
	"github.com/bosunkit/bosun/internal/figures"
)

// TestBatteryExplore drives the Bundle controller through sequences of
// spec changes read off its CRD: sources of every kind with names, keys
// and selectors the schema admits (most name nothing, and the Bundle
// waits with SourceNotFound; inline data is not PEM, and it backs off
// with SourceBuildError), targets, formats and selectors at their bounds
// and removed. On each change the controller settles, a pass that finds
// nothing new writes nothing, no step takes more than 10 passes, no error
// is logged behind a Ready True, and each Bundle goes once deleted, its
// targets with it (the garbage collector's work). Bundles are
// cluster-scoped: the base spec selects the test's namespace, and the
// control plane is the test's own, since a change of the selector reaches
// every namespace. It runs 2 seeds of 6 steps, 20 of 12 at the battery's
// full size, and records the figures of the exploration.
func TestBatteryExplore(t *testing.T) {
	seeds, steps := figures.Size(2, 20), figures.Size(6, 12)
	cpOpts, err := controlplane.OptionsFor(AddToScheme, CRDs)()
	if err != nil {
		t.Fatal(err)
	}
	cpOpts.ControllerManager = true
	cp := bosuntest.Start(t, cpOpts)
	ns := bosuntest.Namespace(t, cp.Client)
	opts := withTrustNamespace(Options{SecretTargetsEnabled: true, DefaultPackage: &DefaultPackage{Name: "explore", Version: "1", Bundle: newTestCert(t, "default", false, time.Time{}).pem}})
	passes, writes, logs := &bosuntest.ReconcileCounter{}, &bosuntest.WriteCounter{}, &bosuntest.LogRecorder{}
	bosuntest.RunManagerWith(t, cp, bosuntest.ManagerOptions{Configure: CacheOptions(opts)}, func(mgr ctrl.Manager) error {
		bosun.ObservationOf(mgr).AddObserver(bosun.PassObserverFunc(func(_ context.Context, r bosun.PassReport) {
			passes.Record(bosuntest.ReconcileCall{Request: reconcile.Request{NamespacedName: r.Object}, Start: r.Start, Duration: r.Duration})
		}))
		mgr = bosuntest.ManagerWithLogger(mgr, logs.Wrap(mgr.GetLogger()))
		return SetupWithManager(bosuntest.ManagerWithClient(mgr, writes.Wrap(passes.WrapClient(mgr.GetClient()))), opts)
	})
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := explore.SpecSchema(crds[0], trustv1alpha1.GroupVersion.Version)
	if err != nil {
		t.Fatal(err)
	}
	target := explore.Target{
		Client: cp.Client,
		GVK:    trustv1alpha1.GroupVersion.WithKind("Bundle"),
		Spec:   spec,
		Base: map[string]any{
			"sources": []any{map[string]any{"inLine": newTestCert(t, "inline", false, time.Time{}).pem}},
			"target": map[string]any{
				"configMap":         map[string]any{"key": "ca.pem"},
				"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": ns}},
			},
		},
		Passes: passes,
		Writes: writes,
		Logs:   logs,
		Leftovers: func(ctx context.Context, obj client.Object) error {
			uids := oracle.UIDs([]client.Object{obj})
			if err := oracle.NoOrphans(ctx, cp.Client, "", uids, &corev1.ConfigMapList{}); err != nil {
				return err
			}
			return oracle.NoOrphans(ctx, cp.Client, "", uids, &corev1.SecretList{})
		},
	}
	stats, failures := &explore.Stats{}, 0
	for seed := range uint64(seeds) {
		if err := explore.Run(t.Context(), target, ns, explore.Options{Seed: seed, Steps: steps, Stats: stats}); err != nil {
			failures++
			t.Errorf("seed %d: %v", seed, err)
		}
	}
	stats.Record(t, "trust", failures)
}
