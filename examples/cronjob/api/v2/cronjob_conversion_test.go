package v2_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/randfill"

	"github.com/bosunkit/bosun/bosuntest/conversion"
	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
	cronjobv2 "github.com/bosunkit/bosun/examples/cronjob/api/v2"
)

// v1Schedules are schedules of every kind the rule of ConvertFrom tells
// apart: five fields, five fields with "*", a descriptor, a time zone,
// fields apart by more than one space, too few and too many fields, none.
var v1Schedules = []string{
	"0 * * * *", "* * * * *", "*/5 9-17 1,15 JAN-MAR MON-FRI", "@hourly", "@every 90m",
	"CRON_TZ=UTC 0 3 * * *", "0  3 * * *", " 0 3 * * *", "0 3 * * * ", "0 3\t* * *",
	"0 3 * *", "0 3 * * * *", "",
}

// v2Fields are values of a v2 field: what the five-field line gives back,
// "*" (which it does not tell from a field left out), and values with
// spaces or nothing, which the API server refuses but conversion must
// still keep.
var v2Fields = []cronjobv2.CronField{"0", "*/5", "1-5", "MON", "*", "", "1 2", "a\tb", "@hourly"}

// TestConversionRoundTrip fills random v1 and v2 CronJobs, their schedules
// drawn half the time from the kinds above and otherwise at random, and
// checks that v2 -> v1 -> v2 and v1 -> v2 -> v1 give them back.
//
// The Job template is filled small: its metadata, a few fields of the Job
// and one container. Conversion copies it whole, so a small one shows that
// it is kept, and a random PodSpec in full makes each object a hundred
// times slower to fill.
func TestConversionRoundTrip(t *testing.T) {
	conversion.Options{
		Iterations: 300,
		Funcs: []any{
			func(j *batchv1.JobTemplateSpec, c randfill.Continue) {
				c.Fill(&j.ObjectMeta)
				c.Fill(&j.Spec.BackoffLimit)
				c.Fill(&j.Spec.Parallelism)
				var ctr corev1.Container
				c.Fill(&ctr.Name)
				c.Fill(&ctr.Image)
				c.Fill(&ctr.Args)
				j.Spec.Template.Spec.Containers = []corev1.Container{ctr}
			},
			func(s *cronjobv1.CronJobSpec, c randfill.Continue) {
				c.FillNoCustom(s)
				if c.Bool() {
					s.Schedule = v1Schedules[c.Intn(len(v1Schedules))]
				}
			},
			func(f *cronjobv2.CronField, c randfill.Continue) {
				if c.Bool() {
					*f = v2Fields[c.Intn(len(v2Fields))]
				} else {
					*f = cronjobv2.CronField(c.String(0))
				}
			},
		},
	}.RoundTrip(t, &cronjobv1.CronJob{}, &cronjobv2.CronJob{})
}

func field(v string) *cronjobv2.CronField { return ptr.To(cronjobv2.CronField(v)) }

// TestConvertSchedule pins the rule of ConvertFrom and ConvertTo on
// examples: which v1 schedules fill the fields, which are kept in an
// annotation, and which v2 schedules the v1 line does not give back.
func TestConvertSchedule(t *testing.T) {
	tests := []struct {
		name string
		v1   string
		// v1Annotations are the annotations of the v1 CronJob.
		v1Annotations map[string]string
		v2            cronjobv2.CronSchedule
		// v2Annotations are the annotations of the v2 CronJob.
		v2Annotations map[string]string
	}{{
		name: "five fields",
		v1:   "*/5 9-17 * * MON-FRI",
		v2:   cronjobv2.CronSchedule{Minute: field("*/5"), Hour: field("9-17"), DayOfWeek: field("MON-FRI")},
	}, {
		name: "every minute: every field left out",
		v1:   "* * * * *",
		v2:   cronjobv2.CronSchedule{},
	}, {
		name:          "a descriptor is kept at v2",
		v1:            "@hourly",
		v2:            cronjobv2.CronSchedule{},
		v2Annotations: map[string]string{cronjobv2.V1ScheduleAnnotation: "@hourly"},
	}, {
		name:          "a time zone is kept at v2",
		v1:            "CRON_TZ=UTC 0 3 * * *",
		v2:            cronjobv2.CronSchedule{},
		v2Annotations: map[string]string{cronjobv2.V1ScheduleAnnotation: "CRON_TZ=UTC 0 3 * * *"},
	}, {
		name:          "two spaces are kept at v2",
		v1:            "0  3 * * *",
		v2:            cronjobv2.CronSchedule{},
		v2Annotations: map[string]string{cronjobv2.V1ScheduleAnnotation: "0  3 * * *"},
	}, {
		name:          `a field set to "*" is kept at v1`,
		v1:            "0 * * * *",
		v1Annotations: map[string]string{cronjobv2.V2ScheduleAnnotation: `{"minute":"0","hour":"*"}`},
		v2:            cronjobv2.CronSchedule{Minute: field("0"), Hour: field("*")},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v1 := &cronjobv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "c", Annotations: tt.v1Annotations}, Spec: cronjobv1.CronJobSpec{Schedule: tt.v1}}
			v2 := &cronjobv2.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "c", Annotations: tt.v2Annotations}, Spec: cronjobv2.CronJobSpec{Schedule: tt.v2}}

			gotV2 := &cronjobv2.CronJob{}
			if err := gotV2.ConvertFrom(v1); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(v2, gotV2, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("v1 to v2 (-want +got):\n%s", diff)
			}
			gotV1 := &cronjobv1.CronJob{}
			if err := v2.ConvertTo(gotV1); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(v1, gotV1, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("v2 to v1 (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConvertStaleAnnotation: a schedule changed at one version after
// the other's was kept wins over the kept one, whose annotation goes.
func TestConvertStaleAnnotation(t *testing.T) {
	// Read at v2, "@hourly" was kept; a v2 client then set the minute.
	v2 := &cronjobv2.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "c", Annotations: map[string]string{cronjobv2.V1ScheduleAnnotation: "@hourly"}},
		Spec:       cronjobv2.CronJobSpec{Schedule: cronjobv2.CronSchedule{Minute: field("30")}},
	}
	v1 := &cronjobv1.CronJob{}
	if err := v2.ConvertTo(v1); err != nil {
		t.Fatal(err)
	}
	if v1.Spec.Schedule != "30 * * * *" || len(v1.Annotations) != 0 {
		t.Errorf("v1 schedule %q, annotations %v; want 30 * * * * and none", v1.Spec.Schedule, v1.Annotations)
	}

	// Written at v2 with the hour "*", kept at v1; a v1 client then set
	// "@daily".
	v1 = &cronjobv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "c", Annotations: map[string]string{cronjobv2.V2ScheduleAnnotation: `{"minute":"0","hour":"*"}`}},
		Spec:       cronjobv1.CronJobSpec{Schedule: "@daily"},
	}
	v2 = &cronjobv2.CronJob{}
	if err := v2.ConvertFrom(v1); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{cronjobv2.V1ScheduleAnnotation: "@daily"}
	if diff := cmp.Diff(want, v2.Annotations); diff != "" || v2.Spec.Schedule != (cronjobv2.CronSchedule{}) {
		t.Errorf("v2 schedule %+v, annotations (-want +got):\n%s", v2.Spec.Schedule, diff)
	}
}
