package simple

import (
	"testing"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/explore"
	simplev1 "github.com/bosunkit/bosun/examples/simple/api/v1alpha1"
	"github.com/bosunkit/bosun/internal/figures"
)

// TestBatteryExplore drives the Simple controller through sequences of spec
// changes read off its CRD (dividends and divisors at their bounds, zero,
// removed): on each it settles, Ready True or False with a reason (a zero
// divisor), a pass that finds nothing new writes nothing, no step takes
// more than 10 passes, and each Simple goes once deleted. It runs 2 seeds
// of 6 steps, 20 of 12 at the battery's full size, and records the figures
// of the exploration.
func TestBatteryExplore(t *testing.T) {
	seeds, steps := figures.Size(2, 20), figures.Size(6, 12)
	writes := &bosuntest.WriteCounter{}
	cp, passes := runWatched(t, writes.Wrap)
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := explore.SpecSchema(crds[0], simplev1.GroupVersion.Version)
	if err != nil {
		t.Fatal(err)
	}
	target := explore.Target{
		Client: cp.Client,
		GVK:    simplev1.GroupVersion.WithKind("Simple"),
		Spec:   spec,
		Base:   map[string]any{"dividend": int64(7), "divisor": int64(2)},
		Passes: passes,
		Writes: writes,
	}
	ns := bosuntest.Namespace(t, cp.Client)
	stats, failures := &explore.Stats{}, 0
	for seed := range uint64(seeds) {
		if err := explore.Run(t.Context(), target, ns, explore.Options{Seed: seed, Steps: steps, Stats: stats}); err != nil {
			failures++
			t.Errorf("seed %d: %v", seed, err)
		}
	}
	stats.Record(t, "simple", failures)
}
