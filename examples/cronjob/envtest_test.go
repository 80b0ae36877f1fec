package cronjob

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/faults"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/controlplane"
	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
)

// every5 runs every five minutes. Every time zone's offset is a multiple of
// five minutes, so the times do not depend on the machine's zone.
const every5 = "*/5 * * * *"

// activeNames returns the names of the Jobs in cj's status.active.
func activeNames(cj *cronjobv1.CronJob) []string {
	names := []string{}
	for _, ref := range cj.Status.Active {
		names = append(names, ref.Name)
	}
	return names
}

// waitActive waits until the CronJob named lists exactly the Jobs named
// want as active and has lastScheduleTime last, and returns it.
func (e *env) waitActive(name string, last time.Time, want ...string) *cronjobv1.CronJob {
	e.t.Helper()
	if want == nil {
		want = []string{}
	}
	return e.waitCronJob(name, func(cj *cronjobv1.CronJob) error {
		if diff := cmp.Diff(want, activeNames(cj)); diff != "" {
			return fmt.Errorf("status.active (-want +got):\n%s", diff)
		}
		if got := cj.Status.LastScheduleTime; got == nil || !got.Time.Equal(last) {
			return fmt.Errorf("status.lastScheduleTime %v, want %v", got, last)
		}
		return nil
	})
}

// TestRunsAtScheduledTimes follows a CronJob through its first two runs:
// nothing before the first scheduled time, then one Job per run, named after
// the time, labelled, annotated and controlled by the CronJob.
func TestRunsAtScheduledTimes(t *testing.T) {
	e := start(t, nil)
	cj := e.create("tick", every5)
	runs := e.runs(cj, 2)
	e.waitReady("tick", metav1.ConditionTrue, conditions.ReasonSucceeded)
	e.waitJobs("tick")

	// Just before the first run, a spec change brings a reconcile: still
	// nothing to run.
	e.clock.SetTime(runs[0].Add(-time.Second))
	e.update("tick", func(cj *cronjobv1.CronJob) { cj.Spec.FailedJobsHistoryLimit = ptr.To[int32](2) })
	e.waitJobs("tick")

	e.at(runs[0].Add(10*time.Second), "tick")
	first := jobName(cj, runs[0])
	jobs := e.waitJobs("tick", first)
	job := jobs[0]
	// The API server adds labels of its own to Jobs; only ours count.
	ours := cmpopts.IgnoreMapEntries(func(k, _ string) bool { return k != "app" && k != LabelCronJob })
	if diff := cmp.Diff(map[string]string{"app": "test", LabelCronJob: "tick"}, job.Labels, ours); diff != "" {
		t.Errorf("job labels (-want +got):\n%s", diff)
	}
	if got, want := job.Annotations[ScheduledAtAnnotation], runs[0].UTC().Format(time.RFC3339); got != want {
		t.Errorf("job annotation %s = %q, want %q", ScheduledAtAnnotation, got, want)
	}
	if ref := metav1.GetControllerOf(&job); ref == nil || ref.UID != cj.UID || ref.Kind != "CronJob" {
		t.Errorf("job controller %+v, want the CronJob %s", ref, cj.UID)
	}
	e.waitActive("tick", runs[0], first)

	// The second run starts next to the first, which is still active
	// (concurrency policy Allow by default).
	e.at(runs[1].Add(10*time.Second), "tick")
	second := jobName(cj, runs[1])
	e.waitJobs("tick", first, second)
	e.waitActive("tick", runs[1], first, second)
	e.waitReady("tick", metav1.ConditionTrue, conditions.ReasonSucceeded)
}

// TestMissedRunsAfterDowntime moves the clock past three scheduled times at
// once. Only the latest missed run starts, and only where it is not later
// than the starting deadline allows.
func TestMissedRunsAfterDowntime(t *testing.T) {
	e := start(t, nil)
	deadline := func(s int64) func(*cronjobv1.CronJob) {
		return func(cj *cronjobv1.CronJob) { cj.Spec.StartingDeadlineSeconds = ptr.To(s) }
	}
	strict := e.create("strict", every5, deadline(60))    // one minute
	lenient := e.create("lenient", every5, deadline(300)) // five minutes
	unbound := e.create("unbound", every5)                // no deadline
	names := []string{"strict", "lenient", "unbound"}

	// Two minutes after the third run since the last creation: strict is too
	// late for it, lenient and unbound start it, and none starts an earlier
	// one.
	now := e.runs(unbound, 3)[2]
	e.at(now.Add(2*time.Minute), names...)
	e.waitJobs("lenient", jobName(lenient, now))
	e.waitJobs("unbound", jobName(unbound, now))
	e.waitActive("lenient", now, jobName(lenient, now))

	// The next run is on time for all of them.
	next := now.Add(5 * time.Minute)
	e.at(next.Add(30*time.Second), names...)
	e.waitJobs("strict", jobName(strict, next))
	e.waitJobs("lenient", jobName(lenient, now), jobName(lenient, next))
	e.waitJobs("unbound", jobName(unbound, now), jobName(unbound, next))
	e.waitActive("strict", next, jobName(strict, next))
}

