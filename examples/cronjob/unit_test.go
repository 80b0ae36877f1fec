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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/unit"
	"github.com/bosunkit/bosun/conditions"
	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
)

// at returns 2030-01-01 at hh:mm UTC.
func at(hh, mm int) time.Time { return time.Date(2030, 1, 1, hh, mm, 0, 0, time.UTC) }

func TestScheduledRuns(t *testing.T) {
	const hourly, minutely = "CRON_TZ=UTC 0 * * * *", "CRON_TZ=UTC * * * * *"
	tests := []struct {
		name       string
		schedule   string
		since      time.Time
		now        time.Time
		deadline   *int64
		want       Runs
		wantReason conditions.Reason
	}{
		{name: "nothing due yet", schedule: hourly, since: at(10, 0), now: at(10, 30),
			want: Runs{Next: at(11, 0), Wait: 30 * time.Minute}},
		{name: "due exactly now", schedule: hourly, since: at(10, 0), now: at(11, 0),
			want: Runs{Missed: at(11, 0), Next: at(12, 0), Wait: time.Hour}},
		{name: "since is not a run again", schedule: hourly, since: at(11, 0), now: at(11, 0),
			want: Runs{Next: at(12, 0), Wait: time.Hour}},
		{name: "latest of several missed", schedule: hourly, since: at(10, 0), now: at(13, 20),
			want: Runs{Missed: at(13, 0), Next: at(14, 0), Wait: 40 * time.Minute}},
		{name: "within the deadline", schedule: hourly, since: at(10, 0), now: at(13, 20), deadline: ptr.To[int64](30 * 60),
			want: Runs{Missed: at(13, 0), Next: at(14, 0), Wait: 40 * time.Minute}},
		{name: "deadline exactly reached", schedule: hourly, since: at(10, 0), now: at(13, 20), deadline: ptr.To[int64](20 * 60),
			want: Runs{Missed: at(13, 0), Next: at(14, 0), Wait: 40 * time.Minute}},
		{name: "too late", schedule: hourly, since: at(10, 0), now: at(13, 20), deadline: ptr.To[int64](10 * 60),
			want: Runs{Next: at(14, 0), Wait: 40 * time.Minute}},
		{name: "zero deadline", schedule: hourly, since: at(10, 0), now: at(13, 0), deadline: ptr.To[int64](0),
			want: Runs{Missed: at(13, 0), Next: at(14, 0), Wait: time.Hour}},
		{name: "since in the future", schedule: hourly, since: at(15, 0), now: at(13, 20),
			want: Runs{Next: at(14, 0), Wait: 40 * time.Minute}},
		{name: "exactly the most missed runs", schedule: minutely, since: at(10, 0), now: at(11, 40),
			want: Runs{Missed: at(11, 40), Next: at(11, 41), Wait: time.Minute}},
		{name: "too many missed runs", schedule: minutely, since: at(10, 0), now: at(11, 41),
			wantReason: ReasonTooManyMissedRuns},
		{name: "deadline bounds the missed runs", schedule: minutely, since: at(10, 0), now: at(12, 0), deadline: ptr.To[int64](3600),
			want: Runs{Missed: at(12, 0), Next: at(12, 1), Wait: time.Minute}},
		{name: "never fires", schedule: "CRON_TZ=UTC 0 0 30 2 *", since: at(10, 0), now: at(12, 0),
			want: Runs{}},
		{name: "the next run less than a second away waits a second", schedule: minutely, since: at(10, 0), now: at(10, 1).Add(-time.Millisecond),
			want: Runs{Next: at(10, 1), Wait: time.Second}},
		{name: "descriptor: every 90 minutes from now", schedule: "@every 90m", since: at(10, 0), now: at(11, 0),
			want: Runs{Next: at(12, 30), Wait: 90 * time.Minute}},
		{name: "time zone", schedule: "CRON_TZ=Europe/Berlin 0 3 * * 1-5", since: at(1, 0), now: at(1, 30),
			want: Runs{Next: at(2, 0), Wait: 30 * time.Minute}},
		{name: "empty schedule", schedule: "", since: at(10, 0), now: at(11, 0), wantReason: ReasonInvalidSchedule},
		{name: "not a schedule", schedule: "every tuesday", since: at(10, 0), now: at(11, 0), wantReason: ReasonInvalidSchedule},
		{name: "seconds are not standard", schedule: "* * * * * *", since: at(10, 0), now: at(11, 0), wantReason: ReasonInvalidSchedule},
		{name: "minute out of range", schedule: "61 * * * *", since: at(10, 0), now: at(11, 0), wantReason: ReasonInvalidSchedule},
		{name: "unknown zone", schedule: "CRON_TZ=Nowhere/Atlantis * * * * *", since: at(10, 0), now: at(11, 0), wantReason: ReasonInvalidSchedule},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ScheduledRuns(tt.schedule, tt.since, tt.now, tt.deadline)
			reason, severity, _ := conditions.FromError(err)
			if tt.wantReason == "" && err != nil || tt.wantReason != "" && (reason != tt.wantReason || severity != conditions.SeverityError) {
				t.Fatalf("error %v (reason %q, severity %v), want reason %q and a terminal error", err, reason, severity, tt.wantReason)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ScheduledRuns (-want +got):\n%s", diff)
			}
		})
	}
}

