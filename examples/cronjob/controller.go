package cronjob

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
	"github.com/bosunkit/bosun/flow"
)

const (
	// ControllerName is the name of the CronJob controller in logs, metrics
	// and events.
	ControllerName = "cronjob"
	// LabelCronJob is the label that names a Job's CronJob.
	LabelCronJob = "cronjob"
	// ScheduledAtAnnotation holds a Job's scheduled time, in RFC 3339.
	ScheduledAtAnnotation = "cronjob.bosun.dev/scheduled-at"
	// ReasonInvalidSchedule is the reason of Ready=False for a schedule that
	// does not parse.
	ReasonInvalidSchedule = "InvalidSchedule"
	// ReasonTooManyMissedRuns is the reason of Ready=False when more than
	// MaxMissedRuns runs were missed.
	ReasonTooManyMissedRuns = "TooManyMissedRuns"
	// ReasonJobNameTaken is the reason of Ready=False when the name of the
	// Job of a due run is held by a Job this CronJob does not control: the
	// run is not started, nor counted as started, until that Job is gone.
	ReasonJobNameTaken = "JobNameTaken"
	// MaxMissedRuns is the most runs ScheduledRuns accepts to have been
	// missed since the last one; more mean the clock jumped or the operator
	// was down for long, and StartingDeadlineSeconds should bound how far
	// back to look.
	MaxMissedRuns = 100
)

// Options configures the CronJob reconciler.
type Options struct {
	// Clock tells the time the schedule is checked against. Nil means the
	// real clock.
	Clock clock.PassiveClock
	// Hooks run around every action, after the implementation's own (a
	// flow.Trace in a test records which actions ran).
	Hooks []flow.Hook
}

// NewReconciler returns the engine reconciler for CronJobs, named
// ControllerName. Its one step joins the three actions, so each runs
// whatever the others return; RunNextScheduledJob is left out while the
// CronJob is suspended. The actions write what they find into the status,
// which the engine saves. Its clients and recorder are filled in by
// SetupWithManager, or by the caller.
func NewReconciler(opts Options) *bosun.Reconciler[*cronjobv1.CronJob] {
	clk := cmp.Or[clock.PassiveClock](opts.Clock, clock.RealClock{})
	steps := NewCronJobControllerManagerSteps(func(req *bosun.Pass[*cronjobv1.CronJob], _ *CronJobControllerManagerState) CronJobControllerManagerImpl {
		return &actions{req: req, clock: clk}
	}, opts.Hooks...)
	return &bosun.Reconciler[*cronjobv1.CronJob]{Name: ControllerName, Steps: []bosun.Step[*cronjobv1.CronJob]{bosun.Join(
		steps.ListActiveJobsAndUpdateStatus(),
		steps.CleanUpOldJobsExceedsHistoryLimits(),
		bosun.If(func(req *bosun.Pass[*cronjobv1.CronJob]) bool { return !ptr.Deref(req.Object.Spec.Suspend, false) }, steps.RunNextScheduledJob()),
	)}}
}

// SetupWithManager registers NewReconciler's reconciler with mgr; its steps
// set up the watch of the Jobs CronJobs own and the index their state reads.
// The manager's scheme must hold the types of AddToScheme.
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	return bosun.ControllerManagedBy[*cronjobv1.CronJob](mgr).Complete(NewReconciler(opts))
}

// actions implements the actions for one reconcile of req.Object.
type actions struct {
	req   *bosun.Pass[*cronjobv1.CronJob]
	clock clock.PassiveClock
}

// ListActiveJobsAndUpdateStatus records in the status the unfinished Jobs,
// the latest scheduled time and the latest successful completion; the times
// never move back.
func (a *actions) ListActiveJobsAndUpdateStatus(_ context.Context, _ logr.Logger, jobs []batchv1.Job) (ctrl.Result, error) {
	st := &a.req.Object.Status
	st.Active = refs(jobsIn(jobs, running))
	for _, j := range jobs {
		st.LastScheduleTime = later(st.LastScheduleTime, scheduledAt(&j))
		if finished(&j) == batchv1.JobComplete {
			st.LastSuccessfulTime = later(st.LastSuccessfulTime, ptr.Deref(j.Status.CompletionTime, metav1.Time{}).Time)
		}
	}
	return ctrl.Result{}, nil
}

