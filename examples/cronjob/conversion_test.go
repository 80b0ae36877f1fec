package cronjob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
	cronjobv2 "github.com/bosunkit/bosun/examples/cronjob/api/v2"
)

// versionCase is one CronJob as it reads at each version: its v1 schedule
// and v2 fields, and the annotation each version keeps of the other's
// schedule ("" for none).
type versionCase struct {
	name   string
	v1     string
	v1Kept string // V2ScheduleAnnotation of the v1 CronJob
	v2     cronjobv2.CronSchedule
	v2Kept string // V1ScheduleAnnotation of the v2 CronJob
}

func cronField(v string) *cronjobv2.CronField { return ptr.To(cronjobv2.CronField(v)) }

// v1Spec is the spec of the CronJobs of the conversion tests at v1, with
// schedule: every field set, so that the defaulting webhook changes none.
func v1Spec(schedule string) cronjobv1.CronJobSpec {
	spec := newCronJob("", "", schedule).Spec
	spec.Suspend, spec.ConcurrencyPolicy, spec.StartingDeadlineSeconds = ptr.To(true), cronjobv1.ForbidConcurrent, ptr.To[int64](120)
	spec.SuccessfulJobsHistoryLimit, spec.FailedJobsHistoryLimit = ptr.To[int32](2), ptr.To[int32](0)
	return spec
}

// v2Spec is v1Spec at v2, with the schedule sched.
func v2Spec(sched cronjobv2.CronSchedule) cronjobv2.CronJobSpec {
	s := v1Spec("")
	return cronjobv2.CronJobSpec{
		Schedule: sched, Suspend: s.Suspend, ConcurrencyPolicy: cronjobv2.ConcurrencyPolicy(s.ConcurrencyPolicy),
		StartingDeadlineSeconds: s.StartingDeadlineSeconds, JobTemplate: s.JobTemplate,
		SuccessfulJobsHistoryLimit: s.SuccessfulJobsHistoryLimit, FailedJobsHistoryLimit: s.FailedJobsHistoryLimit,
	}
}

// annotations returns {key: value}, or nil for an empty value.
func annotations(key, value string) map[string]string {
	if value == "" {
		return nil
	}
	return map[string]string{key: value}
}