// TestHistoryLimits finishes four runs, two successful and two failed, with
// both history limits at one: the newest of each kind stays.
func TestHistoryLimits(t *testing.T) {
	e := start(t, nil)
	cj := e.create("history", every5, func(cj *cronjobv1.CronJob) {
		cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](1)
		cj.Spec.FailedJobsHistoryLimit = ptr.To[int32](1)
	})
	runs := e.runs(cj, 4)
	var names []string
	for i, run := range runs {
		e.at(run.Add(10*time.Second), "history")
		name := jobName(cj, run)
		names = append(names, name)
		e.waitActive("history", run, name)
		e.finish(name, i < 2)
	}
	jobs := e.waitJobs("history", names[1], names[3])
	got := e.waitActive("history", runs[3])
	var completed time.Time
	for _, j := range jobs {
		if j.Name == names[1] {
			completed = j.Status.CompletionTime.Time
		}
	}
	if l := got.Status.LastSuccessfulTime; l == nil || !l.Time.Equal(completed) {
		t.Errorf("lastSuccessfulTime %v, want %v, the completion of %s", l, completed, names[1])
	}
}

// TestSuspend checks that a suspended CronJob starts nothing, and that
// resuming it starts the run missed meanwhile.
func TestSuspend(t *testing.T) {
	e := start(t, nil)
	cj := e.create("pause", every5, func(cj *cronjobv1.CronJob) { cj.Spec.Suspend = ptr.To(true) })
	runs := e.runs(cj, 2)

	// A spec change after the clock moved past the first run brings a
	// reconcile at that time; it must start nothing.
	e.clock.SetTime(runs[1].Add(10 * time.Second))
	e.update("pause", func(cj *cronjobv1.CronJob) { cj.Spec.StartingDeadlineSeconds = ptr.To[int64](3600) })
	e.waitJobs("pause")

	e.update("pause", func(cj *cronjobv1.CronJob) { cj.Spec.Suspend = ptr.To(false) })
	e.waitJobs("pause", jobName(cj, runs[1]))
	e.waitActive("pause", runs[1], jobName(cj, runs[1]))
}

// TestConcurrencyPolicies checks Forbid and Replace when a run is due while
// the Job of the previous one is still active.
func TestConcurrencyPolicies(t *testing.T) {
	e := start(t, nil)
	policy := func(p cronjobv1.ConcurrencyPolicy) func(*cronjobv1.CronJob) {
		return func(cj *cronjobv1.CronJob) { cj.Spec.ConcurrencyPolicy = p }
	}
	forbid := e.create("forbid", every5, policy(cronjobv1.ForbidConcurrent))
	replace := e.create("replace", every5, policy(cronjobv1.ReplaceConcurrent))
	fr, rr := e.runs(forbid, 2), e.runs(replace, 2)

	e.at(fr[0].Add(10*time.Second), "forbid")
	e.at(rr[0].Add(10*time.Second), "replace")
	e.waitJobs("forbid", jobName(forbid, fr[0]))
	e.waitJobs("replace", jobName(replace, rr[0]))

	// Replace deletes the active Job and starts the new one.
	e.at(rr[1].Add(10*time.Second), "replace")
	e.waitJobs("replace", jobName(replace, rr[1]))

	// Forbid starts nothing while its Job is active: a spec change brings a
	// reconcile at the new time.
	e.clock.SetTime(fr[1].Add(10 * time.Second))
	e.update("forbid", func(cj *cronjobv1.CronJob) { cj.Spec.StartingDeadlineSeconds = ptr.To[int64](3600) })
	e.waitJobs("forbid", jobName(forbid, fr[0]))
	e.waitActive("forbid", fr[0], jobName(forbid, fr[0]))

	// Once it finishes, the postponed run starts.
	e.finish(jobName(forbid, fr[0]), true)
	e.waitJobs("forbid", jobName(forbid, fr[0]), jobName(forbid, fr[1]))
	e.waitActive("forbid", fr[1], jobName(forbid, fr[1]))
}