// CleanUpOldJobsExceedsHistoryLimits deletes the oldest finished Jobs beyond
// the history limits, with their Pods.
func (a *actions) CleanUpOldJobsExceedsHistoryLimits(ctx context.Context, log logr.Logger, jobs []batchv1.Job) (ctrl.Result, error) {
	spec := a.req.Object.Spec
	var errs []error
	for _, j := range slices.Concat(
		beyond(jobsIn(jobs, batchv1.JobComplete), ptr.Deref(spec.SuccessfulJobsHistoryLimit, cronjobv1.DefaultSuccessfulJobsHistoryLimit)),
		beyond(jobsIn(jobs, batchv1.JobFailed), ptr.Deref(spec.FailedJobsHistoryLimit, cronjobv1.DefaultFailedJobsHistoryLimit))) {
		errs = append(errs, a.deleteJob(ctx, log, &j, "old"))
	}
	return ctrl.Result{}, errors.Join(errs...)
}

// RunNextScheduledJob starts the latest missed run, as the concurrency
// policy allows, and asks to be requeued at the next scheduled time. The
// Jobs it goes by are read from the API server: the cache may not show yet
// a Job started moments ago, and taking its word would start a run twice.
// A Job that holds the run's name and is not this CronJob's is never taken
// for the run.
func (a *actions) RunNextScheduledJob(ctx context.Context, log logr.Logger) (ctrl.Result, error) {
	cj, st, now := a.req.Object, &a.req.Object.Status, a.clock.Now()
	runs, err := ScheduledRuns(cj.Spec.Schedule, ptr.Deref(st.LastScheduleTime, cj.CreationTimestamp).Time, now, cj.Spec.StartingDeadlineSeconds)
	res := ctrl.Result{RequeueAfter: runs.Wait}
	if err != nil || runs.Missed.IsZero() {
		return res, err
	}
	var list batchv1.JobList
	if err := a.req.APIReader.List(ctx, &list, client.InNamespace(cj.Namespace), client.MatchingLabels{LabelCronJob: cj.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the jobs of %s: %w", cj.Name, err)
	}
	live := slices.DeleteFunc(list.Items, func(j batchv1.Job) bool { return !metav1.IsControlledBy(&j, cj) })
	active := jobsIn(live, running)
	defer func() { st.Active = refs(active) }()
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: cj.Namespace, Name: fmt.Sprintf("%s-%d", cj.Name, runs.Missed.Unix()),
			Labels:          labels.Merge(cj.Spec.JobTemplate.Labels, labels.Set{LabelCronJob: cj.Name}),
			Annotations:     labels.Merge(cj.Spec.JobTemplate.Annotations, labels.Set{ScheduledAtAnnotation: runs.Missed.UTC().Format(time.RFC3339)}),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cj, cronjobv1.GroupVersion.WithKind("CronJob"))},
		},
		Spec: *cj.Spec.JobTemplate.Spec.DeepCopy(),
	}
	switch policy := cj.Spec.ConcurrencyPolicy; {
	case slices.ContainsFunc(live, func(j batchv1.Job) bool { return j.Name == job.Name }):
		// An earlier pass started the run and did not get to record it.
		st.LastScheduleTime = later(st.LastScheduleTime, runs.Missed)
		return res, nil
	case len(active) > 0 && policy == cronjobv1.ForbidConcurrent:
		log.V(1).Info("run postponed while jobs are active", "scheduledAt", runs.Missed, "active", len(active))
		return res, nil
	case policy == cronjobv1.ReplaceConcurrent:
		for _, j := range active {
			if err := a.deleteJob(ctx, log, &j, "replaced"); err != nil {
				return ctrl.Result{}, err
			}
		}
		active = nil
	}
	if err := a.req.Client.Create(ctx, job); apierrors.IsAlreadyExists(err) {
		return ctrl.Result{}, conditions.Warningf(ReasonJobNameTaken,
			"the run scheduled at %s is not started: job %s exists and is not one of this CronJob's Jobs; delete or rename it to let the run start",
			job.Annotations[ScheduledAtAnnotation], job.Name)
	} else if err != nil {
		return ctrl.Result{}, fmt.Errorf("create job %s: %w", job.Name, err)
	}
	log.Info("created job", "job", job.Name, "scheduledAt", runs.Missed)
	a.req.Recorder.Eventf(cj, job, corev1.EventTypeNormal, "SuccessfulCreate", "Create", "created job %s", job.Name)
	// The run is active from now on, not only once the Job's watch event
	// reaches the cache.
	active = append(active, *job)
	st.LastScheduleTime = later(st.LastScheduleTime, runs.Missed)
	return res, nil
}

