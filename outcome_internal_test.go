package bosun

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// seen is an outcome as the tests compare it: the result, the error's
// text, and which of the tests' errors errors.Is finds in it.
type seen struct {
	Res   ctrl.Result
	Err   string
	Holds []string
}

var (
	errA = errors.New("a failed")
	errB = errors.New("b failed")
	// errStopWhy is ErrStop wrapped to say why.
	errStopWhy = fmt.Errorf("input missing: %w", ErrStop)
)

// see describes res, err for comparison.
func see(res ctrl.Result, err error) seen {
	s := seen{Res: res}
	if err == nil {
		return s
	}
	s.Err = err.Error()
	for _, known := range []struct {
		name string
		err  error
	}{{"a", errA}, {"b", errB}, {"stop", ErrStop}, {"deadline", context.DeadlineExceeded}, {"canceled", context.Canceled}} {
		if errors.Is(err, known.err) {
			s.Holds = append(s.Holds, known.name)
		}
	}
	return s
}

func TestInterrupts(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  ctrl.Result
		err  error
		want bool
	}{
		{"nothing", ctrl.Result{}, nil, false},
		{"a priority only", ctrl.Result{Priority: ptr.To(1)}, nil, false},
		{"a requeue", ctrl.Result{RequeueAfter: time.Second}, nil, true},
		{"the deprecated requeue", ctrl.Result{Requeue: true}, nil, true}, //nolint:staticcheck // a step may still set the deprecated field
		{"an error", ctrl.Result{}, errA, true},
		{"ErrStop", ctrl.Result{}, ErrStop, true},
		{"ErrStop wrapped", ctrl.Result{}, errStopWhy, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := interrupts(tc.res, tc.err); got != tc.want {
				t.Errorf("interrupts(%+v, %v) = %t, want %t", tc.res, tc.err, got, tc.want)
			}
		})
	}
}

