package cronjob

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
	"github.com/bosunkit/bosun/flow"
)

// What the actions write, beyond what the generated markers let the states
// read; and what the engine needs (see package bosun): namespaces for the
// reconcile policy, and events.
//
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=create;delete
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

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
)

// Options configures the CronJob reconciler.
type Options struct {
	// Clock tells the time the schedule is checked against. Nil means the
	// real clock.
	Clock clock.PassiveClock
}

// NewReconciler returns the engine reconciler for CronJobs, named
// ControllerName and running Workflow. Its clients and recorder are filled
// in by SetupWithManager, or by the caller.
func NewReconciler(opts Options) *bosun.Reconciler[*cronjobv1.CronJob] {
	return &bosun.Reconciler[*cronjobv1.CronJob]{
		Name: ControllerName,
		Steps: []bosun.Step[*cronjobv1.CronJob]{bosun.NewStep("cronjob", func(ctx context.Context, req *bosun.Pass[*cronjobv1.CronJob]) (ctrl.Result, error) {
			return flow.Run(ctx, Workflow(req, opts.Clock))
		})},
	}
}

// SetupWithManager registers NewReconciler's reconciler with mgr, with the
// field index its Job state selects by and a watch of the Jobs CronJobs own.
// The manager's scheme must hold the types of AddToScheme.
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	if err := IndexCronJobControllerManagerFields(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return fmt.Errorf("cronjob: %w", err)
	}
	b := bosun.ControllerManagedBy[*cronjobv1.CronJob](mgr)
	if err := WatchCronJobControllerManagerStates(b).Complete(NewReconciler(opts)); err != nil {
		return fmt.Errorf("cronjob: %w", err)
	}
	return nil
}

// Workflow returns the actions of one reconcile of req.Object: the three
// actions that look at Jobs and start them, joined, and then, whatever they
// returned, UpdateCronJobStatus, which writes what they found into the
// status. RunNextScheduledJob is left out while the CronJob is suspended.
// An action may end the joined three early with flow.Exit without it
// counting as an error. The engine saves the status afterwards. A nil
// clk means the real clock.
func Workflow(req *bosun.Pass[*cronjobv1.CronJob], clk clock.PassiveClock) flow.Action {
	if clk == nil {
		clk = clock.RealClock{}
	}
	a := &actions{req: req, clock: clk}
	m := NewCronJobControllerManagerForPass(req, a)
	a.state = m.State()
	suspended := req.Object.Spec.Suspend != nil && *req.Object.Spec.Suspend
	joined := flow.Join(
		m.ListActiveJobsAndUpdateStatus(),
		m.CleanUpOldJobsExceedsHistoryLimits(),
		flow.If(!suspended, m.RunNextScheduledJob()),
	)
	return flow.OrderedJoin(
		flow.New(joined.Description(), func(ctx context.Context) (ctrl.Result, error) {
			return flow.IgnoreExit(joined.Run(ctx))
		}),
		m.UpdateCronJobStatus(),
	)
}

// actions implements the actions for one reconcile. The first three only
// record what they find, under mu, so they may run in any order or at once;
// UpdateCronJobStatus alone writes the status.
type actions struct {
	req   *bosun.Pass[*cronjobv1.CronJob]
	state *CronJobControllerManagerState
	clock clock.PassiveClock

	mu        sync.Mutex
	listed    bool                     // active is known
	active    []corev1.ObjectReference // unfinished Jobs
	scheduled time.Time                // latest scheduled time of a Job
	succeeded time.Time                // latest completion of a successful Job
}

var _ CronJobControllerManagerImpl = &actions{}

