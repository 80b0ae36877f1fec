package cronjob

import (
	"errors"
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
)

// MaxMissedRuns is the most runs ScheduledRuns accepts to have been missed
// since the last one; more mean the clock jumped or the operator was down
// for long, and StartingDeadlineSeconds should bound how far back to look.
const MaxMissedRuns = 100

// ErrInvalidSchedule is wrapped by the error of a schedule that does not
// parse.
var ErrInvalidSchedule = errors.New("invalid schedule")

// ErrTooManyMissedRuns is wrapped by the error of ScheduledRuns when more
// than MaxMissedRuns runs were missed.
var ErrTooManyMissedRuns = errors.New("too many missed runs")

// ParseSchedule parses a cron schedule: five fields, a descriptor such as
// "@hourly" or "@every 1h30m", optionally after "CRON_TZ=<zone> ".
func ParseSchedule(schedule string) (cron.Schedule, error) {
	s, err := cron.ParseStandard(schedule)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrInvalidSchedule, schedule, err)
	}
	return s, nil
}

// Runs is what a schedule asks for at one moment.
type Runs struct {
	// Missed is the latest scheduled time that is due and has not run yet;
	// zero when there is none.
	Missed time.Time
	// Next is the first scheduled time after now; zero when the schedule
	// never fires again.
	Next time.Time
}

// ScheduledRuns works out the runs of sched at time now, when the last run
// was scheduled at since (or the CronJob was created then). A run is missed
// when its time is after since and not after now; only the latest missed run
// is reported, because a CronJob catches up with one Job, not one per missed
// time. With a startingDeadline (in seconds), times earlier than now minus
// the deadline are too late and not considered at all; a time exactly that
// late is still in time. More than
// MaxMissedRuns missed runs give an error wrapping ErrTooManyMissedRuns.
func ScheduledRuns(sched cron.Schedule, since, now time.Time, startingDeadline *int64) (Runs, error) {
	earliest := since
	if startingDeadline != nil {
		// Just before the deadline, so that a run exactly at it is in time.
		if d := now.Add(-time.Duration(*startingDeadline)*time.Second - time.Nanosecond); d.After(earliest) {
			earliest = d
		}
	}
	var runs Runs
	missed := 0
	for t := sched.Next(earliest); !t.IsZero() && !t.After(now); t = sched.Next(t) {
		if missed++; missed > MaxMissedRuns {
			return Runs{}, fmt.Errorf("%w: more than %d since %s; set startingDeadlineSeconds to skip old runs",
				ErrTooManyMissedRuns, MaxMissedRuns, since.UTC().Format(time.RFC3339))
		}
		runs.Missed = t
	}
	runs.Next = sched.Next(now)
	return runs, nil
}
