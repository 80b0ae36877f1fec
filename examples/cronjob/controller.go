package cronjob

import (
	"cmp"
	"context"
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
	ReasonInvalidSchedule conditions.Reason = "InvalidSchedule"
	// ReasonTooManyMissedRuns is the reason of Ready=False when more than
	// MaxMissedRuns runs were missed.
	ReasonTooManyMissedRuns conditions.Reason = "TooManyMissedRuns"
	// ReasonJobNameTaken is the reason of Ready=False when the name of the
	// Job of a due run is held by a Job this CronJob does not control (the
	// reason bosun.Pass.CreateChild gives a Job whose name is taken): the
	// run is not started, nor counted as started, until that Job is gone.
	ReasonJobNameTaken conditions.Reason = "JobNameTaken"
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
}

// NewReconciler returns the engine reconciler for CronJobs, named
// ControllerName. Its one step joins the three actions, so each runs
// whatever the others return; RunNextScheduledJob is left out while the
// CronJob is suspended. The actions write what they find into the status,
// which the engine saves. Its clients and recorder are filled in by
// SetupWithManager, or by the caller.
func NewReconciler(opts Options) *bosun.Reconciler[*cronjobv1.CronJob] {
	steps := NewCronJobControllerManagerSteps(func(req *bosun.Pass[*cronjobv1.CronJob], _ *CronJobControllerManagerState) CronJobControllerManagerImpl {
		return &actions{req, cmp.Or[clock.PassiveClock](opts.Clock, clock.RealClock{})}
	})
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

// actions implements the actions for one reconcile of the pass's object.
type actions struct {
	*bosun.Pass[*cronjobv1.CronJob]
	clock clock.PassiveClock
}

// ListActiveJobsAndUpdateStatus records in the status the unfinished Jobs,
// oldest first, the latest scheduled time and the latest successful
// completion; the times never move back.
func (a *actions) ListActiveJobsAndUpdateStatus(_ context.Context, _ logr.Logger, jobs []batchv1.Job) (ctrl.Result, error) {
	st := &a.Object.Status
	st.Active = nil
	for _, j := range jobsIn(jobs, running) {
		st.Active = append(st.Active, corev1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Namespace: j.Namespace, Name: j.Name, UID: j.UID})
	}
	for _, j := range jobs {
		if t, _ := time.Parse(time.RFC3339, j.Annotations[ScheduledAtAnnotation]); t.After(ptr.Deref(st.LastScheduleTime, metav1.Time{}).Time) {
			st.LastScheduleTime = &metav1.Time{Time: t}
		}
		// A Job has a completion time once it succeeded, and only then.
		if t := ptr.Deref(j.Status.CompletionTime, metav1.Time{}); t.After(ptr.Deref(st.LastSuccessfulTime, metav1.Time{}).Time) {
			st.LastSuccessfulTime = &t
		}
	}
	return ctrl.Result{}, nil
}

// CleanUpOldJobsExceedsHistoryLimits deletes the oldest finished Jobs beyond
// the history limits, with their Pods.
func (a *actions) CleanUpOldJobsExceedsHistoryLimits(ctx context.Context, log logr.Logger, jobs []batchv1.Job) (ctrl.Result, error) {
	return ctrl.Result{}, a.deleteJobs(ctx, log, "old", slices.Concat(
		beyond(jobsIn(jobs, batchv1.JobComplete), ptr.Deref(a.Object.Spec.SuccessfulJobsHistoryLimit, cronjobv1.DefaultSuccessfulJobsHistoryLimit)),
		beyond(jobsIn(jobs, batchv1.JobFailed), ptr.Deref(a.Object.Spec.FailedJobsHistoryLimit, cronjobv1.DefaultFailedJobsHistoryLimit))))
}

