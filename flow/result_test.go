package flow_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/flow"
)

func TestResultHelpers(t *testing.T) {
	tests := []struct {
		name string
		res  reconcile.Result
		err  error
		want outcome
	}{
		{"RequeueImmediately", pair(flow.RequeueImmediately()), nil, outcome{Result: reconcile.Result{RequeueAfter: flow.Immediately}}},
		{"RequeueAfter", pair(flow.RequeueAfter(5 * time.Second)), nil, outcome{Result: after(5)}},
		{"RequeueAfter zero is immediate", pair(flow.RequeueAfter(0)), nil, outcome{Result: reconcile.Result{RequeueAfter: flow.Immediately}}},
		{"RequeueAfter negative is immediate", pair(flow.RequeueAfter(-time.Second)), nil, outcome{Result: reconcile.Result{RequeueAfter: flow.Immediately}}},
		{"NoRequeue", pair(flow.NoRequeue()), nil, outcome{}},
		{"Continue", pair(flow.Continue()), nil, outcome{}},
		{"ExitIf false", pair(flow.ExitIf(false)), nil, outcome{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, outcomeOf(tt.res, tt.err)); diff != "" {
				t.Errorf("outcome mismatch (-want +got):\n%s", diff)
			}
		})
	}

	if _, err := flow.Exit(); err != flow.ErrExit { //nolint:errorlint // Exit returns the sentinel itself
		t.Errorf("Exit() error = %v, want ErrExit", err)
	}
	if _, err := flow.ExitIf(true); err != flow.ErrExit { //nolint:errorlint // ExitIf returns the sentinel itself
		t.Errorf("ExitIf(true) error = %v, want ErrExit", err)
	}
	if res, err := flow.RequeueIfError(errA); !res.IsZero() || err != errA { //nolint:errorlint // returned as is
		t.Errorf("RequeueIfError(errA) = %v, %v; want zero, errA", res, err)
	}
	if res, err := flow.RequeueIfError(nil); !res.IsZero() || err != nil {
		t.Errorf("RequeueIfError(nil) = %v, %v; want zero, nil", res, err)
	}
	if _, err := flow.RequeueIfErrorAndWrap("sync service", nil); err != nil {
		t.Errorf("RequeueIfErrorAndWrap(nil) error = %v, want nil", err)
	}
	_, err := flow.RequeueIfErrorAndWrap("sync service", errA)
	if got, want := fmt.Sprint(err), "sync service: a failed"; got != want || !errors.Is(err, errA) {
		t.Errorf("RequeueIfErrorAndWrap(errA) = %q (Is errA: %v), want %q wrapping errA", got, errors.Is(err, errA), want)
	}
}

// pair packs a two-value return for use in a table.
func pair(res reconcile.Result, _ error) reconcile.Result { return res }

func TestImmediatelyIsSmallestPositiveDelay(t *testing.T) {
	if flow.Immediately <= 0 || flow.Immediately > time.Microsecond {
		t.Errorf("Immediately = %v, want a tiny positive duration", flow.Immediately)
	}
	res, _ := flow.RequeueImmediately()
	if res.Requeue { //nolint:staticcheck // checking that the deprecated field stays unset
		t.Errorf("RequeueImmediately set the deprecated Requeue field")
	}
}

