package bosun_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// TestReleaseWithoutFinalizerNamesTheOneItLets goes: a release that needs
// no finalizer any more (Finalizer empty, the old name in
// FormerFinalizers) lets go of a deleted Widget that another controller's
// finalizer still holds. What the Widget and its events say of that
// release must name the finalizer that went, the earlier release's, and
// not an empty one: `finalizer "" released` tells the person who reads
// it, waiting for the object to go, nothing of what happened.
func TestReleaseWithoutFinalizerNamesTheOneItLets(t *testing.T) {
	t.Parallel()
	const oldName, other = "test.bosun.dev/cleanup", "example.com/hold"
	f := newFixture(t)
	w := &testapi.Widget{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "held", Finalizers: []string{oldName, other}},
		Spec:       testapi.WidgetSpec{Value: 1},
	}
	if err := f.c.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	if err := f.c.Delete(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	f.run(&bosun.Reconciler[*testapi.Widget]{
		Name: "lets-go-named",
		Steps: []bosun.Step[*testapi.Widget]{bosun.NewStatusStep("value", func(_ context.Context, w *testapi.Widget) error {
			w.Status.Result = w.Spec.Value
			return nil
		})},
		Options: bosun.Options{FormerFinalizers: []string{oldName}},
	}, runOptions{})
	var ready *metav1.Condition
	bosuntest.Eventually(t, func(ctx context.Context) error {
		w, err := f.get(ctx, "held")
		if err != nil {
			return err
		}
		if len(w.Finalizers) != 1 || w.Finalizers[0] != other {
			return fmt.Errorf("finalizers %v, want only %s", w.Finalizers, other)
		}
		ready = conditions.Find(w.Status.Conditions, conditions.TypeReady)
		if ready == nil || ready.Reason != string(conditions.ReasonFinalizerReleased) {
			return fmt.Errorf("Ready %+v, want reason %s", ready, conditions.ReasonFinalizerReleased)
		}
		return nil
	})
	if strings.Contains(ready.Message, `""`) || !strings.Contains(ready.Message, oldName) {
		t.Errorf("Ready's message %q names no finalizer, or not %s, the one that went", ready.Message, oldName)
	}
	var notes []string
	bosuntest.Eventually(t, func(ctx context.Context) error {
		var err error
		notes, err = f.eventNotes(ctx, "held")
		if err != nil {
			return err
		}
		for _, n := range notes {
			if strings.Contains(n, "released") {
				return nil
			}
		}
		return fmt.Errorf("no event of the release among %q", notes)
	})
	for _, n := range notes {
		if strings.Contains(n, `finalizer ""`) {
			t.Errorf("event %q names an empty finalizer, not %s", n, oldName)
		}
	}
}

// TestTwoBuildsOnOneWidgetWriteTheirMarkOnce runs two bosun controllers of
// different builds over the same Widget, as two operators that share a
// kind's status (see the doc's "Status shared with other controllers"):
// their passes agree on the status, so once each has recorded its build,
// the Widget is converged, and the promise of
// bosun.dev/reconciled-by holds: one write per object per build, none on
// a converged object. Each resync pass of one must not write its build
// over the other's, each write bringing a pass of the other that writes
// its own back: a loop of writes, forever, on an object nothing changes.
func TestTwoBuildsOnOneWidgetWriteTheirMarkOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	created := f.create("shared", 4, 2, nil)
	// The oracle judges the versions the API server stores, not the calls:
	// a patch the server refuses on a conflict (the other build wrote
	// first) writes nothing and is retried on the next pass.
	vs := f.watchVersions("shared", created.ResourceVersion)
	var passes [2]atomic.Int64
	for i, build := range []string{"a", "b"} {
		f.run(&bosun.Reconciler[*testapi.Widget]{
			Name: "two-builds-" + build,
			Steps: []bosun.Step[*testapi.Widget]{bosun.NewStatusStep("value", func(_ context.Context, w *testapi.Widget) error {
				passes[i].Add(1)
				w.Status.Result = w.Spec.Value / w.Spec.Divisor
				return nil
			})},
			Resync:  time.Second,
			Options: bosun.Options{Build: build},
		}, runOptions{})
	}
	f.waitReady("shared", metav1.ConditionTrue, conditions.ReasonSucceeded)
	// Enough passes of each for a few resyncs past their first marks.
	bosuntest.Eventually(t, func(context.Context) error {
		for i := range passes {
			if n := passes[i].Load(); n < 6 {
				return fmt.Errorf("%d passes of controller %d", n, i)
			}
		}
		return nil
	}, bosuntest.Timeout(time.Minute))
	last, err := f.get(t.Context(), "shared")
	if err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(context.Context) error {
		if seen := vs.all(t); len(seen) == 0 || seen[len(seen)-1].ResourceVersion != last.ResourceVersion {
			return fmt.Errorf("the watch has not yet shown version %s", last.ResourceVersion)
		}
		return nil
	})
	var marks []string
	prev := ""
	for _, w := range vs.all(t) {
		if m := w.Annotations[bosun.AnnotationReconciledBy]; m != prev {
			marks = append(marks, m)
			prev = m
		}
	}
	if len(marks) > 2 {
		t.Errorf("%d stored changes of the Widget's mark in %d and %d passes, want one per build at most: the two builds write their mark over each other's: %q",
			len(marks), passes[0].Load(), passes[1].Load(), marks)
	}
	if want := "two-builds-a=a,two-builds-b=b"; prev != want {
		t.Errorf("the Widget's mark is %q, want %q", prev, want)
	}
}