// deleteJob deletes j, if it is still there, and its Pods in the
// background, and logs why.
func (a *actions) deleteJob(ctx context.Context, log logr.Logger, j *batchv1.Job, why string) error {
	err := a.req.Client.Delete(ctx, j, client.Preconditions{UID: &j.UID}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete job %s: %w", j.Name, err)
	}
	log.Info("deleted job", "job", j.Name, "why", why)
	return nil
}

// running stands for the state of a Job that has not finished.
const running batchv1.JobConditionType = ""

// finished returns JobComplete or JobFailed, whichever condition of j is
// True, or running.
func finished(j *batchv1.Job) batchv1.JobConditionType {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.Type
		}
	}
	return running
}

// jobsIn returns the jobs whose state (see finished) is state.
func jobsIn(jobs []batchv1.Job, state batchv1.JobConditionType) []batchv1.Job {
	return slices.DeleteFunc(slices.Clone(jobs), func(j batchv1.Job) bool { return finished(&j) != state })
}

// refs returns the status.active entries of jobs, sorted by name.
func refs(jobs []batchv1.Job) (out []corev1.ObjectReference) {
	for _, j := range jobs {
		out = append(out, corev1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Namespace: j.Namespace, Name: j.Name, UID: j.UID})
	}
	slices.SortFunc(out, func(x, y corev1.ObjectReference) int { return cmp.Compare(x.Name, y.Name) })
	return out
}

// scheduledAt returns the scheduled time of j from its annotation; zero
// when the annotation is missing or malformed.
func scheduledAt(j *batchv1.Job) time.Time {
	t, _ := time.Parse(time.RFC3339, j.Annotations[ScheduledAtAnnotation])
	return t
}

// beyond returns the oldest of jobs, by scheduled time, past the newest keep
// of them.
func beyond(jobs []batchv1.Job, keep int32) []batchv1.Job {
	slices.SortFunc(jobs, func(x, y batchv1.Job) int { return scheduledAt(&x).Compare(scheduledAt(&y)) })
	return jobs[:max(len(jobs)-int(keep), 0)]
}

// later returns t as a metav1.Time when it is after cur, and cur otherwise.
func later(cur *metav1.Time, t time.Time) *metav1.Time {
	if t.IsZero() || cur != nil && !t.After(cur.Time) {
		return cur
	}
	return &metav1.Time{Time: t.UTC()}
}

// Runs is what a schedule asks for at one moment.
type Runs struct {
	// Missed is the latest scheduled time that is due and has not run yet;
	// zero when there is none.
	Missed time.Time
	// Next is the first scheduled time after now; zero when the schedule
	// never fires again.
	Next time.Time
	// Wait is how long from now until Next, at least a second; zero when
	// there is no Next.
	Wait time.Duration
}

// ScheduledRuns works out the runs of a cron schedule at time now, when the
// last run was scheduled at since (or the CronJob was created then). The
// schedule has five fields, or is a descriptor such as "@hourly" or "@every
// 1h30m", optionally after "CRON_TZ=<zone> "; one that does not parse gives
// a terminal error with ReasonInvalidSchedule. A run is missed when its time
// is after since and not after now; only the latest missed run is reported,
// because a CronJob catches up with one Job, not one per missed time. With a
// startingDeadline (in seconds), times earlier than now minus the deadline
// are too late and not considered at all; a time exactly that late is still
// in time. More than MaxMissedRuns missed runs give a terminal error with
// ReasonTooManyMissedRuns.
func ScheduledRuns(schedule string, since, now time.Time, startingDeadline *int64) (Runs, error) {
	sched, err := cron.ParseStandard(schedule)
	if err != nil {
		return Runs{}, conditions.Terminalf(ReasonInvalidSchedule, "invalid schedule %q: %w", schedule, err)
	}
	earliest := since
	if startingDeadline != nil {
		// Just before the deadline, so that a run exactly at it is in time.
		if d := now.Add(-time.Duration(*startingDeadline)*time.Second - time.Nanosecond); d.After(earliest) {
			earliest = d
		}
	}
	var runs Runs
	for t, missed := sched.Next(earliest), 1; !t.IsZero() && !t.After(now); t, missed = sched.Next(t), missed+1 {
		if missed > MaxMissedRuns {
			return Runs{}, conditions.Terminalf(ReasonTooManyMissedRuns, "too many missed runs: more than %d since %s; set startingDeadlineSeconds to skip old runs",
				MaxMissedRuns, since.UTC().Format(time.RFC3339))
		}
		runs.Missed = t
	}
	if runs.Next = sched.Next(now); !runs.Next.IsZero() {
		runs.Wait = max(runs.Next.Sub(now), time.Second)
	}
	return runs, nil
}
