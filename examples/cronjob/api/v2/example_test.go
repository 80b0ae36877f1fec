package v2_test

import (
	"fmt"

	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
	cronjobv2 "github.com/bosunkit/bosun/examples/cronjob/api/v2"
)

// A v1 schedule of five fields fills the v2 fields, "*" left out; one the
// fields cannot hold leaves them out and is kept in an annotation, and
// converting back to v1 gives it as it was.
func ExampleCronJob_ConvertFrom() {
	for _, schedule := range []string{"*/5 9-17 * * MON-FRI", "@hourly"} {
		v1 := &cronjobv1.CronJob{Spec: cronjobv1.CronJobSpec{Schedule: schedule}}
		v2 := &cronjobv2.CronJob{}
		if err := v2.ConvertFrom(v1); err != nil {
			fmt.Println(err)
			return
		}
		s := v2.Spec.Schedule
		fmt.Printf("%q: minute %v, hour %v, day of week %v, kept %q\n", schedule,
			deref(s.Minute), deref(s.Hour), deref(s.DayOfWeek), v2.Annotations[cronjobv2.V1ScheduleAnnotation])
		back := &cronjobv1.CronJob{}
		if err := v2.ConvertTo(back); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("back at v1: %q\n", back.Spec.Schedule)
	}
	// Output:
	// "*/5 9-17 * * MON-FRI": minute */5, hour 9-17, day of week MON-FRI, kept ""
	// back at v1: "*/5 9-17 * * MON-FRI"
	// "@hourly": minute -, hour -, day of week -, kept "@hourly"
	// back at v1: "@hourly"
}

// String gives the v1 line of a v2 schedule.
func ExampleCronSchedule_String() {
	zero := cronjobv2.CronField("0")
	fmt.Println(cronjobv2.CronSchedule{Minute: &zero}.String())
	// Output: 0 * * * *
}

// deref returns *f, or "-" for a field left out.
func deref(f *cronjobv2.CronField) string {
	if f == nil {
		return "-"
	}
	return string(*f)
}