func TestIgnoreExit(t *testing.T) {
	wrappedExit := fmt.Errorf("nothing to do: %w", flow.ErrExit)
	tests := []struct {
		name string
		err  error
		want []string
	}{
		{"nil", nil, nil},
		{"exit", flow.ErrExit, nil},
		{"wrapped exit", wrappedExit, nil},
		{"real error", errA, []string{"a failed"}},
		{"wrapped real error", fmt.Errorf("sync: %w", errA), []string{"sync: a failed"}},
		{"join of exits", errors.Join(flow.ErrExit, wrappedExit), nil},
		{"join of exit and real", errors.Join(flow.ErrExit, errA), []string{"a failed"}},
		{"join of exit and two real", errors.Join(errA, flow.ErrExit, errB), []string{"a failed", "b failed"}},
		{"nested joins", errors.Join(errors.Join(flow.ErrExit, errA), errors.Join(wrappedExit)), []string{"a failed"}},
		{"wrapped join", fmt.Errorf("step: %w", errors.Join(flow.ErrExit, errA)), []string{"a failed"}},
		{"multi-%w", fmt.Errorf("step: %w, %w", flow.ErrExit, errA), []string{"a failed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := flow.IgnoreExit(after(3), tt.err)
			if diff := cmp.Diff(after(3), res); diff != "" {
				t.Errorf("result changed (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, errLeaves(err)); diff != "" {
				t.Errorf("error mismatch (-want +got):\n%s", diff)
			}
			if errors.Is(err, flow.ErrExit) {
				t.Errorf("IgnoreExit kept ErrExit: %v", err)
			}
		})
	}

	t.Run("unchanged error keeps its identity", func(t *testing.T) {
		in := errors.Join(errA, errB)
		if _, err := flow.IgnoreExit(reconcile.Result{}, in); err != in { //nolint:errorlint // identity is the point
			t.Errorf("IgnoreExit rebuilt an error without ErrExit: %v", err)
		}
	})
}

func TestNeedsRequeueAndInterrupts(t *testing.T) {
	tests := []struct {
		name          string
		res           reconcile.Result
		err           error
		needsRequeue  bool
		interruptsSeq bool
	}{
		{"zero", reconcile.Result{}, nil, false, false},
		{"priority only", reconcile.Result{Priority: prio(3)}, nil, false, false},
		{"negative delay", reconcile.Result{RequeueAfter: -time.Second}, nil, false, false},
		{"requeue after", after(1), nil, true, true},
		{"immediately", reconcile.Result{RequeueAfter: flow.Immediately}, nil, true, true},
		{"deprecated requeue", legacy(0, nil), nil, true, true},
		{"error", reconcile.Result{}, errA, true, true},
		{"exit", reconcile.Result{}, flow.ErrExit, false, true},
		{"exit with requeue", after(1), flow.ErrExit, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := flow.NeedsRequeue(tt.res, tt.err); got != tt.needsRequeue {
				t.Errorf("NeedsRequeue = %v, want %v", got, tt.needsRequeue)
			}
			if got := flow.Interrupts(tt.res, tt.err); got != tt.interruptsSeq {
				t.Errorf("Interrupts = %v, want %v", got, tt.interruptsSeq)
			}
		})
	}
}

