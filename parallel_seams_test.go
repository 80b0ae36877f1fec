package bosun_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// The seams of Pass.UpdateConditions with what else changes the object
// while the steps of a ParallelJoin run.

// partCond is the condition partStep owns.
const partCond = "PartReady"

// partStep owns partCond and sets it True through Pass.UpdateConditions,
// telling the test when it is about to (trying) and when it has (set).
// after, when not nil, is waited for first; hold, when not nil, is
// called inside the change, with the pass's lock held.
type partStep struct {
	after       chan struct{}
	trying, set chan struct{}
	hold        func()
}

func (partStep) Name() string         { return "part" }
func (partStep) Conditions() []string { return []string{partCond} }

func (s partStep) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	if s.after != nil && !await(s.after, time.Minute) {
		return ctrl.Result{}, errors.New("the other step never started")
	}
	close(s.trying)
	req.UpdateConditions(func(conds *[]metav1.Condition) {
		if s.hold != nil {
			s.hold()
		}
		conditions.Set(conds, metav1.Condition{Type: partCond, Status: metav1.ConditionTrue, Reason: "Done", Message: "part done"}, metav1.Now())
	})
	close(s.set)
	return ctrl.Result{}, nil
}

// awhile is how long a step of these tests waits for the other step of
// its ParallelJoin to do something that a correct engine makes it wait
// for instead: the test then goes on, and takes that long.
const awhile = time.Second

// await waits for ch to close, for at most d; it reports whether it did.
func await(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// TestSeamReviewParallelStatusStepKeepsOtherConditions: a status step
// (NewStatusStep) whose function fails has its status edits put back, so
// that a half-computed status is never saved. In a ParallelJoin, the
// condition another step set meanwhile through Pass.UpdateConditions is
// not one of those edits: the object must not report that step's work
// as not done (Unknown) when it was.
func TestSeamReviewParallelStatusStepKeepsOtherConditions(t *testing.T) {
	part := partStep{after: make(chan struct{}), trying: make(chan struct{}), set: make(chan struct{})}
	status := bosun.NewStatusStep("status", func(_ context.Context, w *testapi.Widget) error {
		close(part.after)
		w.Status.Result = 7
		// The other step sets its condition while this one computes,
		// unless the engine holds it back until this one is done.
		if !await(part.trying, time.Minute) {
			return errors.New("the other step never ran")
		}
		await(part.set, awhile)
		return conditions.Warningf("StatusFailed", "status not computed")
	})
	cl := fakeClient(t, nil, fakeWidget("w", nil, false, nil))
	r := &bosun.Reconciler[*testapi.Widget]{Name: "parallel-status", Client: cl, Steps: []widgetStep{bosun.ParallelJoin[*testapi.Widget](status, part)}}
	_, w, err := reconcileWidget(t, r, cl, "w")
	if err == nil {
		t.Fatal("the pass succeeded; want the status step's error")
	}
	if w.Status.Result != 0 {
		t.Errorf("status.result = %d, want 0: the failed status step's edit is saved", w.Status.Result)
	}
	c := conditions.Find(w.Status.Conditions, partCond)
	if c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("%s = %+v, want True: the failed status step put back the conditions, and undid the one the other step of the ParallelJoin set (Ready %s)", partCond, c, readyOf(w))
	}
}

// TestSeamReviewParallelCommitKeepsOtherConditions: a step that commits
// its change of the metadata (Pass.Commit) in one branch of a ParallelJoin
// while another sets its condition through Pass.UpdateConditions: the
// condition is the other step's, and the commit must not lose it,
// whatever the commit's outcome.
func TestSeamReviewParallelCommitKeepsOtherConditions(t *testing.T) {
	inChange, committed := make(chan struct{}), make(chan struct{})
	part := partStep{trying: make(chan struct{}), set: make(chan struct{}), hold: func() {
		close(inChange)
		// The commit lands while the condition is set, unless the
		// engine holds it back until the condition is in.
		await(committed, awhile)
	}}
	commit := bosun.NewStep("commit", func(ctx context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
		defer close(committed)
		if !await(inChange, time.Minute) {
			return ctrl.Result{}, errors.New("the other step never set its condition")
		}
		metav1.SetMetaDataLabel(&req.Object.ObjectMeta, "test.bosun.dev/committed", "yes")
		return ctrl.Result{}, req.Commit(ctx)
	})
	cl := fakeClient(t, nil, fakeWidget("w", nil, false, nil))
	r := &bosun.Reconciler[*testapi.Widget]{Name: "parallel-commit", Client: cl, Steps: []widgetStep{bosun.ParallelJoin[*testapi.Widget](commit, part)}}
	_, w, _ := reconcileWidget(t, r, cl, "w")
	c := conditions.Find(w.Status.Conditions, partCond)
	if c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("%s = %+v, want True: the other step's Commit in the ParallelJoin lost the condition it set (Ready %s)", partCond, c, readyOf(w))
	}
}

