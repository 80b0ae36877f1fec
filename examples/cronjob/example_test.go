package cronjob_test

import (
	"fmt"
	"time"

	"k8s.io/utils/ptr"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/examples/cronjob"
	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
)

// The reconciler's one step joins the three actions of cronjob.bosun, each
// a step of its own, so that each runs whatever the others return; the run
// is left out while the CronJob is suspended.
func ExampleNewReconciler() {
	r := cronjob.NewReconciler(cronjob.Options{})
	for _, s := range r.Steps {
		fmt.Println(bosun.StepName(s))
	}
	// Output:
	// Join(ListActiveJobsAndUpdateStatus,CleanUpOldJobsExceedsHistoryLimits,If(RunNextScheduledJob))
}

// A CronJob last run at 10:00 on an hourly schedule, looked at again at
// 13:20: only the latest missed run, 13:00, is due; with a ten-minute
// starting deadline it is too late, and the next run is at 14:00.
func ExampleScheduledRuns() {
	last := time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC)
	now := time.Date(2030, 1, 1, 13, 20, 0, 0, time.UTC)
	for _, deadline := range []*int64{nil, ptr.To[int64](600)} {
		runs, err := cronjob.ScheduledRuns("CRON_TZ=UTC 0 * * * *", last, now, deadline)
		if err != nil {
			fmt.Println(err)
			return
		}
		missed := "none"
		if !runs.Missed.IsZero() {
			missed = runs.Missed.Format("15:04")
		}
		fmt.Printf("missed %s, next %s\n", missed, runs.Next.Format("15:04"))
	}
	// Output:
	// missed 13:00, next 14:00
	// missed none, next 14:00
}

// A schedule that does not parse is a terminal error with the reason
// InvalidSchedule, which the engine shows as Ready=False and does not retry.
func ExampleScheduledRuns_invalid() {
	_, err := cronjob.ScheduledRuns("every tuesday", time.Now(), time.Now(), nil)
	reason, _, msg := conditions.FromError(err)
	fmt.Println(reason)
	fmt.Println(msg)
	// Output:
	// InvalidSchedule
	// invalid schedule "every tuesday": expected exactly 5 fields, found 2: [every tuesday]
}

// Samples are the CronJobs that `bosun demo` creates.
func ExampleSamples() {
	for _, obj := range cronjob.Samples("demo") {
		cj := obj.(*cronjobv1.CronJob)
		c := cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0]
		fmt.Printf("%s/%s: %q runs %s %v\n", cj.Namespace, cj.Name, cj.Spec.Schedule, c.Image, c.Command)
	}
	// Output:
	// demo/every-minute: "*/1 * * * *" runs busybox:1.37 [sh -c date; echo hello from bosun]
}