// ListActiveJobsAndUpdateStatus records the unfinished Jobs, the latest
// scheduled time and the latest successful completion.
func (a *actions) ListActiveJobsAndUpdateStatus(_ context.Context, _ logr.Logger, jobs []batchv1.Job) (ctrl.Result, error) {
	running, ok, _ := sortOut(jobs)
	var active []corev1.ObjectReference
	for _, j := range running {
		active = append(active, corev1.ObjectReference{
			APIVersion: "batch/v1", Kind: "Job", Namespace: j.Namespace, Name: j.Name, UID: j.UID,
		})
	}
	var scheduled, succeeded time.Time
	for i := range jobs {
		scheduled = latest(scheduled, scheduledAt(&jobs[i]))
	}
	for _, j := range ok {
		if j.Status.CompletionTime != nil {
			succeeded = latest(succeeded, j.Status.CompletionTime.Time)
		}
	}
	slices.SortFunc(active, func(x, y corev1.ObjectReference) int { return cmp.Compare(x.Name, y.Name) })
	a.mu.Lock()
	defer a.mu.Unlock()
	a.listed, a.active = true, active
	a.scheduled = latest(a.scheduled, scheduled)
	a.succeeded = latest(a.succeeded, succeeded)
	return flow.Continue()
}

// CleanUpOldJobsExceedsHistoryLimits deletes the oldest finished Jobs beyond
// the history limits, with their Pods.
func (a *actions) CleanUpOldJobsExceedsHistoryLimits(ctx context.Context, log logr.Logger, jobs []batchv1.Job) (ctrl.Result, error) {
	_, ok, failed := sortOut(jobs)
	spec := a.req.Object.Spec
	old := slices.Concat(beyond(ok, spec.SuccessfulJobsHistoryLimit, cronjobv1.DefaultSuccessfulJobsHistoryLimit),
		beyond(failed, spec.FailedJobsHistoryLimit, cronjobv1.DefaultFailedJobsHistoryLimit))
	var errs []error
	for _, j := range old {
		if err := a.deleteJob(ctx, j); err != nil {
			errs = append(errs, err)
			continue
		}
		log.V(1).Info("deleted old job", "job", j.Name)
	}
	return flow.RequeueIfError(errors.Join(errs...))
}

