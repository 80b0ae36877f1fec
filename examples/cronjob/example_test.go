package cronjob_test

import (
	"fmt"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/examples/cronjob"
	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
	"github.com/bosunkit/bosun/flow"
)

// The workflow of one reconcile: the status is updated after the joined
// actions whatever they return, and a suspended CronJob starts no run.
func ExampleWorkflow() {
	clk := clocktesting.NewFakeClock(time.Now())
	for _, suspend := range []bool{false, true} {
		req := &bosun.Pass[*cronjobv1.CronJob]{Object: &cronjobv1.CronJob{
			Spec: cronjobv1.CronJobSpec{Schedule: "@hourly", Suspend: ptr.To(suspend)},
		}}
		fmt.Printf("suspend=%v: %s\n", suspend, flow.Describe(cronjob.Workflow(req, clk)))
	}
	// Output:
	// suspend=false: OrderedJoin(Join(ListActiveJobsAndUpdateStatus, CleanUpOldJobsExceedsHistoryLimits, If(true, RunNextScheduledJob)), UpdateCronJobStatus)
	// suspend=true: OrderedJoin(Join(ListActiveJobsAndUpdateStatus, CleanUpOldJobsExceedsHistoryLimits, If(false, RunNextScheduledJob)), UpdateCronJobStatus)
}

// A CronJob last run at 10:00 on an hourly schedule, looked at again at
// 13:20: only the latest missed run, 13:00, is due; with a ten-minute
// starting deadline it is too late, and the next run is at 14:00.
func ExampleScheduledRuns() {
	sched, err := cronjob.ParseSchedule("CRON_TZ=UTC 0 * * * *")
	if err != nil {
		fmt.Println(err)
		return
	}
	last := time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC)
	now := time.Date(2030, 1, 1, 13, 20, 0, 0, time.UTC)
	for _, deadline := range []*int64{nil, ptr.To[int64](600)} {
		runs, err := cronjob.ScheduledRuns(sched, last, now, deadline)
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

// A schedule that does not parse is refused with ErrInvalidSchedule; the
// controller reports it as Ready=False, reason InvalidSchedule.
func ExampleParseSchedule() {
	_, err := cronjob.ParseSchedule("every tuesday")
	fmt.Println(err)
	// Output:
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