// jobHidingClient is a client whose Lists of Jobs come back empty while
// hide is set: a cache that has not yet seen the Jobs made since it last
// caught up, as after a relist or under load.
type jobHidingClient struct {
	client.Client
	hide *atomic.Bool
}

// List lists through the wrapped client and, while hide is set, drops the
// Jobs.
func (c jobHidingClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	if jobs, ok := list.(*batchv1.JobList); ok && c.hide.Load() {
		jobs.Items = nil
	}
	return nil
}

// TestConcurrencyPoliciesWithLaggingCache runs Forbid and Replace with a
// cache that does not show the Job of the first run when the second is
// due. The operator must not take the cache's word that no Job is active:
// Forbid still starts nothing, and Replace still deletes the first Job
// before it starts the second, so at no time do two runs go on at once.
func TestConcurrencyPoliciesWithLaggingCache(t *testing.T) {
	tests := []struct {
		policy cronjobv1.ConcurrencyPolicy
		// want are the runs, by index, whose Jobs are there after the
		// second run was due.
		want []int
	}{
		{policy: cronjobv1.ForbidConcurrent, want: []int{0}},
		{policy: cronjobv1.ReplaceConcurrent, want: []int{1}},
	}
	for _, tt := range tests {
		t.Run(string(tt.policy), func(t *testing.T) {
			hide := &atomic.Bool{}
			counter := &bosuntest.ReconcileCounter{}
			e := start(t, func(mgr ctrl.Manager, opts Options) error {
				if err := IndexCronJobControllerManagerFields(context.Background(), mgr.GetFieldIndexer()); err != nil {
					return err
				}
				r := NewReconciler(opts)
				r.Client, r.APIReader = jobHidingClient{Client: mgr.GetClient(), hide: hide}, mgr.GetAPIReader()
				if err := r.Validate(); err != nil {
					return err
				}
				return ctrl.NewControllerManagedBy(mgr).For(&cronjobv1.CronJob{}).Owns(&batchv1.Job{}).
					Named(ControllerName).Complete(counter.Wrap(r))
			})
			cj := e.create("lag", every5, func(cj *cronjobv1.CronJob) { cj.Spec.ConcurrencyPolicy = tt.policy })
			key := client.ObjectKeyFromObject(cj)
			runs := e.runs(cj, 2)
			e.at(runs[0].Add(10*time.Second), "lag")
			e.waitJobs("lag", jobName(cj, runs[0]))
			e.waitActive("lag", runs[0], jobName(cj, runs[0]))

			// The second run is due; the cache shows no Job. Wait for a
			// reconcile that began after the clock moved to finish.
			hide.Store(true)
			e.clock.SetTime(runs[1].Add(10 * time.Second))
			since := time.Now()
			e.at(runs[1].Add(10*time.Second), "lag")
			bosuntest.Eventually(t, func(context.Context) error {
				if counter.CountSince(key, since) == 0 {
					return errors.New("no reconcile since the second run was due")
				}
				return nil
			})
			jobs, err := e.jobs(t.Context(), "lag")
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, j := range jobs {
				got = append(got, j.Name)
			}
			want := []string{}
			for _, i := range tt.want {
				want = append(want, jobName(cj, runs[i]))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("jobs once the second run was due (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReplaceKeepsTheRunsOwnJob gives a CronJob with the Replace policy
// the Job of its first run before the controller starts that run, as a
// controller that died between creating the Job and recording the run
// leaves it. Replace must not take the run's own Job for an earlier one:
// the Job stays as it is and the run counts as started.
func TestReplaceKeepsTheRunsOwnJob(t *testing.T) {
	e := start(t, nil)
	cj := e.create("own", every5, func(cj *cronjobv1.CronJob) { cj.Spec.ConcurrencyPolicy = cronjobv1.ReplaceConcurrent })
	run := e.runs(cj, 1)[0]
	name := jobName(cj, run)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       e.ns,
			Name:            name,
			Labels:          map[string]string{LabelCronJob: cj.Name},
			Annotations:     map[string]string{ScheduledAtAnnotation: run.UTC().Format(time.RFC3339)},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cj, cronjobv1.GroupVersion.WithKind("CronJob"))},
		},
		Spec: cj.Spec.JobTemplate.Spec,
	}
	if err := e.c.Create(t.Context(), job); err != nil {
		t.Fatal(err)
	}

	e.at(run.Add(10*time.Second), "own")
	e.waitActive("own", run, name)
	jobs, err := e.jobs(t.Context(), "own")
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].UID != job.UID {
		var got []string
		for _, j := range jobs {
			got = append(got, fmt.Sprintf("%s (uid %s)", j.Name, j.UID))
		}
		t.Errorf("jobs %v, want only %s (uid %s), the run's own Job, untouched", got, name, job.UID)
	}
}

// TestInvalidSchedule checks that a schedule that does not parse shows as
// Ready=False with reason InvalidSchedule, is not retried, and recovers when
// fixed. The validating webhook refuses such a schedule (TestValidation),
// so the test runs on a control plane of its own without the admission
// webhooks, as a cluster where they are not installed is: the controller
// must not count on them.
func TestInvalidSchedule(t *testing.T) {
	opts, err := controlplane.OptionsFor(AddToScheme, CRDs)()
	if err != nil {
		t.Fatal(err)
	}
	counter := &bosuntest.ReconcileCounter{}
	e := startOn(t, bosuntest.Start(t, opts), func(mgr ctrl.Manager, opts Options) error {
		if err := IndexCronJobControllerManagerFields(context.Background(), mgr.GetFieldIndexer()); err != nil {
			return err
		}
		r := NewReconciler(opts)
		r.Client, r.APIReader = mgr.GetClient(), mgr.GetAPIReader()
		if err := r.Validate(); err != nil {
			return err
		}
		// Registered directly with controller-runtime, so that the counter
		// sits between the controller and the engine.
		return ctrl.NewControllerManagedBy(mgr).For(&cronjobv1.CronJob{}).Owns(&batchv1.Job{}).
			Named(ControllerName).Complete(counter.Wrap(r))
	})
	cj := newCronJob(e.ns, "broken", "every tuesday")
	if err := e.c.Create(t.Context(), cj); err != nil {
		t.Fatal(err)
	}
	got := e.waitReady("broken", metav1.ConditionFalse, ReasonInvalidSchedule)
	if msg := conditions.Find(got.Status.Conditions, conditions.TypeReady).Message; !strings.Contains(msg, `"every tuesday"`) {
		t.Errorf("Ready message %q does not name the schedule", msg)
	}

	// The controller is registered directly with controller-runtime, so
	// the event of the status write brings one more reconcile: the count
	// begins once it has returned, and runs over a window measured in time
	// and in the reconciles of another CronJob.
	key := client.ObjectKeyFromObject(cj)
	bosuntest.Eventually(t, func(context.Context) error {
		if n := counter.Count(key); n < 2 {
			return fmt.Errorf("%d reconciles, want the one of the creation and the one of the status write", n)
		}
		return nil
	})
	e.create("clock", every5)
	before := counter.Count(key)
	const span, ticks = 2 * time.Second, 10
	e.window(counter, "clock", span, ticks)
	if n := counter.Count(key) - before; n > 0 {
		t.Errorf("%d reconciles in %s and %d reconciles of another CronJob after the invalid schedule was reported, want 0", n, span, ticks)
	}

	e.update("broken", func(cj *cronjobv1.CronJob) { cj.Spec.Schedule = every5 })
	e.waitReady("broken", metav1.ConditionTrue, conditions.ReasonSucceeded)
}

// TestSampleRuns creates the demo's sample and checks that it starts a Job
// at its first scheduled time.
func TestSampleRuns(t *testing.T) {
	e := start(t, nil)
	for _, obj := range Samples(e.ns) {
		if err := e.c.Create(t.Context(), obj); err != nil {
			t.Fatalf("create sample %s: %v", obj.GetName(), err)
		}
		cj := e.waitReady(obj.GetName(), metav1.ConditionTrue, conditions.ReasonSucceeded)
		run := e.runs(cj, 1)[0]
		e.at(run.Add(time.Second), cj.Name)
		e.waitJobs(cj.Name, jobName(cj, run))
	}
}

// TestForeignJobIsNotTheRun puts a Job that the CronJob does not control
// under the name of its first run. The run is not counted as started
// (lastScheduleTime stays unset, the Job is left as it is), Ready says why
// with ReasonJobNameTaken, and one Warning event says so, however often the
// controller looks again. Once the Job is gone, the run starts.
func TestForeignJobIsNotTheRun(t *testing.T) {
	e := start(t, nil)
	cj := e.create("taken", every5)
	run := e.runs(cj, 1)[0]
	name := jobName(cj, run)
	foreign := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name, Labels: map[string]string{LabelCronJob: "taken"}},
		Spec:       newCronJob(e.ns, "x", every5).Spec.JobTemplate.Spec,
	}
	if err := e.c.Create(t.Context(), foreign); err != nil {
		t.Fatal(err)
	}

	e.at(run.Add(10*time.Second), "taken")
	got := e.waitReady("taken", metav1.ConditionFalse, ReasonJobNameTaken)
	if got.Status.LastScheduleTime != nil {
		t.Errorf("lastScheduleTime %v, want unset: the run did not start", got.Status.LastScheduleTime)
	}
	if msg := conditions.Find(got.Status.Conditions, conditions.TypeReady).Message; !strings.Contains(msg, name) {
		t.Errorf("Ready message %q does not name the Job %s", msg, name)
	}
	// Look again twice more: still one event.
	e.at(run.Add(20*time.Second), "taken")
	e.at(run.Add(30*time.Second), "taken")
	e.waitCronJob("taken", func(cj *cronjobv1.CronJob) error {
		if cj.Annotations[touchAnnotation] != run.Add(30*time.Second).UTC().Format(time.RFC3339Nano) {
			return errors.New("not touched yet")
		}
		if c := conditions.Find(cj.Status.Conditions, conditions.TypeReady); c == nil || c.Reason != string(ReasonJobNameTaken) {
			return fmt.Errorf("Ready %+v, want reason %s", c, ReasonJobNameTaken)
		}
		return nil
	})
	var live batchv1.Job
	if err := e.c.Get(t.Context(), client.ObjectKeyFromObject(foreign), &live); err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(&live); ref != nil {
		t.Errorf("foreign job got controller %+v, want none", ref)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		var evs eventsv1.EventList
		if err := e.c.List(ctx, &evs, client.InNamespace(e.ns)); err != nil {
			return err
		}
		n := 0
		for _, ev := range evs.Items {
			if ev.Reason == string(ReasonJobNameTaken) && ev.Regarding.Name == "taken" {
				n++
				if ev.Type != corev1.EventTypeWarning {
					t.Errorf("event type %s, want Warning", ev.Type)
				}
				if ev.DeprecatedCount > 1 || ev.Series != nil && ev.Series.Count > 1 {
					return fmt.Errorf("event repeated: %+v", ev)
				}
			}
		}
		if n != 1 {
			return fmt.Errorf("%d %s events, want 1", n, ReasonJobNameTaken)
		}
		return nil
	})

	// The user removes the Job: the run starts.
	if err := e.c.Delete(t.Context(), &live, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		var j batchv1.Job
		err := e.c.Get(ctx, client.ObjectKeyFromObject(foreign), &j)
		if err == nil && j.UID == live.UID {
			return errors.New("foreign job not gone yet")
		}
		return client.IgnoreNotFound(err)
	})
	e.at(run.Add(40*time.Second), "taken")
	e.waitJobs("taken", name)
	e.waitActive("taken", run, name)
	e.waitReady("taken", metav1.ConditionTrue, conditions.ReasonSucceeded)
}