// earlyOnce is a step that, once armed, ends one pass early (asks to come
// back soon, before the steps after it run) when it finds the Widget
// showing blip's failure: a step that polls, or waits for its cache to
// show its own write, in the retry after a failure.
type earlyOnce struct{ armed atomic.Bool }

func (*earlyOnce) Name() string { return "early-once" }

func (e *earlyOnce) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	if c := conditions.Find(req.Object.Status.Conditions, typeFetched); c != nil && c.Status == metav1.ConditionFalse && e.armed.CompareAndSwap(true, false) {
		return ctrl.Result{RequeueAfter: 200 * time.Millisecond}, nil
	}
	return ctrl.Result{}, nil
}

// TestReadyGraceHoldsThroughAnEarlyRetry fails the step of a Ready Widget
// once, under a grace of a minute, and has the retry end early, before the
// failing step runs again (a step before it polls), and the pass after
// that succeed: no pass failed for longer than the grace, so Ready must
// stay True in every version the API server stores. A pass that ends
// early without an error must not turn the held Ready False from the
// condition that shows the failure being retried: that is the flap the
// grace is there to prevent, and kstatus's and a GitOps tool's verdict
// with it.
func TestReadyGraceHoldsThroughAnEarlyRetry(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	b, e := &blip{}, &earlyOnce{}
	f.run(&bosun.Reconciler[*testapi.Widget]{
		Name:      "grace-early-retry",
		Finalizer: testFinalizer,
		Steps:     []bosun.Step[*testapi.Widget]{e, b},
		Options:   bosun.Options{ReadyGrace: time.Minute},
	}, runOptions{})
	f.create("w", 1, 1, nil)
	w := f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
	vs := f.watchVersions("w", w.ResourceVersion)
	e.armed.Store(true)
	b.left.Store(1)
	f.annotateWidget("w", "test.bosun.dev/poke", "1")
	bosuntest.Eventually(t, func(context.Context) error {
		if e.armed.Load() {
			return errors.New("the retry has not ended early yet")
		}
		all := vs.all(t)
		if len(all) == 0 || condOf(all[len(all)-1], typeFetched) != "True/Fetched" {
			return errors.New("no stored version after the retry has cleared the failure")
		}
		return nil
	})
	var seen []string
	flipped := false
	for _, v := range vs.all(t) {
		got := condOf(v, conditions.TypeReady)
		seen = append(seen, fmt.Sprintf("%s: Ready %s, Fetched %s", v.ResourceVersion, got, condOf(v, typeFetched)))
		flipped = flipped || got != "True/"+string(conditions.ReasonSucceeded)
	}
	if flipped {
		t.Errorf("Ready not True/%s in every stored version, for a failure that lasted less than the grace:\n%s",
			conditions.ReasonSucceeded, strings.Join(seen, "\n"))
	}
}