// RunNextScheduledJob starts the latest missed run, as the concurrency
// policy allows, and asks to be requeued at the next scheduled time. The
// Jobs it goes by are read from the API server: the cache may not show yet
// a Job started moments ago, and taking its word would start a run twice.
// They make the status, with what the action does to them. A Job that
// holds the run's name and is not this CronJob's is never taken for the
// run: CreateChild reports it with ReasonJobNameTaken.
func (a *actions) RunNextScheduledJob(ctx context.Context, log logr.Logger) (ctrl.Result, error) {
	cj := a.Object
	runs, err := ScheduledRuns(cj.Spec.Schedule, ptr.Deref(cj.Status.LastScheduleTime, cj.CreationTimestamp).Time, a.clock.Now(), cj.Spec.StartingDeadlineSeconds)
	res := ctrl.Result{RequeueAfter: runs.Wait}
	if err != nil || runs.Missed.IsZero() {
		return res, err
	}
	var live batchv1.JobList
	if err := a.ListChildren(ctx, a.APIReader, &live, client.MatchingLabels{LabelCronJob: cj.Name}); err != nil {
		return res, err
	}
	defer func() { _, _ = a.ListActiveJobsAndUpdateStatus(ctx, log, live.Items) }()
	job := &batchv1.Job{Spec: *cj.Spec.JobTemplate.Spec.DeepCopy(), ObjectMeta: metav1.ObjectMeta{
		Name:        fmt.Sprintf("%s-%d", cj.Name, runs.Missed.Unix()),
		Labels:      labels.Merge(cj.Spec.JobTemplate.Labels, labels.Set{LabelCronJob: cj.Name}),
		Annotations: labels.Merge(cj.Spec.JobTemplate.Annotations, labels.Set{ScheduledAtAnnotation: runs.Missed.UTC().Format(time.RFC3339)}),
	}}
	switch active := jobsIn(live.Items, running); {
	case slices.ContainsFunc(live.Items, func(j batchv1.Job) bool { return j.Name == job.Name }),
		len(active) > 0 && cj.Spec.ConcurrencyPolicy == cronjobv1.ForbidConcurrent:
		// The run has a Job already (an earlier pass started it and did not
		// get to record it, which the status does now), or it waits for the
		// active Jobs to finish.
		return res, nil
	case cj.Spec.ConcurrencyPolicy == cronjobv1.ReplaceConcurrent:
		if err := a.deleteJobs(ctx, log, "replaced", active); err != nil {
			return res, err
		}
		live.Items = slices.DeleteFunc(live.Items, func(j batchv1.Job) bool { return finished(&j) == running })
	}
	// A CronJob the API server no longer has starts no run, though the
	// cache still shows it: the garbage collector deletes its Jobs, so the
	// list above misses the run's Job, and the run would start once more
	// for a CronJob that is gone. It costs a read per run started.
	current := &cronjobv1.CronJob{}
	if err := a.APIReader.Get(ctx, client.ObjectKeyFromObject(cj), current); err != nil || current.UID != cj.UID || !current.DeletionTimestamp.IsZero() {
		if err == nil || apierrors.IsNotFound(err) {
			log.Info("not starting the run of a CronJob that is gone or going", "run", job.Name)
			return ctrl.Result{}, nil
		}
		return res, fmt.Errorf("reading the CronJob before starting a run: %w", err)
	}
	if err := a.CreateChild(ctx, job); err != nil {
		return res, err
	}
	// The run is active from now on, not only once the Job's watch event
	// reaches the cache.
	live.Items = append(live.Items, *job)
	return res, nil
}

// deleteJobs deletes jobs, those still there, with their Pods in the
// background, and logs why. It stops at the first that fails: the next pass
// tries again.
func (a *actions) deleteJobs(ctx context.Context, log logr.Logger, why string, jobs []batchv1.Job) error {
	for _, j := range jobs {
		log.Info("deleting job", "job", j.Name, "why", why)
		if err := a.Client.Delete(ctx, &j, client.Preconditions{UID: &j.UID}, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete job %s: %w", j.Name, err)
		}
	}
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

// jobsIn returns the jobs whose state (see finished) is state, oldest
// first: a Job's name ends in the Unix time of its run (ten digits from
// 2001 to 2286), so the order of the names is the order of the runs.
func jobsIn(jobs []batchv1.Job, state batchv1.JobConditionType) []batchv1.Job {
	sorted := slices.SortedFunc(slices.Values(jobs), func(x, y batchv1.Job) int { return cmp.Compare(x.Name, y.Name) })
	return slices.DeleteFunc(sorted, func(j batchv1.Job) bool { return finished(&j) != state })
}

// beyond returns the oldest of jobs, which are sorted oldest first, past
// the newest keep of them.
func beyond(jobs []batchv1.Job, keep int32) []batchv1.Job { return jobs[:max(len(jobs)-int(keep), 0)] }

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
func ScheduledRuns(schedule string, since, now time.Time, startingDeadline *int64) (runs Runs, err error) {
	sched, err := cron.ParseStandard(schedule)
	if err != nil {
		return Runs{}, conditions.Terminalf(ReasonInvalidSchedule, "invalid schedule %q: %w", schedule, err)
	}
	earliest := since
	if startingDeadline != nil {
		// Just before the deadline, so that a run exactly at it is in time.
		earliest = slices.MaxFunc([]time.Time{since, now.Add(-time.Duration(*startingDeadline)*time.Second - time.Nanosecond)}, time.Time.Compare)
	}
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