// The unit tests below run the reconciler through the engine against an
// in-memory client, at a fake time: the CronJob "c" in namespace "ns" was
// created at 10:00, runs hourly, and it is now 11:20 unless said otherwise.

// cronJob returns the CronJob "c" with its creation time and UID set, as
// the API server would, changed by mutate.
func cronJob(mutate ...func(*cronjobv1.CronJob)) *cronjobv1.CronJob {
	cj := newCronJob("ns", "c", "CRON_TZ=UTC 0 * * * *", mutate...)
	cj.UID, cj.CreationTimestamp = "uid-c", metav1.NewTime(at(10, 0))
	return cj
}

// job returns a Job of c for the run at hh:00, controlled by c unless
// foreign, finished as finish says ("" for running), completed at hh:30
// when it succeeded.
func job(hh int, finish batchv1.JobConditionType, foreign ...bool) *batchv1.Job {
	cj := cronJob()
	name := fmt.Sprintf("c-%d", at(hh, 0).Unix())
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ns", Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{LabelCronJob: "c"},
		Annotations: map[string]string{ScheduledAtAnnotation: at(hh, 0).Format(time.RFC3339)},
	}}
	if len(foreign) == 0 || !foreign[0] {
		j.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(cj, cronjobv1.GroupVersion.WithKind("CronJob"))}
	}
	if finish != "" {
		j.Status.Conditions = []batchv1.JobCondition{{Type: finish, Status: corev1.ConditionTrue}}
	}
	if finish == batchv1.JobComplete {
		j.Status.CompletionTime = ptr.To(metav1.NewTime(at(hh, 30)))
	}
	return j
}

// ref is the status.active entry of the Job of the run at hh:00.
func ref(hh int) corev1.ObjectReference {
	name := fmt.Sprintf("c-%d", at(hh, 0).Unix())
	return corev1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}
}

// jobRef is ref for a Job this test did not give, which the in-memory
// client made: its UID is not known.
func jobRef(hh int) corev1.ObjectReference {
	r := ref(hh)
	r.UID = ""
	return r
}