// RunNextScheduledJob starts the latest missed run, as the concurrency
// policy allows, and asks to be requeued at the next scheduled time.
func (a *actions) RunNextScheduledJob(ctx context.Context, log logr.Logger) (ctrl.Result, error) {
	cj := a.req.Object
	sched, err := ParseSchedule(cj.Spec.Schedule)
	if err != nil {
		return ctrl.Result{}, conditions.Terminal(ReasonInvalidSchedule, err)
	}
	since := cj.CreationTimestamp.Time
	if cj.Status.LastScheduleTime != nil {
		since = cj.Status.LastScheduleTime.Time
	}
	now := a.clock.Now()
	runs, err := ScheduledRuns(sched, since, now, cj.Spec.StartingDeadlineSeconds)
	if err != nil {
		return ctrl.Result{}, conditions.Terminal(ReasonTooManyMissedRuns, err)
	}
	var res ctrl.Result
	if !runs.Next.IsZero() {
		res.RequeueAfter = max(runs.Next.Sub(now), time.Second)
	}
	if runs.Missed.IsZero() {
		return res, nil
	}
	jobs, err := a.state.GetJobs(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	active, _, _ := sortOut(jobs)
	policy := cj.Spec.ConcurrencyPolicy
	if policy == cronjobv1.ReplaceConcurrent || policy == cronjobv1.ForbidConcurrent && len(active) == 0 {
		// The cache may not show yet a Job this CronJob started moments
		// ago; taking its word would start a second run next to it. The
		// Jobs are read from the API server, once per run started.
		live, err := a.liveJobs(ctx)
		if err != nil {
			return ctrl.Result{}, err
		}
		active, _, _ = sortOut(live)
		// What the API server says is running is what the status
		// reports, even when the cache has not seen it yet.
		a.observeActive(active...)
	}
	job := a.newJob(runs.Missed)
	switch {
	case len(active) > 0 && policy == cronjobv1.ForbidConcurrent:
		log.V(1).Info("run postponed while jobs are active", "scheduledAt", runs.Missed, "active", len(active))
		return res, nil
	case policy == cronjobv1.ReplaceConcurrent:
		for _, j := range active {
			if j.Name == job.Name {
				// The run's own Job, made by an earlier pass that did not
				// get to record the run: it is what this run starts.
				continue
			}
			if err := a.deleteJob(ctx, j); err != nil {
				return ctrl.Result{}, err
			}
			log.Info("replaced active job", "job", j.Name)
		}
	}
	switch err := a.req.Client.Create(ctx, job); {
	case apierrors.IsAlreadyExists(err):
		if err := a.checkRunJob(ctx, job); err != nil {
			return ctrl.Result{}, err
		}
		log.V(1).Info("job exists already", "job", job.Name)
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("create job %s: %w", job.Name, err)
	default:
		log.Info("created job", "job", job.Name, "scheduledAt", runs.Missed)
		// The run is active from now on: the status says so in this pass,
		// not only once the Job's watch event reaches the cache.
		a.observeActive(job)
		a.req.Recorder.Eventf(cj, job, corev1.EventTypeNormal, "SuccessfulCreate", "Create", "created job %s", job.Name)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.scheduled = latest(a.scheduled, runs.Missed)
	return res, nil
}

// observeActive adds jobs, known to be running, to the active Jobs the
// status reports.
func (a *actions) observeActive(jobs ...*batchv1.Job) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, j := range jobs {
		if slices.ContainsFunc(a.active, func(r corev1.ObjectReference) bool { return r.Name == j.Name }) {
			continue
		}
		a.active = append(a.active, corev1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Namespace: j.Namespace, Name: j.Name, UID: j.UID})
		a.listed = true
	}
	slices.SortFunc(a.active, func(x, y corev1.ObjectReference) int { return cmp.Compare(x.Name, y.Name) })
}

// UpdateCronJobStatus writes what the other actions found into the status;
// scheduled and successful times only move forward.
func (a *actions) UpdateCronJobStatus(context.Context, logr.Logger) (ctrl.Result, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := &a.req.Object.Status
	if a.listed {
		st.Active = a.active
	}
	st.LastScheduleTime = later(st.LastScheduleTime, a.scheduled)
	st.LastSuccessfulTime = later(st.LastSuccessfulTime, a.succeeded)
	return flow.Continue()
}

// liveJobs reads the Jobs of the CronJob from the API server: those
// labelled with its name that it controls.
func (a *actions) liveJobs(ctx context.Context) ([]batchv1.Job, error) {
	cj := a.req.Object
	var list batchv1.JobList
	if err := a.req.APIReader.List(ctx, &list, client.InNamespace(cj.Namespace), client.MatchingLabels{LabelCronJob: cj.Name}); err != nil {
		return nil, fmt.Errorf("listing the jobs of %s: %w", cj.Name, err)
	}
	return slices.DeleteFunc(list.Items, func(j batchv1.Job) bool { return !metav1.IsControlledBy(&j, cj) }), nil
}

// checkRunJob looks at the Job that holds the name of job, a run's Job
// whose create found the name taken. It is the run when this CronJob
// controls it (an earlier pass created it and the cache has not shown it
// yet). Any other Job is not the run: the run does not count as started,
// and the error, with ReasonJobNameTaken, says which Job is in the way.
// The Job is read from the API server, since the cache may not hold it.
func (a *actions) checkRunJob(ctx context.Context, job *batchv1.Job) error {
	cj := a.req.Object
	live := &batchv1.Job{}
	if err := a.req.APIReader.Get(ctx, client.ObjectKeyFromObject(job), live); err != nil {
		if apierrors.IsNotFound(err) {
			// Gone between the create and the read: the next pass
			// creates it.
			return fmt.Errorf("job %s was in the way and is gone: %w", job.Name, err)
		}
		return fmt.Errorf("reading job %s: %w", job.Name, err)
	}
	if metav1.IsControlledBy(live, cj) {
		return nil
	}
	owner := "no controller"
	if ref := metav1.GetControllerOf(live); ref != nil {
		owner = fmt.Sprintf("controller %s %s", ref.Kind, ref.Name)
	}
	return conditions.Warningf(ReasonJobNameTaken,
		"the run scheduled at %s is not started: job %s exists and is not controlled by this CronJob (it has %s); delete or rename it to let the run start",
		job.Annotations[ScheduledAtAnnotation], job.Name, owner)
}