// TestSeamReviewParallelStatusStepsKeepEachOthersStatus: two status steps
// in a ParallelJoin, each computing its own status field, one of which
// fails: the one that succeeded keeps its field, and the failed one's edit
// goes. Each step waits a while for the other to be inside its function
// (a correct engine runs them one at a time, in either order: the wait
// then ends with nothing); without the lock, the good step writes its
// field while the failing one computes, before the failed one puts its
// status back.
func TestSeamReviewParallelStatusStepsKeepEachOthersStatus(t *testing.T) {
	started, computed := make(chan struct{}), make(chan struct{})
	good := bosun.NewStatusStep("result", func(_ context.Context, w *testapi.Widget) error {
		defer close(computed)
		await(started, awhile)
		w.Status.Result = 2
		return nil
	})
	bad := bosun.NewStatusStep("pruned", func(_ context.Context, w *testapi.Widget) error {
		close(started)
		w.Status.Pruned = "half"
		await(computed, awhile)
		return conditions.Warningf("StatusFailed", "status not computed")
	})
	cl := fakeClient(t, nil, fakeWidget("w", nil, false, nil))
	r := &bosun.Reconciler[*testapi.Widget]{Name: "parallel-statuses", Client: cl, Steps: []widgetStep{bosun.ParallelJoin[*testapi.Widget](bad, good)}}
	_, w, err := reconcileWidget(t, r, cl, "w")
	if err == nil {
		t.Fatal("the pass succeeded; want the failed status step's error")
	}
	got := testapi.WidgetStatus{Result: w.Status.Result, Pruned: w.Status.Pruned}
	if diff := cmp.Diff(testapi.WidgetStatus{Result: 2}, got); diff != "" {
		t.Errorf("status fields (-want +got): the failed status step put back the other one's field\n%s", diff)
	}
}

// failingPart owns cond and sets it True, or, once fail is set, fails
// with an error that names cond (a conditions.Error with its Type), as
// a ref step does when it cannot read what its reference names.
type failingPart struct {
	cond string
	fail *bool
}

func (s failingPart) Name() string         { return "set" + s.cond }
func (s failingPart) Conditions() []string { return []string{s.cond} }

func (s failingPart) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	if *s.fail {
		return ctrl.Result{}, &conditions.Error{Type: s.cond, Reason: "ReadFailed", Err: errors.New(s.cond + ": read failed")}
	}
	req.UpdateConditions(func(conds *[]metav1.Condition) {
		conditions.Set(conds, metav1.Condition{Type: s.cond, Status: metav1.ConditionTrue, Reason: "Done"}, metav1.Now())
	})
	return ctrl.Result{}, nil
}

// TestSeamReviewEveryFailedBranchShowsInItsCondition: the steps of a
// ParallelJoin (or a Join) that each report a failure in a condition of
// their own (a conditions.Error naming it) all fail in one pass: each
// condition says its step failed. None may go on saying True, as the
// last pass left it, while its step's last run failed.
func TestSeamReviewEveryFailedBranchShowsInItsCondition(t *testing.T) {
	for _, join := range []struct {
		name string
		make func(...widgetStep) *bosun.Group[*testapi.Widget]
	}{
		{"ParallelJoin", bosun.ParallelJoin[*testapi.Widget]},
		{"Join", bosun.Join[*testapi.Widget]},
	} {
		t.Run(join.name, func(t *testing.T) {
			fail := false
			cl := fakeClient(t, nil, fakeWidget("w", nil, false, nil))
			r := &bosun.Reconciler[*testapi.Widget]{Name: "joined-errors", Client: cl, Steps: []widgetStep{
				join.make(failingPart{cond: "AReady", fail: &fail}, failingPart{cond: "BReady", fail: &fail}),
			}}
			if _, w, err := reconcileWidget(t, r, cl, "w"); err != nil || !strings.HasPrefix(readyOf(w), "True/") {
				t.Fatalf("first pass: %v, Ready %s; want it Ready", err, readyOf(w))
			}
			fail = true
			_, w, err := reconcileWidget(t, r, cl, "w")
			if err == nil {
				t.Fatal("second pass succeeded; want both steps' errors")
			}
			for _, typ := range []string{"AReady", "BReady"} {
				if c := conditions.Find(w.Status.Conditions, typ); c == nil || c.Status != metav1.ConditionFalse || c.Reason != "ReadFailed" {
					t.Errorf("%s = %+v, want False/ReadFailed: its step failed in the last pass (Ready %s)", typ, c, readyOf(w))
				}
			}
		})
	}
}

// TestSeamReviewParallelStatusStepPanics: a status step that panics in a
// ParallelJoin while another step waits to set its condition: the panic
// is the step's error, its edit is put back, the lock on the status is
// let go (the other step's condition is set), and the pass ends.
func TestSeamReviewParallelStatusStepPanics(t *testing.T) {
	part := partStep{after: make(chan struct{}), trying: make(chan struct{}), set: make(chan struct{})}
	status := bosun.NewStatusStep("status", func(_ context.Context, w *testapi.Widget) error {
		close(part.after)
		w.Status.Result = 7
		await(part.trying, time.Minute)
		panic("status step broke")
	})
	cl := fakeClient(t, nil, fakeWidget("w", nil, false, nil))
	r := &bosun.Reconciler[*testapi.Widget]{Name: "parallel-panic", Client: cl, Steps: []widgetStep{bosun.ParallelJoin[*testapi.Widget](status, part)}}
	key := client.ObjectKey{Namespace: "ns", Name: "w"}
	done := make(chan error, 1)
	go func() {
		_, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: key})
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the pass did not end within a minute of a status step's panic")
	}
	if reason, _, _ := conditions.FromError(err); reason != conditions.ReasonPanic {
		t.Errorf("error %v has reason %q, want %q", err, reason, conditions.ReasonPanic)
	}
	w := &testapi.Widget{}
	if err := cl.Get(t.Context(), key, w); err != nil {
		t.Fatal(err)
	}
	if w.Status.Result != 0 {
		t.Errorf("status.result = %d, want 0: the panicking status step's edit is saved", w.Status.Result)
	}
	if c := conditions.Find(w.Status.Conditions, partCond); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("%s = %+v, want True (Ready %s)", partCond, c, readyOf(w))
	}
}
