package managed

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/time/rate"
)

// Limits bound what steps ask of an external system. A value that is not
// positive sets no bound.
type Limits struct {
	// Rate is how many calls may start per second, on average.
	Rate float64
	// Burst is how many calls may start at once when the rate allows
	// more; without one, a single call: starts are spaced evenly.
	Burst int
	// Concurrency is how many passes may be connected at once, from
	// Connect to Disconnect. The calls of a pass run one after the other,
	// so it also bounds the calls running at once, and the connections
	// of a Connector that opens one per pass.
	Concurrency int
}

// Limiter holds the calls of steps to an external system within Limits:
// a call or a connection waits, on its worker, until it may start. One
// Limiter given to several steps (WithLimiter), in the same or in
// different controllers, bounds them together; a Limiter given to one
// step bounds its calls alone.
//
// Every call of the Connector and the ExternalClient counts against the
// rate: Connect, Observe, Create, Update, Delete, RepairCredentials,
// PollOperation and ObserveBatch, but not Disconnect, which frees what
// Connect took. A pass takes a slot of the concurrency before it connects
// and gives it back once it has disconnected; a batch round holds one
// while it runs. Waits do not count against the call
// timeout; they end with the pass's context, and a call that never
// started fails with ErrCallLimitWait, which never leaves the outcome of
// a Create unknown.
type Limiter struct {
	limits Limits
	rate   *rate.Limiter // nil: no rate limit
	slots  chan struct{} // nil: no concurrency limit
}

// ErrCallLimitWait is wrapped by the error of a call that did not start
// because the pass ended while it waited for its Limiter.
var ErrCallLimitWait = errors.New("waiting for the external call limit")

// NewLimiter returns a Limiter within l.
func NewLimiter(l Limits) *Limiter {
	lim := &Limiter{limits: l}
	if l.Rate > 0 {
		lim.rate = rate.NewLimiter(rate.Limit(l.Rate), max(l.Burst, 1))
	}
	if l.Concurrency > 0 {
		lim.slots = make(chan struct{}, l.Concurrency)
	}
	return lim
}

// Limits returns the limits of the Limiter.
func (l *Limiter) Limits() Limits { return l.limits }

// limited reports whether l bounds anything.
func (l *Limiter) limited() bool { return l != nil && (l.rate != nil || l.slots != nil) }

// enter waits for a slot of the concurrency, and returns the function
// that gives it back, with how long it waited. A Limiter without a
// concurrency, or nil, admits at once.
func (l *Limiter) enter(ctx context.Context) (leave func(), waited time.Duration, err error) {
	if l == nil || l.slots == nil {
		return func() {}, 0, nil
	}
	start := time.Now()
	select {
	case l.slots <- struct{}{}:
		return func() { <-l.slots }, time.Since(start), nil
	case <-ctx.Done():
		return nil, time.Since(start), waitError(context.Cause(ctx))
	}
}

// pace waits until the rate lets a call start, and returns how long it
// waited. A Limiter without a rate, or nil, admits at once.
func (l *Limiter) pace(ctx context.Context) (waited time.Duration, err error) {
	if l == nil || l.rate == nil {
		return 0, nil
	}
	start := time.Now()
	if err := l.rate.Wait(ctx); err != nil {
		return time.Since(start), waitError(err)
	}
	return time.Since(start), nil
}

// waitError is the error of a wait that ended with cause. The cause is
// named, not wrapped: the call never started, and a wrapped context error
// would leave its outcome unknown.
func waitError(cause error) error {
	return fmt.Errorf("%w: %s", ErrCallLimitWait, cause.Error())
}