// newJob returns the Job of the run scheduled at t.
func (a *actions) newJob(t time.Time) *batchv1.Job {
	cj := a.req.Object
	tmpl := cj.Spec.JobTemplate.DeepCopy()
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       cj.Namespace,
			Name:            fmt.Sprintf("%s-%d", cj.Name, t.Unix()),
			Labels:          with(tmpl.Labels, LabelCronJob, cj.Name),
			Annotations:     with(tmpl.Annotations, ScheduledAtAnnotation, t.UTC().Format(time.RFC3339)),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cj, cronjobv1.GroupVersion.WithKind("CronJob"))},
		},
		Spec: tmpl.Spec,
	}
}

// with returns a copy of m with key set to value.
func with(m map[string]string, key, value string) map[string]string {
	m = maps.Clone(m)
	if m == nil {
		m = map[string]string{}
	}
	m[key] = value
	return m
}

// deleteJob deletes j and, in the background, its Pods; a Job already gone
// is fine.
func (a *actions) deleteJob(ctx context.Context, j *batchv1.Job) error {
	err := a.req.Client.Delete(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: j.Namespace, Name: j.Name}},
		client.Preconditions{UID: &j.UID}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete job %s: %w", j.Name, err)
	}
	return nil
}

// sortOut splits jobs into the running, the successful and the failed: a
// Job has finished when its Complete or Failed condition is True.
func sortOut(jobs []batchv1.Job) (running, ok, failed []*batchv1.Job) {
	for i := range jobs {
		j := &jobs[i]
		switch {
		case hasCondition(j, batchv1.JobComplete):
			ok = append(ok, j)
		case hasCondition(j, batchv1.JobFailed):
			failed = append(failed, j)
		default:
			running = append(running, j)
		}
	}
	return running, ok, failed
}

// hasCondition reports whether j has the condition typ True.
func hasCondition(j *batchv1.Job, typ batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// scheduledAt returns the scheduled time of j from its annotation, or its
// creation time when the annotation is missing or malformed.
func scheduledAt(j *batchv1.Job) time.Time {
	if t, err := time.Parse(time.RFC3339, j.Annotations[ScheduledAtAnnotation]); err == nil {
		return t
	}
	return j.CreationTimestamp.Time
}

// beyond returns the oldest of jobs, by scheduled time, past the newest
// limit of them (def when limit is nil).
func beyond(jobs []*batchv1.Job, limit *int32, def int32) []*batchv1.Job {
	keep := int(def)
	if limit != nil {
		keep = int(*limit)
	}
	if len(jobs) <= keep {
		return nil
	}
	slices.SortFunc(jobs, func(x, y *batchv1.Job) int { return scheduledAt(x).Compare(scheduledAt(y)) })
	return jobs[:len(jobs)-keep]
}

// latest returns the later of two times.
func latest(x, y time.Time) time.Time {
	if y.After(x) {
		return y
	}
	return x
}

// later returns t as a metav1.Time when it is after cur, and cur otherwise.
func later(cur *metav1.Time, t time.Time) *metav1.Time {
	if t.IsZero() || cur != nil && !t.After(cur.Time) {
		return cur
	}
	return &metav1.Time{Time: t.UTC()}
}
