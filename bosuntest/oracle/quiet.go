package oracle

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bosunkit/bosun/bosuntest"
)

// errNotQuiet is wrapped by the error of Quiet when writes were made
// during the quiet period.
var errNotQuiet = errors.New("writes during the quiet period")

// WriteLog is anything that records the API writes of the operator under
// test, in the order they were made. *bosuntest.WriteCounter is one; the
// processes of package bosuntest/faults are others.
type WriteLog interface {
	// Writes returns every write recorded so far, oldest first.
	Writes() []bosuntest.Write
}

var _ WriteLog = (*bosuntest.WriteCounter)(nil)

// Quiet waits period and returns the writes log recorded during it: those
// after the ones it held when Quiet was called. Writes of Events (of either
// API group) and of Leases are left out, since recording events and
// renewing a leader lease are what an idle operator does; bosuntest.Write
// carries no group, so any kind named Event or Lease is left out. The error
// is nil when no other write was made; otherwise it lists
// them. If ctx ends first, Quiet returns the writes made so far and
// ctx's error.
//
// Call it once the objects have converged (see Converged): an operator
// whose objects have converged has nothing left to write.
func Quiet(ctx context.Context, log WriteLog, period time.Duration) ([]bosuntest.Write, error) {
	baseline := len(log.Writes())
	timer := time.NewTimer(period)
	defer timer.Stop()
	var ctxErr error
	select {
	case <-ctx.Done():
		ctxErr = context.Cause(ctx)
	case <-timer.C:
	}
	all := log.Writes()
	// A log that was reset during the period holds only new writes.
	if len(all) < baseline {
		baseline = 0
	}
	var writes []bosuntest.Write
	for _, w := range all[baseline:] {
		if w.Kind != "Event" && w.Kind != "Lease" {
			writes = append(writes, w)
		}
	}
	if ctxErr != nil {
		return writes, fmt.Errorf("oracle: waiting for the quiet period: %w", ctxErr)
	}
	if len(writes) == 0 {
		return nil, nil
	}
	lines := make([]string, len(writes))
	for i, w := range writes {
		lines[i] = w.String()
	}
	return writes, fmt.Errorf("oracle: %w (%d in %s):\n\t%s", errNotQuiet, len(writes), period, joinOrdered(lines))
}
