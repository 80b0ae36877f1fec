package managed

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/bosunkit/bosun/bosuntest"
)

// TestLimiterConcurrency checks that no more passes than the limit hold
// a Limiter's slots at once, and that every pass gets one.
func TestLimiterConcurrency(t *testing.T) {
	t.Parallel()
	l := NewLimiter(Limits{Concurrency: 2})
	var mu sync.Mutex
	running, most, done := 0, 0, 0
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			release, _, err := l.enter(t.Context())
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			running++
			most = max(most, running)
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
			mu.Lock()
			running--
			done++
			mu.Unlock()
			release()
		})
	}
	wg.Wait()
	if most > 2 || done != 10 {
		t.Errorf("%d calls at once at most, %d done; want at most 2, and 10", most, done)
	}
}

// TestLimiterRate checks that starts are spaced by the rate: twenty calls
// at 100 a second, one at a time, cannot all start in less than 190 ms.
func TestLimiterRate(t *testing.T) {
	t.Parallel()
	l := NewLimiter(Limits{Rate: 100})
	start := time.Now()
	for range 20 {
		if _, err := l.pace(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d < 190*time.Millisecond {
		t.Errorf("20 calls at 100 a second started within %s, want at least 190ms", d)
	}
}

// TestLimiterWaitEnds checks that a pass waiting for a slot, or a call
// for the rate, gives up when its context ends, with an error that says so
// and leaves no outcome unknown, and that a nil or unbounded Limiter never
// waits.
func TestLimiterWaitEnds(t *testing.T) {
	t.Parallel()
	l := NewLimiter(Limits{Concurrency: 1, Rate: 0.001})
	leave, _, err := l.enter(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer leave()
	if _, err := l.pace(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	_, _, enterErr := l.enter(ctx)
	_, paceErr := l.pace(ctx)
	for _, err := range []error{enterErr, paceErr} {
		switch {
		case !errors.Is(err, ErrCallLimitWait):
			t.Errorf("waiting past the context: %v, want ErrCallLimitWait", err)
		case outcomeUnknown(err):
			t.Errorf("waiting past the context: %v leaves the outcome unknown, want known (no call was made)", err)
		}
	}
	for _, free := range []*Limiter{nil, NewLimiter(Limits{})} {
		leave, entered, err := free.enter(ctx)
		if err != nil || entered != 0 {
			t.Errorf("%+v: entered after %s, %v; want at once", free, entered, err)
		}
		leave()
		if paced, err := free.pace(ctx); err != nil || paced != 0 {
			t.Errorf("%+v: paced after %s, %v; want at once", free, paced, err)
		}
	}
}

// TestCallLimit runs a controller with six workers over twelve Buckets of
// a cloud whose every call takes 20 ms, polled every 300 ms, with a limit
// of 40 calls a second and two passes connected at once: every Bucket
// converges, the cloud never serves more than two calls at once nor more
// than 41 starts (the rate and its burst of one) in any second, give or
// take the delay of its notes on a loaded machine, and the
// step's metrics count the calls and the waits.
func TestCallLimit(t *testing.T) {
	cl := newCloud()
	cl.callDelay = 20 * time.Millisecond
	e := startRig(t, cl, rig{workers: 6, opts: []Option{WithLimiter(NewLimiter(Limits{Rate: 40, Concurrency: 2}))}})
	const n = 12
	for i := range n {
		e.create(fmt.Sprintf("b%d", i), 1, "", nil)
	}
	for i := range n {
		e.wait(fmt.Sprintf("b%d", i), converged)
	}
	// Polls go on at the limit's rate for another second.
	cl.mu.Lock()
	calls := len(cl.starts)
	cl.mu.Unlock()
	bosuntest.Eventually(t, func(context.Context) error {
		cl.mu.Lock()
		defer cl.mu.Unlock()
		if len(cl.starts) < calls+40 {
			return fmt.Errorf("%d calls since convergence, want 40", len(cl.starts)-calls)
		}
		return nil
	})
	cl.mu.Lock()
	starts, most := append([]time.Time(nil), cl.starts...), cl.maxInFlight
	cl.mu.Unlock()
	if most > 2 {
		t.Errorf("the cloud served %d calls at once, want at most 2", most)
	}
	busiest := 0
	for i := range starts {
		k := i
		for k < len(starts) && starts[k].Sub(starts[i]) < time.Second {
			k++
		}
		busiest = max(busiest, k-i)
	}
	// The cloud notes a start when the call reaches it, a scheduling delay
	// after the limiter let it go: on a loaded machine a late note of one
	// call brings it nearer to the next ones, which can put one or two
	// more notes in a second than the limiter let through. A limiter that
	// did not hold the rate would put dozens more.
	if busiest > 41+2 {
		t.Errorf("%d calls started within one second, want at most 41 (and 2 for the delay of the notes)", busiest)
	}

	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counted := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if labelsOf(m) != (metricLabelValues{controller: "bucket-" + e.ns, step: "managed"}) {
				continue
			}
			switch f.GetName() {
			case metricExternalCalls:
				counted["calls"] += m.GetCounter().GetValue()
			case metricCallLimitWait:
				counted["waits"] += float64(m.GetHistogram().GetSampleCount())
			case metricExternalCallDuration:
				counted["timed"] += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	// A call is counted when it ends, and two may still run; its wait for
	// the rate is recorded before it starts, besides the wait of each
	// connect for a slot.
	if counted["calls"] < float64(len(starts)-2) || counted["timed"] < float64(len(starts)-2) || counted["waits"] < float64(len(starts)) {
		t.Errorf("metrics count %v, want about the %d calls the cloud saw in each", counted, len(starts))
	}
}
