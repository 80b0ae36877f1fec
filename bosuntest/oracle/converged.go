package oracle

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// defaultInterval is the pause between two reads of the API server by
// Converged and Gone, unless Interval says otherwise.
const defaultInterval = 100 * time.Millisecond

// Errors a caller can tell apart with errors.Is.
var (
	// errNotConverged is wrapped by the error of Converged when the bound
	// passed with objects not converged.
	errNotConverged = errors.New("not converged")
	// errNotGone is wrapped by the error of Gone when the bound passed with
	// objects still on the API server.
	errNotGone = errors.New("not gone")
)

// Check tells whether one object is converged: nil when it is, an error
// saying what is missing otherwise. CheckReady is the default.
type Check func(obj client.Object) error

// Option changes how Converged (and, for Interval, Gone) polls and what it
// accepts.
type Option func(*settings)

// settings are the options of one call.
type settings struct {
	list     []client.ListOption
	check    Check
	count    int // -1: any number but zero
	interval time.Duration
}

func newSettings(opts []Option) settings {
	s := settings{check: CheckReady, count: -1, interval: defaultInterval}
	for _, opt := range opts {
		opt(&s)
	}
	return s
}

// ListOptions passes opts, such as client.InNamespace or
// client.MatchingLabels, to every List call of Converged.
func ListOptions(opts ...client.ListOption) Option {
	return func(s *settings) { s.list = append(s.list, opts...) }
}

// WithCheck replaces CheckReady by check. check is given each listed
// object as the list holds it: typed for a typed list, unstructured for an
// unstructured one. A check that wants the default as well calls
// CheckReady itself.
func WithCheck(check Check) Option {
	return func(s *settings) { s.check = check }
}

// Count makes Converged wait until the list holds exactly n objects, all
// converged. Without it, any number of objects but zero will do; Count(0)
// waits for an empty list.
func Count(n int) Option {
	return func(s *settings) { s.count = n }
}

// Interval makes Converged and Gone pause d between reads instead of
// 100ms.
func Interval(d time.Duration) Option {
	return func(s *settings) { s.interval = d }
}

// Convergence is what Converged measured.
type Convergence struct {
	// Duration is the time from the call until the last object to converge
	// was first seen converged (and stayed so). When the bound passed, it is
	// the time spent waiting.
	Duration time.Duration
	// Objects is the number of objects listed by the last read.
	Objects int
	// Converged is the number of those that were converged.
	Converged int
}

// String returns "3/3 converged in 1.2s".
func (c Convergence) String() string {
	return fmt.Sprintf("%d/%d converged in %s", c.Converged, c.Objects, c.Duration.Round(time.Millisecond))
}

// Converged lists list with c until every object in it is converged, or
// bound passes, or ctx ends. An object is converged when the check passes:
// CheckReady unless WithCheck gives another. The list may be typed or an
// *unstructured.UnstructuredList, so any kind, custom resources included,
// can be checked.
//
// On success the error is nil. Otherwise it says "not converged" (or
// wraps the context's error) and names each object not converged at the last read,
// with its Ready condition and what the check said; a List call that
// failed on the last read is named too. The Convergence is filled either
// way.
func Converged(ctx context.Context, c client.Client, list client.ObjectList, bound time.Duration, opts ...Option) (Convergence, error) {
	s := newSettings(opts)
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()

	since := map[types.UID]time.Duration{} // when each object was first seen converged, without a break
	var res Convergence
	var last []string // what the last List that got through found wrong
	listed := false
	var lastErr error // the error of the last read that failed, unless a read got through since; a read the end of the wait cut short keeps the one before
	err := wait.PollUntilContextCancel(ctx, s.interval, true, func(ctx context.Context) (bool, error) {
		pending, err := s.read(ctx, c, list, start, since, &res)
		if err == nil && len(pending) == 0 {
			return true, nil
		}
		// A read cut short by the end of the wait (or refused by the
		// client's rate limiter because the wait is about to end) says
		// nothing of the objects: what the read before it found is kept.
		// A read that failed otherwise is named beside what the last List
		// that got through found.
		switch {
		case err == nil:
			last, listed, lastErr = pending, true, nil
		case !cutShort(ctx, s.interval) || (!listed && lastErr == nil):
			lastErr = err
		}
		return false, nil
	})
	if err == nil {
		return res, nil
	}
	res.Duration = time.Since(start)
	lines := last
	if lastErr != nil {
		lines = append([]string{lastErr.Error()}, lines...)
	}
	heading := fmt.Sprintf("%d of %d converged after %s; not converged", res.Converged, res.Objects, res.Duration.Round(time.Millisecond))
	if cause := context.Cause(ctx); !errors.Is(cause, context.DeadlineExceeded) {
		// The caller's context ended before the bound.
		return res, fmt.Errorf("oracle: %w: %s", cause, joinLines(heading, lines))
	}
	return res, fmt.Errorf("oracle: objects %w: %s", errNotConverged, joinLines(heading, lines))
}

