package cronjob

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/faults"
	"github.com/bosunkit/bosun/bosuntest/oracle"
	"github.com/bosunkit/bosun/controlplane"
	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
)

// batterySchedule is the schedule of the battery's CronJobs: a run every
// second, so that the first Job comes at once.
const batterySchedule = "@every 1s"

// TestBattery runs the reliability battery on the CronJob operator, set up
// as SetupWithManager sets it up, on the real clock. Each CronJob runs
// every second and forbids concurrent runs; no Job ever finishes (the test
// control plane runs no Job controller), so each CronJob should end with
// exactly one Job, its first run, and then wait: a second Job of a CronJob
// is a duplicate run. The starting deadline keeps the postponed runs from
// piling up into TooManyMissedRuns. A CronJob has no finalizer: its Jobs
// go with the garbage collector, which the package's control plane runs,
// so a deleted CronJob must leave none behind.
func TestBattery(t *testing.T) {
	faults.RunBattery(t, shared.ControlPlane(t), faults.Operator{
		Name: "cronjob",
		Setup: func(mgr ctrl.Manager, p *faults.Process) error {
			r := NewReconciler(Options{})
			p.Configure(&r.Options)
			return faults.Shard(bosun.ControllerManagedBy[*cronjobv1.CronJob](mgr), p).Complete(r)
		},
		Object: batteryCronJob,
		// A longer starting deadline: nothing to redo, but the CronJob must
		// be Ready for its new generation.
		Change: func(o client.Object) { o.(*cronjobv1.CronJob).Spec.StartingDeadlineSeconds = ptr.To[int64](20) },
		// Create: the Job and the status, and the status of a first pass
		// that comes before the first scheduled time; change: the status;
		// delete: nothing (the garbage collector removes the Job).
		Budget: faults.Budget{
			Create: faults.Cost{Writes: 3},
			Change: faults.Cost{Writes: 1},
		},
		Converged:  batteryConverged,
		Duplicates: batteryDuplicates,
		Cleaned:    batteryCleaned,
		// v1 is stored today; the matrix moves the storage to v2, as the
		// release that stores v2 would, while the operator writes.
		Migration: &faults.Migration{CRD: CRDName, ControlPlane: migrationControlPlane},
	})
}

// migrationControlPlane starts a control plane as the package's shared
// one, for one battery cell that moves the CronJob CRD's storage version,
// with a manager of its own serving the webhooks and conversions until the
// cell ends.
func migrationControlPlane(t *testing.T) *controlplane.ControlPlane {
	own := &bosuntest.Shared{Options: shared.Options, Webhooks: shared.Webhooks}
	cp := own.ControlPlane(t)
	t.Cleanup(func() {
		if err := own.Stop(); err != nil {
			t.Error(err)
		}
	})
	return cp
}

// batteryCronJob returns the i-th CronJob of a battery scenario.
func batteryCronJob(ns string, i int) client.Object {
	return newCronJob(ns, fmt.Sprintf("cron-%d", i), batterySchedule, func(cj *cronjobv1.CronJob) {
		cj.Spec.ConcurrencyPolicy = cronjobv1.ForbidConcurrent
		cj.Spec.StartingDeadlineSeconds = ptr.To[int64](10)
		cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Args = []string{"echo", fmt.Sprintf("run of %d", i)}
	})
}

// batteryConverged checks that each CronJob controls exactly one Job, made
// from its template, labelled with its name and annotated with its
// scheduled time, and that the status lists that Job as active and its
// scheduled time as the last.
func batteryConverged(ctx context.Context, c client.Client, ns string, objs []client.Object) error {
	byOwner, err := oracle.Controlled[*batchv1.Job](ctx, c, ns, &batchv1.JobList{})
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range objs {
		cj := &cronjobv1.CronJob{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), cj); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := checkRun(cj, byOwner[cj.UID]); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", cj.Name, err))
		}
	}
	return errors.Join(errs...)
}

// checkRun checks the one Job of cj and what cj's status says of it.
func checkRun(cj *cronjobv1.CronJob, jobs []*batchv1.Job) error {
	if len(jobs) != 1 {
		names := []string{}
		for _, j := range jobs {
			names = append(names, j.Name)
		}
		return fmt.Errorf("jobs %v, want one", names)
	}
	job := jobs[0]
	var errs []error
	if job.Labels[LabelCronJob] != cj.Name {
		errs = append(errs, fmt.Errorf("job %s has label %s=%q, want %q", job.Name, LabelCronJob, job.Labels[LabelCronJob], cj.Name))
	}
	at, err := time.Parse(time.RFC3339, job.Annotations[ScheduledAtAnnotation])
	if err != nil {
		errs = append(errs, fmt.Errorf("job %s scheduled-at: %w", job.Name, err))
	} else if want := fmt.Sprintf("%s-%d", cj.Name, at.Unix()); job.Name != want {
		errs = append(errs, fmt.Errorf("job %s, scheduled at %s, want the name %s", job.Name, at, want))
	}
	tmpl := cj.Spec.JobTemplate.Spec.Template.Spec.Containers
	if diff := cmp.Diff(tmpl[0].Args, job.Spec.Template.Spec.Containers[0].Args); diff != "" {
		errs = append(errs, fmt.Errorf("job %s args (-template +job):\n%s", job.Name, diff))
	}
	want := []corev1.ObjectReference{{APIVersion: "batch/v1", Kind: "Job", Namespace: job.Namespace, Name: job.Name, UID: job.UID}}
	if diff := cmp.Diff(want, cj.Status.Active); diff != "" {
		errs = append(errs, fmt.Errorf("status.active (-want +got):\n%s", diff))
	}
	if last := cj.Status.LastScheduleTime; err == nil && (last == nil || !last.Time.Equal(at)) {
		errs = append(errs, fmt.Errorf("status.lastScheduleTime %v, want %s", last, at))
	}
	return errors.Join(errs...)
}

// batteryDuplicates counts the CronJobs that control more than one Job:
// with concurrent runs forbidden and no Job finishing, a second Job is a
// run started twice.
func batteryDuplicates(ctx context.Context, c client.Client, ns string, objs []client.Object) (int, error) {
	byOwner, err := oracle.Controlled[*batchv1.Job](ctx, c, ns, &batchv1.JobList{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, o := range objs {
		if len(byOwner[o.GetUID()]) > 1 {
			n++
		}
	}
	return n, nil
}

// batteryCleaned checks that no Job of a deleted CronJob is left.
func batteryCleaned(ctx context.Context, c client.Client, ns string, objs []client.Object) error {
	return oracle.NoOrphans(ctx, c, ns, oracle.UIDs(objs), &batchv1.JobList{})
}