func TestFinal(t *testing.T) {
	tests := []struct {
		name string
		res  reconcile.Result
		err  error
		want outcome
	}{
		{"success", reconcile.Result{}, nil, outcome{}},
		{"requeue kept", after(2), nil, outcome{Result: after(2)}},
		{"exit removed", after(2), flow.ErrExit, outcome{Result: after(2)}},
		{"error clears requeue", legacy(time.Second, prio(4)), errA,
			outcome{Result: reconcile.Result{Priority: prio(4)}, Errs: []string{"a failed"}}},
		{"exit joined with error", after(2), errors.Join(flow.ErrExit, errB), outcome{Errs: []string{"b failed"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, outcomeOf(flow.Final(tt.res, tt.err))); diff != "" {
				t.Errorf("Final mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJoinResults(t *testing.T) {
	wrappedExit := fmt.Errorf("done early: %w", flow.ErrExit)
	tests := []struct {
		name     string
		outcomes []flow.Outcome
		want     outcome
		wantIs   []error
		notIs    []error
	}{
		{name: "none", want: outcome{}},
		{name: "single outcome unchanged", outcomes: []flow.Outcome{{Result: after(4), Err: errA}},
			want: outcome{Result: after(4), Errs: []string{"a failed"}}, wantIs: []error{errA}},
		{name: "nil join nil", outcomes: []flow.Outcome{{}, {}}, want: outcome{}},
		{name: "nil join err", outcomes: []flow.Outcome{{}, {Err: errA}},
			want: outcome{Errs: []string{"a failed"}}, wantIs: []error{errA}},
		{name: "err join nil", outcomes: []flow.Outcome{{Err: errA}, {}},
			want: outcome{Errs: []string{"a failed"}}, wantIs: []error{errA}},
		{name: "err1 join err2", outcomes: []flow.Outcome{{Err: errA}, {Err: errB}},
			want: outcome{Errs: []string{"a failed", "b failed"}}, wantIs: []error{errA, errB}},
		{name: "same error once", outcomes: []flow.Outcome{{Err: errA}, {Err: errA}},
			want: outcome{Errs: []string{"a failed"}}, wantIs: []error{errA}},
		{name: "joined errors flattened", outcomes: []flow.Outcome{{Err: errors.Join(errA, errB)}, {Err: errC}},
			want: outcome{Errs: []string{"a failed", "b failed", "c failed"}}, wantIs: []error{errA, errB, errC}},
		{name: "exit join nil", outcomes: []flow.Outcome{{Err: flow.ErrExit}, {}},
			want: outcome{Errs: []string{flow.ErrExit.Error()}}, wantIs: []error{flow.ErrExit}},
		{name: "exit join exit", outcomes: []flow.Outcome{{Err: flow.ErrExit}, {Err: flow.ErrExit}},
			want: outcome{Errs: []string{flow.ErrExit.Error()}}, wantIs: []error{flow.ErrExit}},
		{name: "exit join real error", outcomes: []flow.Outcome{{Err: flow.ErrExit}, {Err: errA}},
			want: outcome{Errs: []string{"a failed"}}, wantIs: []error{errA}, notIs: []error{flow.ErrExit}},
		{name: "real error join wrapped exit", outcomes: []flow.Outcome{{Err: errA}, {Err: wrappedExit}},
			want: outcome{Errs: []string{"a failed"}}, wantIs: []error{errA}, notIs: []error{flow.ErrExit}},
		{name: "two requeue afters keep the shortest", outcomes: []flow.Outcome{{Result: after(10)}, {Result: after(3)}, {Result: after(7)}},
			want: outcome{Result: after(3)}},
		{name: "zero delay ignored", outcomes: []flow.Outcome{{Result: after(10)}, {}},
			want: outcome{Result: after(10)}},
		{name: "negative delay ignored", outcomes: []flow.Outcome{{Result: reconcile.Result{RequeueAfter: -time.Second}}, {Result: after(5)}},
			want: outcome{Result: after(5)}},
		{name: "requeue OR-ed", outcomes: []flow.Outcome{{}, {Result: legacy(0, nil)}, {}},
			want: outcome{Result: legacy(0, nil)}},
		{name: "requeue and delay both kept", outcomes: []flow.Outcome{{Result: legacy(0, nil)}, {Result: after(2)}},
			want: outcome{Result: legacy(2*time.Second, nil)}},
		{name: "requeue kept next to an error", outcomes: []flow.Outcome{{Result: after(2)}, {Err: errA}},
			want: outcome{Result: after(2), Errs: []string{"a failed"}}, wantIs: []error{errA}},
		{name: "highest priority", outcomes: []flow.Outcome{{Result: reconcile.Result{Priority: prio(1)}}, {Result: reconcile.Result{Priority: prio(5)}}, {}},
			want: outcome{Result: reconcile.Result{Priority: prio(5)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := flow.JoinResults(tt.outcomes...)
			if diff := cmp.Diff(tt.want, outcomeOf(res, err)); diff != "" {
				t.Errorf("JoinResults mismatch (-want +got):\n%s", diff)
			}
			for _, target := range tt.wantIs {
				if !errors.Is(err, target) {
					t.Errorf("errors.Is(%v, %v) = false, want true", err, target)
				}
			}
			for _, target := range tt.notIs {
				if errors.Is(err, target) {
					t.Errorf("errors.Is(%v, %v) = true, want false", err, target)
				}
			}
		})
	}
}

func TestJoinResultsDoesNotNest(t *testing.T) {
	// Joining repeatedly must keep one flat errors.Join, not a chain of them.
	var res reconcile.Result
	var err error
	errs := []error{errA, errB, errC, errors.New("d failed"), errors.New("e failed")}
	for _, e := range errs {
		res, err = flow.JoinResults(flow.Outcome{Result: res, Err: err}, flow.Outcome{Err: e})
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("joined error %T has no Unwrap() []error", err)
	}
	if got := len(j.Unwrap()); got != len(errs) {
		t.Errorf("joined error holds %d errors at its top, want %d (it nests)", got, len(errs))
	}
	for _, e := range j.Unwrap() {
		if isJoin(e) {
			t.Errorf("joined error holds a nested join: %v", e)
		}
	}
}