// cutShort reports whether a read that failed now may have failed for the
// end of the wait: ctx ended, or ends within the next interval.
func cutShort(ctx context.Context, interval time.Duration) bool {
	deadline, ok := ctx.Deadline()
	return ctx.Err() != nil || (ok && time.Until(deadline) < interval)
}

// read lists the objects once, updates since and res, and returns a line
// for each object not converged, or the error of the List call or of the
// count.
func (s *settings) read(ctx context.Context, c client.Client, list client.ObjectList, start time.Time, since map[types.UID]time.Duration, res *Convergence) ([]string, error) {
	l := freshList(list)
	if err := c.List(ctx, l, s.list...); err != nil {
		return nil, fmt.Errorf("listing %s: %w", kindOf(c, list), err)
	}
	objs, err := items(l)
	if err != nil {
		return nil, err
	}
	now := time.Since(start)
	res.Objects, res.Converged = len(objs), 0
	var pending []string
	seen := map[types.UID]bool{}
	for _, obj := range objs {
		seen[obj.GetUID()] = true
		if cerr := s.check(obj); cerr != nil {
			delete(since, obj.GetUID())
			m, err := content(obj)
			if err != nil {
				return nil, err
			}
			line := describe(c, obj) + ": " + readyText(m)
			if why := cerr.Error(); why != readyText(m) {
				line += ": " + why
			}
			pending = append(pending, line)
			continue
		}
		res.Converged++
		if _, ok := since[obj.GetUID()]; !ok {
			since[obj.GetUID()] = now
		}
	}
	res.Duration = 0
	for uid, d := range since {
		if !seen[uid] { // gone since an earlier read
			delete(since, uid)
			continue
		}
		res.Duration = max(res.Duration, d)
	}
	switch {
	case s.count < 0 && len(objs) == 0:
		return pending, errors.New("no objects listed")
	case s.count >= 0 && len(objs) != s.count:
		return pending, fmt.Errorf("%s listed, want %d", count(len(objs), "object"), s.count)
	}
	return pending, nil
}

// CheckReady is the default check of Converged. It passes when obj is not
// being deleted and its Ready condition is True for its current
// generation: the condition's observedGeneration and the object's
// status.observedGeneration, each when present, equal metadata.generation,
// and at least one of them is present. It reads the object's JSON form, so
// it works for any kind whose status holds a list of metav1.Condition.
func CheckReady(obj client.Object) error {
	if obj.GetDeletionTimestamp() != nil {
		return errors.New("being deleted")
	}
	m, err := content(obj)
	if err != nil {
		return err
	}
	ready, ok := readyOf(m)
	if !ok {
		return errors.New("no Ready condition")
	}
	if status, _, _ := unstructured.NestedString(ready, "status"); status != "True" {
		return errors.New("not ready")
	}
	gen := obj.GetGeneration()
	condGen, condOK, _ := unstructured.NestedInt64(ready, "observedGeneration")
	statusGen, statusOK, _ := unstructured.NestedInt64(m, "status", "observedGeneration")
	condOK = condOK && condGen != 0 // zero is what an unset field reads as
	switch {
	case condOK && condGen != gen:
		return fmt.Errorf("the Ready condition is for generation %d, the object is at %d", condGen, gen)
	case statusOK && statusGen != gen:
		return fmt.Errorf("status.observedGeneration is %d, the object is at %d", statusGen, gen)
	case !condOK && !statusOK:
		return errors.New("no observedGeneration: the Ready condition may describe an older generation")
	}
	return nil
}

var _ Check = CheckReady