// TestActiveWithoutJobEvents drops every watch event of Jobs, so the cache
// never sees the Job a run creates: the status still lists it as active at
// once, from the create and from the API server, and the run is not
// started twice.
func TestActiveWithoutJobEvents(t *testing.T) {
	t.Parallel()
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	faults.Start(t, cp, faults.Options{
		Name:      "cronjob-no-job-events",
		Namespace: ns,
		Plan:      faults.Plan{Seed: 1, Watch: faults.WatchFaults{Resources: []string{"jobs"}, Drop: 1}},
	}, func(mgr ctrl.Manager, _ *faults.Process) error { return SetupWithManager(mgr, Options{}) })
	cj := newCronJob(ns, "blind", "@every 1s", func(cj *cronjobv1.CronJob) {
		cj.Spec.ConcurrencyPolicy = cronjobv1.ForbidConcurrent
	})
	if err := cp.Client.Create(t.Context(), cj); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		got := &cronjobv1.CronJob{}
		if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(cj), got); err != nil {
			return err
		}
		var jobs batchv1.JobList
		if err := cp.Client.List(ctx, &jobs, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(jobs.Items) != 1 {
			return fmt.Errorf("%d jobs, want 1", len(jobs.Items))
		}
		want := []corev1.ObjectReference{{APIVersion: "batch/v1", Kind: "Job", Namespace: ns, Name: jobs.Items[0].Name, UID: jobs.Items[0].UID}}
		if diff := cmp.Diff(want, got.Status.Active); diff != "" {
			return fmt.Errorf("status.active (-want +got):\n%s", diff)
		}
		return nil
	}, bosuntest.Timeout(2*time.Minute))
}