// checkAtBothVersions reads the CronJob key at v1 and at v2 and checks
// that each holds tc's schedule and annotation, spec and status.
func checkAtBothVersions(t *testing.T, c client.Client, key client.ObjectKey, tc versionCase, status cronjobv1.CronJobStatus) {
	t.Helper()
	v1 := &cronjobv1.CronJob{}
	if err := c.Get(t.Context(), key, v1); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(v1Spec(tc.v1), v1.Spec); diff != "" {
		t.Errorf("spec at v1 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(annotations(cronjobv2.V2ScheduleAnnotation, tc.v1Kept), v1.Annotations); diff != "" {
		t.Errorf("annotations at v1 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(status, v1.Status); diff != "" {
		t.Errorf("status at v1 (-want +got):\n%s", diff)
	}
	v2 := &cronjobv2.CronJob{}
	if err := c.Get(t.Context(), key, v2); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(v2Spec(tc.v2), v2.Spec); diff != "" {
		t.Errorf("spec at v2 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(annotations(cronjobv2.V1ScheduleAnnotation, tc.v2Kept), v2.Annotations); diff != "" {
		t.Errorf("annotations at v2 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(cronjobv2.CronJobStatus(status), v2.Status); diff != "" {
		t.Errorf("status at v2 (-want +got):\n%s", diff)
	}
	if v1.ResourceVersion != v2.ResourceVersion || v1.UID != v2.UID || v1.Generation != v2.Generation {
		t.Errorf("v1 and v2 reads differ: resourceVersion %s and %s, uid %s and %s, generation %d and %d",
			v1.ResourceVersion, v2.ResourceVersion, v1.UID, v2.UID, v1.Generation, v2.Generation)
	}
}

// testStatus is a status the tests write at v1 and read at both versions.
func testStatus(ns string) cronjobv1.CronJobStatus {
	at := metav1.NewTime(time.Date(2030, 1, 1, 11, 0, 0, 0, time.UTC))
	return cronjobv1.CronJobStatus{
		ObservedGeneration: 1,
		Active:             []corev1.ObjectReference{{APIVersion: "batch/v1", Kind: "Job", Namespace: ns, Name: "c-1893495600", UID: "uid-c"}},
		LastScheduleTime:   &at,
		Conditions: []metav1.Condition{{
			Type: conditions.TypeReady, Status: metav1.ConditionTrue, Reason: string(conditions.ReasonSucceeded),
			Message: "ok", ObservedGeneration: 1, LastTransitionTime: at,
		}},
	}
}

// writeStatus writes status to the CronJob key at v1.
func writeStatus(t *testing.T, c client.Client, key client.ObjectKey, status cronjobv1.CronJobStatus) {
	t.Helper()
	cj := &cronjobv1.CronJob{}
	if err := c.Get(t.Context(), key, cj); err != nil {
		t.Fatal(err)
	}
	cj.Status = status
	if err := c.Status().Update(t.Context(), cj); err != nil {
		t.Fatal(err)
	}
}

// TestConversionThroughTheAPIServer writes CronJobs at one version and
// reads them at both, through the API server, which stores v1 and calls
// the conversion webhook for v2: the schedule reads as the rule of
// cronjobv2.ConvertFrom says, with the annotations it keeps, and the rest
// of the spec and the status (written at v1) read the same at both. Then
// each CronJob is written back at the other version, with a change of its
// own (suspend), and read again at both: nothing is lost either way, a v1
// "@hourly" read and written at v2 included.
func TestConversionThroughTheAPIServer(t *testing.T) {
	cp := shared.ControlPlane(t)
	c, ns := cp.Client, bosuntest.Namespace(t, cp.Client)
	status := testStatus(ns)

	written := map[string][]versionCase{
		"v1": {
			{name: "five-fields", v1: "*/5 9-17 * * MON-FRI", v2: cronjobv2.CronSchedule{Minute: cronField("*/5"), Hour: cronField("9-17"), DayOfWeek: cronField("MON-FRI")}},
			{name: "every-minute", v1: "* * * * *"},
			{name: "hourly", v1: "@hourly", v2Kept: "@hourly"},
			{name: "time-zone", v1: "CRON_TZ=Europe/Berlin 0 3 * * *", v2Kept: "CRON_TZ=Europe/Berlin 0 3 * * *"},
		},
		"v2": {
			{name: "fields", v2: cronjobv2.CronSchedule{Minute: cronField("0"), Hour: cronField("*/2")}, v1: "0 */2 * * *"},
			{name: "no-fields", v1: "* * * * *"},
			{name: "a-star", v2: cronjobv2.CronSchedule{Minute: cronField("30"), Month: cronField("*")}, v1: "30 * * * *", v1Kept: `{"minute":"30","month":"*"}`},
		},
	}
	for version, cases := range written {
		for _, tc := range cases {
			t.Run("written at "+version+": "+tc.name, func(t *testing.T) {
				key := client.ObjectKey{Namespace: ns, Name: version + "-" + tc.name}
				meta := metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}
				var obj client.Object = &cronjobv1.CronJob{ObjectMeta: meta, Spec: v1Spec(tc.v1)}
				if version == "v2" {
					obj = &cronjobv2.CronJob{ObjectMeta: meta, Spec: v2Spec(tc.v2)}
				}
				if err := c.Create(t.Context(), obj); err != nil {
					t.Fatal(err)
				}
				writeStatus(t, c, key, status)
				checkAtBothVersions(t, c, key, tc, status)

				// Back at the other version: read, change suspend, write.
				var other client.Object = &cronjobv2.CronJob{}
				if version == "v2" {
					other = &cronjobv1.CronJob{}
				}
				for _, suspend := range []bool{false, true} {
					if err := c.Get(t.Context(), key, other); err != nil {
						t.Fatal(err)
					}
					switch o := other.(type) {
					case *cronjobv1.CronJob:
						o.Spec.Suspend = ptr.To(suspend)
					case *cronjobv2.CronJob:
						o.Spec.Suspend = ptr.To(suspend)
					}
					if err := c.Update(t.Context(), other); err != nil {
						t.Fatal(err)
					}
				}
				// Suspend is back where it was: all else must be too.
				checkAtBothVersions(t, c, key, tc, status)
			})
		}
	}
}
