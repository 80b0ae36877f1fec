package cronjob

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/explore"
	"github.com/bosunkit/bosun/bosuntest/oracle"
	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
	"github.com/bosunkit/bosun/internal/figures"
)

// exploreSchedule is the schedule of the explored CronJobs: once a year.
const exploreSchedule = "0 0 1 1 *"

// TestBatteryExplore drives the CronJob controller through sequences of
// spec changes read off its CRD: the concurrency policy, the history
// limits, the starting deadline and suspend at their bounds and removed
// (the defaulting webhook puts a removed one back at its default), invalid
// schedules (which the validating webhook refuses, and the exploration
// skips), and the hundreds of fields of the Job template. On each change
// the controller settles, a pass that finds nothing new writes nothing, no step
// takes more than 10 passes, no error is logged behind a Ready True, and
// each CronJob goes once deleted, its Job with it (through the garbage
// collector).
//
// The controller's clock stands a year ahead of the API server's, and the
// CronJobs run once a year: each new CronJob has missed exactly one run,
// which its first pass starts from the base template, and its next run is
// months away. On the real clock, a schedule frequent enough to make Jobs
// during the test makes them between any two passes once the concurrency
// policy is Allow, as it should, which a check that a pass finding nothing
// new writes nothing cannot tell from a fault.
//
// It runs 2 seeds of 6 steps, 20 of 12 at the battery's full size, and
// records the figures of the exploration.
func TestBatteryExplore(t *testing.T) {
	seeds, steps := figures.Size(2, 20), figures.Size(6, 12)
	passes, writes, logs := &bosuntest.ReconcileCounter{}, &bosuntest.WriteCounter{}, &bosuntest.LogRecorder{}
	cp := shared.ControlPlane(t)
	e := &env{t: t, c: cp.Client, ns: bosuntest.Namespace(t, cp.Client), clock: clocktesting.NewFakeClock(time.Now().AddDate(1, 0, 0))}
	// The manager sees the test's namespace only: the CronJobs other tests
	// leave behind would be a year late on its clock.
	bosuntest.RunManagerWith(t, cp, bosuntest.ManagerOptions{Namespaces: []string{e.ns}}, func(mgr ctrl.Manager) error {
		bosun.ObservationOf(mgr).AddObserver(bosun.PassObserverFunc(func(_ context.Context, r bosun.PassReport) {
			passes.Record(bosuntest.ReconcileCall{Request: reconcile.Request{NamespacedName: r.Object}, Start: r.Start, Duration: r.Duration})
		}))
		mgr = bosuntest.ManagerWithLogger(mgr, logs.Wrap(mgr.GetLogger()))
		return SetupWithManager(bosuntest.ManagerWithClient(mgr, writes.Wrap(passes.WrapClient(mgr.GetClient()))), Options{Clock: e.clock})
	})
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := explore.SpecSchema(crds[0], cronjobv1.GroupVersion.Version)
	if err != nil {
		t.Fatal(err)
	}
	target := explore.Target{
		Client: e.c,
		GVK:    cronjobv1.GroupVersion.WithKind("CronJob"),
		Spec:   spec,
		Base: map[string]any{
			"schedule": exploreSchedule,
			"jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"restartPolicy": "Never",
				"containers":    []any{map[string]any{"name": "main", "image": "busybox"}},
			}}}},
		},
		Passes: passes,
		Writes: writes,
		Logs:   logs,
		Leftovers: func(ctx context.Context, obj client.Object) error {
			return oracle.NoOrphans(ctx, e.c, e.ns, oracle.UIDs([]client.Object{obj}), &batchv1.JobList{})
		},
	}
	stats, failures := &explore.Stats{}, 0
	for seed := range uint64(seeds) {
		if err := explore.Run(t.Context(), target, e.ns, explore.Options{Seed: seed, Steps: steps, Stats: stats}); err != nil {
			failures++
			t.Errorf("seed %d: %v", seed, err)
		}
	}
	// Each sequence's CronJob started its run, or the exploration never
	// had a Job to leave behind.
	if n := writes.Counts()["create Job"]; n < seeds {
		t.Errorf("%d Jobs created for %d sequences, want one each at least", n, seeds)
	}
	stats.Record(t, "cronjob", failures)
}
