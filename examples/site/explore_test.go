package site

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/explore"
	"github.com/bosunkit/bosun/bosuntest/oracle"
	sitev1 "github.com/bosunkit/bosun/examples/site/api/v1alpha1"
	"github.com/bosunkit/bosun/internal/figures"
)

// TestBatteryExplore drives the Site controller through sequences of spec
// changes read off its CRD: titles of the shortest and longest length, and
// the removal of the theme. The page names and the theme's name are
// restricted by patterns, of which the generator makes no values. On each
// change the controller settles, a pass that finds nothing new writes
// nothing, no step takes more than 10 passes, no error is logged behind a
// Ready True, and each Site goes once deleted, its ConfigMaps and Service
// with it (through the garbage collector). It runs 2 seeds of 6 steps, 20
// of 12 at the battery's full size, and records the figures of the
// exploration.
func TestBatteryExplore(t *testing.T) {
	seeds, steps := figures.Size(2, 20), figures.Size(6, 12)
	cp := shared.ControlPlane(t)
	e := newEnv(t, cp)
	logs := &bosuntest.LogRecorder{}
	e.mgr = bosuntest.RunManager(t, cp, func(mgr ctrl.Manager) error {
		return e.setup(bosuntest.ManagerWithLogger(mgr, logs.Wrap(mgr.GetLogger())))
	})
	if err := PrepareSamples(t.Context(), e.c, e.ns); err != nil {
		t.Fatal(err)
	}
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := explore.SpecSchema(crds[0], sitev1.GroupVersion.Version)
	if err != nil {
		t.Fatal(err)
	}
	target := explore.Target{
		Client: e.c,
		GVK:    sitev1.GroupVersion.WithKind("Site"),
		Spec:   spec,
		// The "docs" sample, whose theme PrepareSamples made.
		Base:   map[string]any{"title": "bosun docs", "pages": []any{"index", "guide"}, "themeSecret": "docs-theme"},
		Passes: &e.passes.ReconcileCounter,
		Writes: e.writes,
		Logs:   logs,
		Leftovers: func(ctx context.Context, obj client.Object) error {
			return oracle.NoOrphans(ctx, e.c, e.ns, oracle.UIDs([]client.Object{obj}), &corev1.ConfigMapList{}, &corev1.ServiceList{})
		},
	}
	stats, failures := &explore.Stats{}, 0
	for seed := range uint64(seeds) {
		if err := explore.Run(t.Context(), target, e.ns, explore.Options{Seed: seed, Steps: steps, Stats: stats}); err != nil {
			failures++
			t.Errorf("seed %d: %v", seed, err)
		}
	}
	stats.Record(t, "site", failures)
}
