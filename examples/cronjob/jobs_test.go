package cronjob

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
)

// jobTimeout bounds each wait of TestJobsRunOnRealControllers: a Job's pod
// is made, placed, run and finished by four more processes.
const jobTimeout = time.Minute

// TestJobsRunOnRealControllers runs a CronJob on a control plane whose own
// controllers run its Jobs: kube-controller-manager's Job controller makes
// each Job's pod, kube-scheduler places it on one of two simulated nodes,
// and kwok runs it to the end, so a Job completes or fails on its own, with
// the status the Job controller gives it. No test writes a Job's status.
//
// Three runs succeed, with the successful history limit at two: each sets
// status.lastScheduleTime to its scheduled time and
// status.lastSuccessfulTime to the completion time the Job controller
// recorded, and the oldest successful Job goes once the third has
// completed. Then the Job template's pod is labelled to exit with code 1,
// with a backoff limit of zero: two runs fail, with the failed history limit
// at one, so the first failed Job goes once the second has failed; failed
// runs move lastScheduleTime, never lastSuccessfulTime, and leave the
// successful Jobs alone.
func TestJobsRunOnRealControllers(t *testing.T) {
	opts, err := webhookOptions()
	if err != nil {
		t.Fatal(err)
	}
	opts.ControllerManager = true
	opts.Nodes = 2
	// The one manager of this control plane serves the webhooks too.
	e := startOn(t, bosuntest.Start(t, opts), func(mgr ctrl.Manager, opts Options) error {
		if err := SetupWebhookWithManager(mgr); err != nil {
			return err
		}
		return SetupWithManager(mgr, opts)
	})

	cj := e.create("real", every5, func(cj *cronjobv1.CronJob) {
		cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](2)
		cj.Spec.FailedJobsHistoryLimit = ptr.To[int32](1)
		cj.Spec.ConcurrencyPolicy = cronjobv1.ForbidConcurrent
		cj.Spec.JobTemplate.Spec.BackoffLimit = ptr.To[int32](0)
	})
	runs := e.runs(cj, 5)
	names := make([]string, len(runs))
	for i, run := range runs {
		names[i] = jobName(cj, run)
	}

	var lastSuccess metav1.Time
	for i, run := range runs[:3] {
		e.at(run.Add(10*time.Second), "real")
		job := e.waitJobFinished(names[i], batchv1.JobComplete)
		if job.Status.Succeeded != 1 || job.Status.CompletionTime == nil {
			t.Fatalf("job %s: %d succeeded, completed at %v; want 1 pod succeeded and a completion time", names[i], job.Status.Succeeded, job.Status.CompletionTime)
		}
		lastSuccess = *job.Status.CompletionTime
		if code, err := e.exitCode(t.Context(), names[i]); err != nil || code != 0 {
			t.Errorf("job %s: exit code %d (%v), want 0", names[i], code, err)
		}
		e.waitHistory("real", run, lastSuccess)
	}
	// The third success is one too many: the first goes.
	e.waitJobs("real", names[1], names[2])

	// From now on the Jobs' pods exit with code 1, and a Job fails at its
	// first failed pod.
	e.update("real", func(cj *cronjobv1.CronJob) {
		cj.Spec.JobTemplate.Spec.Template.Labels = map[string]string{controlplane.PodExitCodeLabel: "1"}
	})
	for i, run := range runs[3:] {
		i += 3
		e.at(run.Add(10*time.Second), "real")
		job := e.waitJobFinished(names[i], batchv1.JobFailed)
		if job.Status.Failed != 1 || job.Status.Succeeded != 0 {
			t.Errorf("job %s: %d failed, %d succeeded; want its one pod failed", names[i], job.Status.Failed, job.Status.Succeeded)
		}
		if code, err := e.exitCode(t.Context(), names[i]); err != nil || code != 1 {
			t.Errorf("job %s: exit code %d (%v), want 1", names[i], code, err)
		}
		// A failed run is scheduled, not successful.
		e.waitHistory("real", run, lastSuccess)
	}
	// The second failure is one too many: the first failed Job goes, the
	// successful ones stay.
	e.waitJobs("real", names[1], names[2], names[4])
}

// waitJobFinished waits until the Job named has the condition state
// (JobComplete or JobFailed) True, as the Job controller sets it, and
// returns it. The pod of a Job that fails must have exited with code 1.
func (e *env) waitJobFinished(name string, state batchv1.JobConditionType) *batchv1.Job {
	e.t.Helper()
	job := &batchv1.Job{}
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: name}, job); err != nil {
			return err
		}
		if got := finished(job); got != state {
			return fmt.Errorf("job %s is %q (active %d, succeeded %d, failed %d), want %s", name, got, job.Status.Active, job.Status.Succeeded, job.Status.Failed, state)
		}
		return nil
	}, bosuntest.Timeout(jobTimeout))
	if state == batchv1.JobFailed {
		for _, c := range job.Status.Conditions {
			if c.Type == batchv1.JobFailed && c.Reason != batchv1.JobReasonBackoffLimitExceeded {
				e.t.Errorf("job %s failed with reason %s, want %s", name, c.Reason, batchv1.JobReasonBackoffLimitExceeded)
			}
		}
	}
	return job
}

// waitHistory waits until the CronJob named has no active Job, and
// lastScheduleTime scheduled and lastSuccessfulTime success.
func (e *env) waitHistory(name string, scheduled time.Time, success metav1.Time) {
	e.t.Helper()
	e.waitCronJobFor(name, jobTimeout, func(cj *cronjobv1.CronJob) error {
		st := cj.Status
		switch {
		case len(st.Active) > 0:
			return fmt.Errorf("active jobs %v", activeNames(cj))
		case st.LastScheduleTime == nil || !st.LastScheduleTime.Time.Equal(scheduled):
			return fmt.Errorf("lastScheduleTime %v, want %v", st.LastScheduleTime, scheduled)
		case st.LastSuccessfulTime == nil || !st.LastSuccessfulTime.Time.Equal(success.Time):
			return fmt.Errorf("lastSuccessfulTime %v, want %v", st.LastSuccessfulTime, success)
		}
		return nil
	})
}

// waitCronJobFor is waitCronJob with a timeout of its own.
func (e *env) waitCronJobFor(name string, timeout time.Duration, check func(*cronjobv1.CronJob) error) {
	e.t.Helper()
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		cj := &cronjobv1.CronJob{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: name}, cj); err != nil {
			return err
		}
		return check(cj)
	}, bosuntest.Timeout(timeout))
}

// exitCode returns the exit code of the container of the pod of the Job
// named, as kwok finished it.
func (e *env) exitCode(ctx context.Context, name string) (int32, error) {
	var pods corev1.PodList
	if err := e.c.List(ctx, &pods, client.InNamespace(e.ns), client.MatchingLabels{batchv1.JobNameLabel: name}); err != nil {
		return 0, err
	}
	if len(pods.Items) != 1 {
		return 0, fmt.Errorf("job %s has %d pods, want 1", name, len(pods.Items))
	}
	p := pods.Items[0]
	if len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].State.Terminated == nil {
		return 0, fmt.Errorf("pod %s (phase %s) has not terminated", p.Name, p.Status.Phase)
	}
	return p.Status.ContainerStatuses[0].State.Terminated.ExitCode, nil
}