// expectStatus checks the status the pass left, but for the conditions and
// observed generation the engine keeps; an Active entry without UID
// matches any UID.
func expectStatus(want cronjobv1.CronJobStatus) func(t bosuntest.TB, out *unit.Outcome[*cronjobv1.CronJob]) {
	return func(t bosuntest.TB, out *unit.Outcome[*cronjobv1.CronJob]) {
		t.Helper()
		got := out.Object.Status
		got.Conditions, got.ObservedGeneration = nil, 0
		for i := range got.Active {
			if i < len(want.Active) && want.Active[i].UID == "" {
				got.Active[i].UID = ""
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("status (-want +got):\n%s", diff)
		}
	}
}

// reconcilerAt returns a function that makes the CronJob reconciler at the
// time now.
func reconcilerAt(now time.Time) func() *bosun.Reconciler[*cronjobv1.CronJob] {
	return func() *bosun.Reconciler[*cronjobv1.CronJob] {
		return NewReconciler(Options{Clock: clocktesting.NewFakePassiveClock(now)})
	}
}

func mtime(t time.Time) *metav1.Time { return ptr.To(metav1.NewTime(t)) }

// TestReconcile covers each action, through the engine: the status the
// Jobs make, the history limits, the concurrency policies, a crash after a
// Job was made, a name taken by another Job, and bad schedules.
func TestReconcile(t *testing.T) {
	ready := metav1.Condition{Type: conditions.TypeReady, Status: metav1.ConditionTrue, Reason: string(conditions.ReasonSucceeded)}
	created11 := "Normal " + string(conditions.ReasonSuccessfulCreate) + " created job " + ref(11).Name
	unit.Run(t, unit.Scheme(t, corev1.AddToScheme, batchv1.AddToScheme, AddToScheme), reconcilerAt(at(11, 20)),
		unit.Case[*cronjobv1.CronJob]{
			Name:             "the due run starts, and is active",
			Object:           cronJob(),
			ExpectWrites:     []string{"create Job ns/" + ref(11).Name, "patch status CronJob ns/c"},
			ExpectEvents:     []string{created11},
			ExpectResult:     ctrlResult(40 * time.Minute),
			ExpectConditions: []metav1.Condition{ready},
			ExpectObjects: []client.Object{&batchv1.Job{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: ref(11).Name,
					Labels:      map[string]string{"app": "test", LabelCronJob: "c"},
					Annotations: map[string]string{ScheduledAtAnnotation: "2030-01-01T11:00:00Z"}},
			}},
			Check: expectStatus(cronjobv1.CronJobStatus{Active: []corev1.ObjectReference{jobRef(11)}, LastScheduleTime: mtime(at(11, 0))}),
		},
		unit.Case[*cronjobv1.CronJob]{
			Name: "running, succeeded and failed Jobs make the status; times only move forward",
			Object: cronJob(func(cj *cronjobv1.CronJob) {
				cj.Status.LastScheduleTime, cj.Status.LastSuccessfulTime = mtime(at(11, 0)), mtime(at(1, 0))
				cj.Status.Active = []corev1.ObjectReference{{Name: "gone"}}
			}),
			Given:        []client.Object{job(4, ""), job(1, batchv1.JobComplete), job(2, batchv1.JobComplete), job(3, batchv1.JobFailed), job(0, "")},
			ExpectWrites: []string{"patch status CronJob ns/c"},
			ExpectResult: ctrlResult(40 * time.Minute),
			Check: expectStatus(cronjobv1.CronJobStatus{
				Active:           []corev1.ObjectReference{ref(0), ref(4)},
				LastScheduleTime: mtime(at(11, 0)), LastSuccessfulTime: mtime(at(2, 30)),
			}),
		},
		unit.Case[*cronjobv1.CronJob]{
			Name:         "Jobs of other CronJobs are not this one's",
			Object:       cronJob(func(cj *cronjobv1.CronJob) { cj.Status.LastScheduleTime = mtime(at(11, 0)) }),
			Given:        []client.Object{job(4, "", true)},
			ExpectWrites: []string{"patch status CronJob ns/c"},
			Check:        expectStatus(cronjobv1.CronJobStatus{LastScheduleTime: mtime(at(11, 0))}),
			ExpectResult: ctrlResult(40 * time.Minute),
		},
		unit.Case[*cronjobv1.CronJob]{
			Name:   "the oldest finished Jobs beyond the history limits go",
			Object: cronJob(func(cj *cronjobv1.CronJob) { cj.Status.LastScheduleTime = mtime(at(11, 0)) }),
			Given: []client.Object{job(1, batchv1.JobComplete), job(2, batchv1.JobComplete), job(3, batchv1.JobComplete),
				job(4, batchv1.JobComplete), job(5, batchv1.JobFailed), job(6, batchv1.JobFailed)},
			ExpectWrites: []string{"delete Job ns/" + ref(1).Name, "delete Job ns/" + ref(5).Name, "patch status CronJob ns/c"},
			ExpectGone:   []client.Object{job(1, ""), job(5, "")},
			ExpectResult: ctrlResult(40 * time.Minute),
		},
		unit.Case[*cronjobv1.CronJob]{
			Name:         "Forbid: the due run waits for the active Job",
			Object:       cronJob(func(cj *cronjobv1.CronJob) { cj.Spec.ConcurrencyPolicy = cronjobv1.ForbidConcurrent }),
			Given:        []client.Object{job(10, "")},
			ExpectWrites: []string{"patch status CronJob ns/c"},
			ExpectResult: ctrlResult(40 * time.Minute),
			Check:        expectStatus(cronjobv1.CronJobStatus{Active: []corev1.ObjectReference{ref(10)}, LastScheduleTime: mtime(at(10, 0))}),
		},
		unit.Case[*cronjobv1.CronJob]{
			Name:         "Replace: the active Job goes, the due run starts",
			Object:       cronJob(func(cj *cronjobv1.CronJob) { cj.Spec.ConcurrencyPolicy = cronjobv1.ReplaceConcurrent }),
			Given:        []client.Object{job(10, "")},
			ExpectWrites: []string{"delete Job ns/" + ref(10).Name, "create Job ns/" + ref(11).Name, "patch status CronJob ns/c"},
			ExpectEvents: []string{created11},
			ExpectGone:   []client.Object{job(10, "")},
			ExpectResult: ctrlResult(40 * time.Minute),
			Check:        expectStatus(cronjobv1.CronJobStatus{Active: []corev1.ObjectReference{jobRef(11)}, LastScheduleTime: mtime(at(11, 0))}),
		},
		unit.Case[*cronjobv1.CronJob]{
			Name:         "Allow: the due run starts next to the active Job",
			Object:       cronJob(),
			Given:        []client.Object{job(10, "")},
			ExpectWrites: []string{"create Job ns/" + ref(11).Name, "patch status CronJob ns/c"},
			ExpectEvents: []string{created11},
			ExpectResult: ctrlResult(40 * time.Minute),
			Check:        expectStatus(cronjobv1.CronJobStatus{Active: []corev1.ObjectReference{ref(10), jobRef(11)}, LastScheduleTime: mtime(at(11, 0))}),
		},
		unit.Case[*cronjobv1.CronJob]{
			Name: "a run whose Job was made but not recorded is not started again",
			Object: cronJob(func(cj *cronjobv1.CronJob) {
				cj.Spec.ConcurrencyPolicy = cronjobv1.ReplaceConcurrent
				cj.Status.LastScheduleTime = mtime(at(10, 0))
			}),
			Given: []client.Object{job(11, "")},
			// The cache (here, the in-memory client) misses it: only the
			// API server's list sees it.
			Interceptor:  interceptor.Funcs{List: hideJobsFromCache},
			ExpectWrites: []string{"patch status CronJob ns/c"},
			ExpectResult: ctrlResult(40 * time.Minute),
			Check:        expectStatus(cronjobv1.CronJobStatus{Active: []corev1.ObjectReference{ref(11)}, LastScheduleTime: mtime(at(11, 0))}),
		},
		unit.Case[*cronjobv1.CronJob]{
			Name:   "a CronJob deleted since the pass loaded it starts no run",
			Object: cronJob(),
			// The garbage collector has taken its Jobs; the cache still
			// shows the CronJob.
			Interceptor:    (&deletedOnServer{}).funcs(),
			ExpectWrites:   []string{"patch status CronJob ns/c"},
			ExpectNoEvents: true,
			ExpectResult:   ctrl.Result{},
		},
		unit.Case[*cronjobv1.CronJob]{
			Name:             "a Job of another owner under the run's name: the run does not start",
			Object:           cronJob(),
			Given:            []client.Object{job(11, "", true)},
			ExpectWrites:     []string{"create Job ns/" + ref(11).Name, "patch status CronJob ns/c"},
			ExpectErr:        "job " + ref(11).Name + " exists and is not controlled by this CronJob",
			ExpectConditions: []metav1.Condition{{Type: conditions.TypeReady, Status: metav1.ConditionFalse, Reason: string(ReasonJobNameTaken)}},
			ExpectEvents:     []string{"Warning " + string(ReasonJobNameTaken) + " job " + ref(11).Name + " exists and is not controlled by this CronJob; delete or rename it"},
			Check:            expectStatus(cronjobv1.CronJobStatus{}),
		},
		unit.Case[*cronjobv1.CronJob]{
			Name:   "suspended: no run starts",
			Object: cronJob(func(cj *cronjobv1.CronJob) { cj.Spec.Suspend = ptr.To(true) }),
			// No Job: only the Ready condition is written.
			ExpectWrites:     []string{"patch status CronJob ns/c"},
			ExpectConditions: []metav1.Condition{ready},
			Check:            expectStatus(cronjobv1.CronJobStatus{}),
		},
		unit.Case[*cronjobv1.CronJob]{
			Name:             "a schedule that does not parse: Ready False, no retry",
			Object:           cronJob(func(cj *cronjobv1.CronJob) { cj.Spec.Schedule = "every tuesday" }),
			ExpectWrites:     []string{"patch status CronJob ns/c"},
			ExpectErr:        `invalid schedule "every tuesday"`,
			ExpectConditions: []metav1.Condition{{Type: conditions.TypeReady, Status: metav1.ConditionFalse, Reason: string(ReasonInvalidSchedule)}},
			Check: func(t bosuntest.TB, out *unit.Outcome[*cronjobv1.CronJob]) {
				if !errors.Is(out.Err, reconcile.TerminalError(nil)) {
					t.Errorf("error %v is not terminal: it would be retried", out.Err)
				}
			},
		},
		unit.Case[*cronjobv1.CronJob]{
			Name:   "the API server refuses the Job: the error is reported, the run is not recorded",
			Object: cronJob(),
			Interceptor: interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				return apierrors.NewInternalError(fmt.Errorf("etcd is down"))
			}},
			ExpectWrites:     []string{"create Job ns/" + ref(11).Name, "patch status CronJob ns/c"},
			ExpectErr:        "create job " + ref(11).Name,
			ExpectConditions: []metav1.Condition{{Type: conditions.TypeReady, Status: metav1.ConditionFalse, Reason: string(conditions.ReasonError)}},
			Check:            expectStatus(cronjobv1.CronJobStatus{}),
		},
	)
}

