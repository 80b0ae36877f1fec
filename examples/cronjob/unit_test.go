package cronjob

import (
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/bosunkit/bosun"
	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
)

// at returns 2030-01-01 at hh:mm UTC.
func at(hh, mm int) time.Time { return time.Date(2030, 1, 1, hh, mm, 0, 0, time.UTC) }

func TestScheduledRuns(t *testing.T) {
	const hourly, minutely = "CRON_TZ=UTC 0 * * * *", "CRON_TZ=UTC * * * * *"
	tests := []struct {
		name     string
		schedule string
		since    time.Time
		now      time.Time
		deadline *int64
		want     Runs
		wantErr  error
	}{
		{name: "nothing due yet", schedule: hourly, since: at(10, 0), now: at(10, 30),
			want: Runs{Next: at(11, 0)}},
		{name: "due exactly now", schedule: hourly, since: at(10, 0), now: at(11, 0),
			want: Runs{Missed: at(11, 0), Next: at(12, 0)}},
		{name: "since is not a run again", schedule: hourly, since: at(11, 0), now: at(11, 0),
			want: Runs{Next: at(12, 0)}},
		{name: "latest of several missed", schedule: hourly, since: at(10, 0), now: at(13, 20),
			want: Runs{Missed: at(13, 0), Next: at(14, 0)}},
		{name: "within the deadline", schedule: hourly, since: at(10, 0), now: at(13, 20), deadline: ptr.To[int64](30 * 60),
			want: Runs{Missed: at(13, 0), Next: at(14, 0)}},
		{name: "deadline exactly reached", schedule: hourly, since: at(10, 0), now: at(13, 20), deadline: ptr.To[int64](20 * 60),
			want: Runs{Missed: at(13, 0), Next: at(14, 0)}},
		{name: "too late", schedule: hourly, since: at(10, 0), now: at(13, 20), deadline: ptr.To[int64](10 * 60),
			want: Runs{Next: at(14, 0)}},
		{name: "zero deadline", schedule: hourly, since: at(10, 0), now: at(13, 0), deadline: ptr.To[int64](0),
			want: Runs{Missed: at(13, 0), Next: at(14, 0)}},
		{name: "since in the future", schedule: hourly, since: at(15, 0), now: at(13, 20),
			want: Runs{Next: at(14, 0)}},
		{name: "exactly the most missed runs", schedule: minutely, since: at(10, 0), now: at(11, 40),
			want: Runs{Missed: at(11, 40), Next: at(11, 41)}},
		{name: "too many missed runs", schedule: minutely, since: at(10, 0), now: at(11, 41),
			wantErr: ErrTooManyMissedRuns},
		{name: "deadline bounds the missed runs", schedule: minutely, since: at(10, 0), now: at(12, 0), deadline: ptr.To[int64](3600),
			want: Runs{Missed: at(12, 0), Next: at(12, 1)}},
		{name: "never fires", schedule: "CRON_TZ=UTC 0 0 30 2 *", since: at(10, 0), now: at(12, 0),
			want: Runs{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sched, err := ParseSchedule(tt.schedule)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ScheduledRuns(sched, tt.since, tt.now, tt.deadline)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ScheduledRuns (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseSchedule(t *testing.T) {
	tests := []struct {
		schedule string
		valid    bool
	}{
		{"*/5 * * * *", true},
		{"@hourly", true},
		{"@every 90m", true},
		{"CRON_TZ=Europe/Berlin 0 3 * * 1-5", true},
		{"", false},
		{"every tuesday", false},
		{"* * * * * *", false}, // seconds are not part of the standard syntax
		{"61 * * * *", false},
		{"CRON_TZ=Nowhere/Atlantis * * * * *", false},
	}
	for _, tt := range tests {
		_, err := ParseSchedule(tt.schedule)
		if got := err == nil; got != tt.valid {
			t.Errorf("ParseSchedule(%q) error %v, want valid %v", tt.schedule, err, tt.valid)
		}
		if err != nil && !errors.Is(err, ErrInvalidSchedule) {
			t.Errorf("ParseSchedule(%q) error %v does not wrap ErrInvalidSchedule", tt.schedule, err)
		}
	}
}

// testJob returns a Job scheduled at hh:00, finished as finish says ("" for
// running), completed at hh:30 when it succeeded.
func testJob(name string, hh int, finish batchv1.JobConditionType) batchv1.Job {
	j := batchv1.Job{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ns", Name: name, UID: types.UID("uid-" + name),
		Annotations: map[string]string{ScheduledAtAnnotation: at(hh, 0).Format(time.RFC3339)},
	}}
	if finish != "" {
		j.Status.Conditions = []batchv1.JobCondition{{Type: finish, Status: corev1.ConditionTrue}}
	}
	if finish == batchv1.JobComplete {
		j.Status.CompletionTime = &metav1.Time{Time: at(hh, 30)}
	}
	return j
}

// ref is the status.active entry of a Job made by testJob.
func ref(name string) corev1.ObjectReference {
	return corev1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}
}

// mtime returns t as a *metav1.Time.
func mtime(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }

// TestStatusFromJobs runs ListActiveJobsAndUpdateStatus and then
// UpdateCronJobStatus on a list of Jobs and compares the status.
func TestStatusFromJobs(t *testing.T) {
	tests := []struct {
		name   string
		status cronjobv1.CronJobStatus
		jobs   []batchv1.Job
		want   cronjobv1.CronJobStatus
	}{
		{name: "no jobs", want: cronjobv1.CronJobStatus{}},
		{
			name: "running, succeeded and failed",
			jobs: []batchv1.Job{
				testJob("c-4", 4, ""), testJob("c-1", 1, batchv1.JobComplete),
				testJob("c-2", 2, batchv1.JobComplete), testJob("c-3", 3, batchv1.JobFailed), testJob("c-0", 0, ""),
			},
			want: cronjobv1.CronJobStatus{
				Active:             []corev1.ObjectReference{ref("c-0"), ref("c-4")},
				LastScheduleTime:   mtime(at(4, 0)),
				LastSuccessfulTime: mtime(at(2, 30)),
			},
		},
		{
			name:   "times never move back; active is replaced",
			status: cronjobv1.CronJobStatus{Active: []corev1.ObjectReference{ref("gone")}, LastScheduleTime: mtime(at(9, 0)), LastSuccessfulTime: mtime(at(8, 0))},
			jobs:   []batchv1.Job{testJob("c-5", 5, batchv1.JobComplete)},
			want:   cronjobv1.CronJobStatus{LastScheduleTime: mtime(at(9, 0)), LastSuccessfulTime: mtime(at(8, 0))},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &bosun.Pass[*cronjobv1.CronJob]{Object: &cronjobv1.CronJob{Status: tt.status}}
			a := &actions{req: req}
			if _, err := a.ListActiveJobsAndUpdateStatus(t.Context(), logr.Discard(), tt.jobs); err != nil {
				t.Fatal(err)
			}
			if _, err := a.UpdateCronJobStatus(t.Context(), logr.Discard()); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, req.Object.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBeyond checks which finished Jobs the history limits let go.
func TestBeyond(t *testing.T) {
	jobs := func(hours ...int) []*batchv1.Job {
		var js []*batchv1.Job
		for _, h := range hours {
			j := testJob("c-"+string(rune('a'+h)), h, batchv1.JobComplete)
			js = append(js, &j)
		}
		return js
	}
	tests := []struct {
		name  string
		jobs  []*batchv1.Job
		limit *int32
		def   int32
		want  []*batchv1.Job
	}{
		{name: "under the default", jobs: jobs(1, 2), def: 3},
		{name: "default applies", jobs: jobs(4, 1, 3, 2), def: 3, want: jobs(1)},
		{name: "limit overrides the default", jobs: jobs(4, 1, 3, 2), limit: ptr.To[int32](1), def: 3, want: jobs(1, 2, 3)},
		{name: "zero keeps none", jobs: jobs(2, 1), limit: ptr.To[int32](0), def: 3, want: jobs(1, 2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, beyond(tt.jobs, tt.limit, tt.def)); diff != "" {
				t.Errorf("beyond (-want +got):\n%s", diff)
			}
		})
	}
}
