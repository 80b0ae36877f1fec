package v2

import (
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
)

// The annotations that keep what one version's schedule cannot say in the
// other's.
const (
	// V1ScheduleAnnotation keeps, on a v2 CronJob, the v1 schedule that its
	// five fields cannot give back: a descriptor ("@hourly", "@every 90m"),
	// a "CRON_TZ=" prefix, fields apart by more than one space.
	V1ScheduleAnnotation = "cronjob.bosun.dev/v1-schedule"
	// V2ScheduleAnnotation keeps, on a v1 CronJob, the v2 schedule, as JSON,
	// when the schedule line does not give its fields back: a field set to
	// "*" (the line cannot tell it from a field left out), or one that
	// holds a space.
	V2ScheduleAnnotation = "cronjob.bosun.dev/v2-schedule"
)

var _ conversion.Convertible = (*CronJob)(nil)

// ConvertTo converts this CronJob to dstRaw, a v1 CronJob. The schedule
// becomes its line of five fields ("*" for a field left out), unless the
// CronJob carries V1ScheduleAnnotation and its fields are still those
// ConvertFrom made of that schedule: then the v1 schedule is given back as
// it was, and the annotation goes. When the line does not give the fields
// back (see V2ScheduleAnnotation), they are kept in V2ScheduleAnnotation on
// the v1 CronJob. Everything else is copied.
func (cj *CronJob) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*cronjobv1.CronJob)
	if !ok {
		return fmt.Errorf("converting a v2 CronJob to %T: want a v1 CronJob", dstRaw)
	}
	dst.ObjectMeta = *cj.ObjectMeta.DeepCopy()
	sched := cj.Spec.Schedule
	line := sched.String()
	if kept, ok := dst.Annotations[V1ScheduleAnnotation]; ok {
		delete(dst.Annotations, V1ScheduleAnnotation)
		// Fields changed at v2 since the conversion win over the kept line.
		if sameSchedule(splitSchedule(kept), sched) {
			line = kept
		}
	}
	if !sameSchedule(splitSchedule(line), sched) {
		kept, err := json.Marshal(sched)
		if err != nil {
			return fmt.Errorf("converting CronJob %s to v1: keeping the schedule: %w", cj.Name, err)
		}
		setAnnotation(&dst.ObjectMeta, V2ScheduleAnnotation, string(kept))
	}
	spec := cj.Spec.DeepCopy()
	dst.Spec = cronjobv1.CronJobSpec{
		Schedule:                   line,
		Suspend:                    spec.Suspend,
		ConcurrencyPolicy:          cronjobv1.ConcurrencyPolicy(spec.ConcurrencyPolicy),
		StartingDeadlineSeconds:    spec.StartingDeadlineSeconds,
		JobTemplate:                spec.JobTemplate,
		SuccessfulJobsHistoryLimit: spec.SuccessfulJobsHistoryLimit,
		FailedJobsHistoryLimit:     spec.FailedJobsHistoryLimit,
	}
	dst.Status = cronjobv1.CronJobStatus(*cj.Status.DeepCopy())
	return nil
}

// ConvertFrom converts srcRaw, a v1 CronJob, to this CronJob.
//
// The rule for the schedule: a v1 schedule of exactly five fields apart by
// single spaces fills the five fields, each "*" left out; any other
// schedule leaves every field out and is kept, as written, in
// V1ScheduleAnnotation, which ConvertTo gives back. A v1 CronJob that
// carries V2ScheduleAnnotation gets those fields instead, as long as they
// still make its schedule (one changed at v1 since makes the annotation
// stale, and it is dropped). So both ways lose nothing: v2 to v1 to v2 and
// v1 to v2 to v1 give the object they started from.
//
// To change, at v2, a schedule kept in V1ScheduleAnnotation, set at least
// one field: fields that no longer match the kept schedule win over it.
func (cj *CronJob) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*cronjobv1.CronJob)
	if !ok {
		return fmt.Errorf("converting %T to a v2 CronJob: want a v1 CronJob", srcRaw)
	}
	cj.ObjectMeta = *src.ObjectMeta.DeepCopy()
	line := src.Spec.Schedule
	sched := splitSchedule(line)
	if kept, ok := cj.Annotations[V2ScheduleAnnotation]; ok {
		delete(cj.Annotations, V2ScheduleAnnotation)
		var fields CronSchedule
		if json.Unmarshal([]byte(kept), &fields) == nil && fields.String() == line {
			sched = fields
		}
	}
	if sched.String() != line {
		setAnnotation(&cj.ObjectMeta, V1ScheduleAnnotation, line)
	}
	spec := src.Spec.DeepCopy()
	cj.Spec = CronJobSpec{
		Schedule:                   sched,
		Suspend:                    spec.Suspend,
		ConcurrencyPolicy:          ConcurrencyPolicy(spec.ConcurrencyPolicy),
		StartingDeadlineSeconds:    spec.StartingDeadlineSeconds,
		JobTemplate:                spec.JobTemplate,
		SuccessfulJobsHistoryLimit: spec.SuccessfulJobsHistoryLimit,
		FailedJobsHistoryLimit:     spec.FailedJobsHistoryLimit,
	}
	cj.Status = CronJobStatus(*src.Status.DeepCopy())
	return nil
}

// splitSchedule returns the fields of a schedule line of exactly five
// fields apart by single spaces, a "*" left out; for any other line, a
// CronSchedule with every field left out.
func splitSchedule(line string) CronSchedule {
	parts := strings.Fields(line)
	if len(parts) != 5 || strings.Join(parts, " ") != line {
		return CronSchedule{}
	}
	var s CronSchedule
	for i, f := range s.fields() {
		if parts[i] != "*" {
			v := CronField(parts[i])
			*f = &v
		}
	}
	return s
}

// sameSchedule reports whether a and b set the same fields to the same
// values.
func sameSchedule(a, b CronSchedule) bool {
	fa, fb := a.fields(), b.fields()
	for i := range fa {
		x, y := *fa[i], *fb[i]
		if (x == nil) != (y == nil) || x != nil && *x != *y {
			return false
		}
	}
	return true
}

// setAnnotation sets the annotation key of m to value.
func setAnnotation(m *metav1.ObjectMeta, key, value string) {
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[key] = value
}
