package bosun_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
		if ready == nil || ready.Reason != conditions.ReasonFinalizerReleased {
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
	f.create("shared", 4, 2, nil)
	writes := &bosuntest.WriteCounter{}
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
		}, runOptions{client: writes.Wrap})
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
	var marks []string
	for _, w := range writes.Writes() {
		if w.Name == "shared" && w.Op() == "patch Widget" {
			marks = append(marks, w.String())
		}
	}
	if len(marks) > 2 {
		t.Errorf("%d writes of the Widget's metadata in %d and %d passes, want one per build at most: the two builds write their mark over each other's",
			len(marks), passes[0].Load(), passes[1].Load())
	}
}
