package bosuntest

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

const (
	// defaultTimeout is how long Eventually polls unless told otherwise.
	defaultTimeout = 30 * time.Second
	// defaultInterval is the pause between two checks of Eventually.
	defaultInterval = 100 * time.Millisecond
)

// errNeverChecked stands for the last error when the test ended before the
// first check.
var errNeverChecked = errors.New("condition was never checked")

// EventuallyOption changes how Eventually polls.
type EventuallyOption func(*eventually)

// eventually holds the settings of one Eventually call.
type eventually struct {
	timeout  time.Duration
	interval time.Duration
}

// Timeout makes Eventually give up after d instead of 30 seconds.
func Timeout(d time.Duration) EventuallyOption {
	return func(e *eventually) { e.timeout = d }
}

// Interval makes Eventually pause d between checks instead of 100ms.
func Interval(d time.Duration) EventuallyOption {
	return func(e *eventually) { e.interval = d }
}

// Eventually calls check until it returns nil, pausing 100ms between calls
// (see Interval), and fails the test with check's last error if that does
// not happen within 30 seconds (see Timeout). The context given to check ends at the timeout. Like
// t.Fatal, Eventually must be called from the goroutine running the test.
func Eventually(t TB, check func(ctx context.Context) error, opts ...EventuallyOption) {
	t.Helper()
	e := eventually{timeout: defaultTimeout, interval: defaultInterval}
	for _, opt := range opts {
		opt(&e)
	}
	ctx, cancel := context.WithTimeout(t.Context(), e.timeout)
	defer cancel()
	start := time.Now()
	last := errNeverChecked
	attempts := 0
	err := wait.PollUntilContextCancel(ctx, e.interval, true, func(ctx context.Context) (bool, error) {
		if ctx.Err() != nil {
			return false, nil
		}
		attempts++
		err := check(ctx)
		if err == nil {
			return true, nil
		}
		// A check the timeout cut short says only that: the error of the
		// one before tells why the condition was not met.
		if ctx.Err() == nil || errors.Is(last, errNeverChecked) {
			last = err
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("bosuntest: condition not met after %s (%d checks): %v",
			time.Since(start).Round(time.Millisecond), attempts, last)
	}
}