// hideJobsFromCache lists no Jobs when the list is not the API server's,
// which the in-memory client cannot tell apart but by the field selector
// only the cached state uses.
func hideJobsFromCache(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	if _, isJobs := list.(*batchv1.JobList); isJobs && lo.FieldSelector != nil && !lo.FieldSelector.Empty() {
		return nil
	}
	return c.List(ctx, list, opts...)
}

// deletedOnServer stands for a CronJob the API server deleted after the
// pass loaded it from the cache: once the pass has listed its Jobs from
// the API server (a list without the cache's field selector), a Get of a
// CronJob finds nothing.
type deletedOnServer struct{ listedLive bool }

// funcs are the interceptor's functions.
func (d *deletedOnServer) funcs() interceptor.Funcs {
	return interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			lo := (&client.ListOptions{}).ApplyOptions(opts)
			if _, isJobs := list.(*batchv1.JobList); isJobs && (lo.FieldSelector == nil || lo.FieldSelector.Empty()) {
				d.listedLive = true
			}
			return c.List(ctx, list, opts...)
		},
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, isCronJob := obj.(*cronjobv1.CronJob); isCronJob && d.listedLive {
				return apierrors.NewNotFound(cronjobv1.GroupVersion.WithResource("cronjobs").GroupResource(), key.Name)
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}
}

// ctrlResult is the result of a pass that asks to be requeued after d.
func ctrlResult(d time.Duration) ctrl.Result { return ctrl.Result{RequeueAfter: d} }