func TestJoinOutcomes(t *testing.T) {
	joinedAB := errors.Join(errA, errB)
	wrappedMix := fmt.Errorf("sync: %w", errors.Join(ErrStop, errA))
	for _, tc := range []struct {
		name string
		in   []outcome
		want seen
	}{
		{"none", nil, seen{}},
		{"one is kept as it is", []outcome{{res: ctrl.Result{RequeueAfter: time.Second}, err: errStopWhy}},
			seen{Res: ctrl.Result{RequeueAfter: time.Second}, Err: "input missing: bosun: pass stopped", Holds: []string{"stop"}}},
		{"successes", []outcome{{}, {}}, seen{}},
		{"the shortest requeue wins", []outcome{
			{res: ctrl.Result{RequeueAfter: time.Minute}}, {}, {res: ctrl.Result{RequeueAfter: time.Second}}, {res: ctrl.Result{RequeueAfter: time.Hour}},
		}, seen{Res: ctrl.Result{RequeueAfter: time.Second}}},
		{"the deprecated requeue is kept", []outcome{{}, {res: ctrl.Result{Requeue: true}}}, //nolint:staticcheck // a step may still set the deprecated field
			seen{Res: ctrl.Result{Requeue: true}}}, //nolint:staticcheck // the join keeps it
		{"the highest priority wins", []outcome{{res: ctrl.Result{Priority: ptr.To(-1)}}, {}, {res: ctrl.Result{Priority: ptr.To(3)}}},
			seen{Res: ctrl.Result{Priority: ptr.To(3)}}},
		{"one error among successes", []outcome{{}, {err: errA}, {res: ctrl.Result{RequeueAfter: time.Second}}},
			seen{Res: ctrl.Result{RequeueAfter: time.Second}, Err: "a failed", Holds: []string{"a"}}},
		{"every error is kept, in order", []outcome{{err: errB}, {err: errA}},
			seen{Err: "b failed\na failed", Holds: []string{"a", "b"}}},
		{"joins are flattened", []outcome{{err: joinedAB}, {err: errors.New("c failed")}},
			seen{Err: "a failed\nb failed\nc failed", Holds: []string{"a", "b"}}},
		{"the same error value is kept once", []outcome{{err: errA}, {err: joinedAB}, {err: errA}},
			seen{Err: "a failed\nb failed", Holds: []string{"a", "b"}}},
		{"ErrStop gives way to a failure", []outcome{{err: errStopWhy}, {err: errA}, {err: ErrStop}},
			seen{Err: "a failed", Holds: []string{"a"}}},
		{"ErrStop alone is kept", []outcome{{}, {err: errStopWhy}},
			seen{Err: "input missing: bosun: pass stopped", Holds: []string{"stop"}}},
		{"several ErrStops are kept together", []outcome{{err: errStopWhy}, {err: ErrStop}},
			seen{Err: "input missing: bosun: pass stopped\nbosun: pass stopped", Holds: []string{"stop"}}},
		{"a wrapper of a failure and ErrStop is a failure", []outcome{{err: wrappedMix}, {err: ErrStop}},
			seen{Err: "sync: bosun: pass stopped\na failed", Holds: []string{"a", "stop"}}},
		{"a requeue and a failure", []outcome{{res: ctrl.Result{RequeueAfter: time.Second}}, {err: errA}},
			seen{Res: ctrl.Result{RequeueAfter: time.Second}, Err: "a failed", Holds: []string{"a"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, see(joinOutcomes(tc.in...))); diff != "" {
				t.Errorf("joinOutcomes (-want +got):\n%s", diff)
			}
			var j joiner
			for _, o := range tc.in {
				j.add(o.res, o.err)
			}
			if diff := cmp.Diff(tc.want, see(j.result())); diff != "" {
				t.Errorf("joiner (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWithoutStop(t *testing.T) {
	twoWraps := fmt.Errorf("outer: %w", errStopWhy)
	for _, tc := range []struct {
		name string
		err  error
		want seen
	}{
		{"nil", nil, seen{}},
		{"ErrStop", ErrStop, seen{}},
		{"ErrStop wrapped", errStopWhy, seen{}},
		{"ErrStop wrapped twice", twoWraps, seen{}},
		{"a failure stays whole", fmt.Errorf("sync: %w", errA), seen{Err: "sync: a failed", Holds: []string{"a"}}},
		{"a join of ErrStops", errors.Join(ErrStop, errStopWhy), seen{}},
		{"a join keeps its failures", errors.Join(errA, errStopWhy, errB), seen{Err: "a failed\nb failed", Holds: []string{"a", "b"}}},
		{"a join left with one failure is that failure", errors.Join(errStopWhy, errA), seen{Err: "a failed", Holds: []string{"a"}}},
		{"a wrapper of a mix loses its text", fmt.Errorf("sync: %w", errors.Join(ErrStop, errA)), seen{Err: "a failed", Holds: []string{"a"}}},
		{"several %w", fmt.Errorf("%w and %w", errA, ErrStop), seen{Err: "a failed", Holds: []string{"a"}}},
		{"a join without ErrStop stays whole", errors.Join(errA, errB), seen{Err: "a failed\nb failed", Holds: []string{"a", "b"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, see(ctrl.Result{}, withoutStop(tc.err))); diff != "" {
				t.Errorf("withoutStop(%v) (-want +got):\n%s", tc.err, diff)
			}
		})
	}
}

func TestRetryable(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{"success", context.Background(), nil, false},
		{"a failure", context.Background(), errA, true},
		{"a deadline of the step's own", context.Background(), fmt.Errorf("call: %w", context.DeadlineExceeded), true},
		{"ErrStop", context.Background(), errStopWhy, false},
		{"a terminal error", context.Background(), reconcile.TerminalError(errA), false},
		{"a terminal error wrapped", context.Background(), fmt.Errorf("sync: %w", reconcile.TerminalError(errA)), false},
		{"canceled", context.Background(), fmt.Errorf("call: %w", context.Canceled), false},
		{"a failure once the context is done", done, errA, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := retryable(tc.ctx, tc.err); got != tc.want {
				t.Errorf("retryable(%v) = %t, want %t", tc.err, got, tc.want)
			}
		})
	}
}

func TestFinal(t *testing.T) {
	prio := ptr.To(-1)
	for _, tc := range []struct {
		name string
		res  ctrl.Result
		err  error
		want seen
	}{
		{"success", ctrl.Result{}, nil, seen{}},
		{"a requeue", ctrl.Result{RequeueAfter: time.Second, Priority: prio}, nil, seen{Res: ctrl.Result{RequeueAfter: time.Second, Priority: prio}}},
		{"ErrStop is removed, the requeue kept", ctrl.Result{RequeueAfter: time.Second}, errStopWhy, seen{Res: ctrl.Result{RequeueAfter: time.Second}}},
		{"an error clears the requeue, keeps the priority", ctrl.Result{RequeueAfter: time.Second, Requeue: true, Priority: prio}, errA, //nolint:staticcheck // a step may still set the deprecated field
			seen{Res: ctrl.Result{Priority: prio}, Err: "a failed", Holds: []string{"a"}}},
		{"ErrStop is removed from a failure", ctrl.Result{RequeueAfter: time.Second}, errors.Join(errA, ErrStop),
			seen{Err: "a failed", Holds: []string{"a"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, see(final(tc.res, tc.err))); diff != "" {
				t.Errorf("final (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSequence checks the rule a Sequence and a Reconciler's Steps run
// by: in order, up to the first outcome that interrupts, which is the
// outcome; else the join of all; nothing once the context is done.
func TestSequence(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		steps   []outcome
		wantRan int
		want    seen
	}{
		{"none", context.Background(), nil, 0, seen{}},
		{"all run, their priorities joined", context.Background(),
			[]outcome{{}, {res: ctrl.Result{Priority: ptr.To(2)}}, {}}, 3, seen{Res: ctrl.Result{Priority: ptr.To(2)}}},
		{"a requeue stops it", context.Background(),
			[]outcome{{}, {res: ctrl.Result{RequeueAfter: time.Second}}, {err: errA}}, 2, seen{Res: ctrl.Result{RequeueAfter: time.Second}}},
		{"an error stops it", context.Background(),
			[]outcome{{err: errA}, {}}, 1, seen{Err: "a failed", Holds: []string{"a"}}},
		{"ErrStop stops it, as returned", context.Background(),
			[]outcome{{res: ctrl.Result{RequeueAfter: time.Minute}, err: errStopWhy}, {}}, 1,
			seen{Res: ctrl.Result{RequeueAfter: time.Minute}, Err: "input missing: bosun: pass stopped", Holds: []string{"stop"}}},
		{"a done context runs nothing", canceled, []outcome{{}}, 0, seen{Err: "context canceled", Holds: []string{"canceled"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran := 0
			res, err := sequence(tc.ctx, len(tc.steps), func(_ context.Context, i int) (ctrl.Result, error) {
				ran++
				return tc.steps[i].res, tc.steps[i].err
			})
			if diff := cmp.Diff(tc.want, see(res, err)); diff != "" {
				t.Errorf("sequence (-want +got):\n%s", diff)
			}
			if ran != tc.wantRan {
				t.Errorf("%d steps ran, want %d", ran, tc.wantRan)
			}
		})
	}
}
