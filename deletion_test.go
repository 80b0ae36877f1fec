package bosun_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// refusingCleanup is a step whose Cleanup fails as an external system that
// refuses the delete would, and counts its calls.
type refusingCleanup struct{ calls *atomic.Int32 }

func (refusingCleanup) Do(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}

func (c refusingCleanup) Cleanup(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	c.calls.Add(1)
	return ctrl.Result{}, conditions.Warningf("ExternalRefused", "the external system refuses the delete")
}

// waitDeletionBlocked waits until the Widget shows DeletionBlocked True and
// returns the condition.
func (f *fixture) waitDeletionBlocked(name string) metav1.Condition {
	f.t.Helper()
	var got metav1.Condition
	bosuntest.Eventually(f.t, func(ctx context.Context) error {
		w, err := f.get(ctx, name)
		if err != nil {
			return err
		}
		c := conditions.Find(w.Status.Conditions, conditions.TypeDeletionBlocked)
		if c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("DeletionBlocked is %v", c)
		}
		got = *c
		return nil
	})
	return got
}

// TestDeletionDeadline deletes Widgets whose cleanup the external system
// refuses: past the deadline each shows DeletionBlocked with what blocks it
// and since when, with one event and the metric, and keeps its finalizer
// until an administrator releases it with the annotation, which an event
// records.
func TestDeletionDeadline(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	reg := prometheus.NewRegistry()
	calls := &atomic.Int32{}
	r := &bosun.Reconciler[*testapi.Widget]{
		Name:      "deadline",
		Finalizer: testFinalizer,
		Steps:     []bosun.Step[*testapi.Widget]{refusingCleanup{calls: calls}},
		Options:   bosun.Options{DeletionDeadline: 2 * time.Second, Metrics: reg},
	}
	f.run(r, runOptions{})
	ctx := t.Context()

	for _, name := range []string{"orphaned", "retried", "bogus"} {
		f.create(name, 1, 1, nil)
		w := f.waitReady(name, metav1.ConditionTrue, conditions.ReasonSucceeded)
		if err := f.c.Delete(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"orphaned", "retried", "bogus"} {
		c := f.waitDeletionBlocked(name)
		for _, want := range []string{"refusingCleanup", "refuses the delete", "of the deletion (asked at ", "bosun.dev/release-finalizer=orphan"} {
			if !strings.Contains(c.Message, want) {
				t.Errorf("%s: DeletionBlocked message %q lacks %q", name, c.Message, want)
			}
		}
		if c.Reason != "ExternalRefused" {
			t.Errorf("%s: DeletionBlocked reason %q, want the cleanup error's ExternalRefused", name, c.Reason)
		}
		f.waitEvent(name, conditions.ReasonDeletionBlocked)
	}
	if got := metricSum(t, reg, bosun.MetricDeletionBlocked); got != 3 {
		t.Errorf("%s = %v, want 3", bosun.MetricDeletionBlocked, got)
	}
	// Still there: blocked deletions are never released on their own.
	for _, name := range []string{"orphaned", "retried", "bogus"} {
		if _, err := f.get(ctx, name); err != nil {
			t.Errorf("%s: %v, want it still held by the finalizer", name, err)
		}
	}

	annotate := func(name, value string) {
		t.Helper()
		w, err := f.get(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(w.DeepCopy())
		w.Annotations = map[string]string{bosun.AnnotationReleaseFinalizer: value}
		if err := f.c.Patch(ctx, w, patch); err != nil {
			t.Fatal(err)
		}
	}
	annotate("bogus", "yes please")
	f.waitReady("bogus", metav1.ConditionFalse, "InvalidReleaseFinalizer")

	before := calls.Load()
	annotate("orphaned", "orphan")
	f.waitGone("orphaned")
	f.waitEvent("orphaned", conditions.ReasonFinalizerReleased)

	annotate("retried", "true")
	f.waitGone("retried")
	f.waitEvent("retried", conditions.ReasonFinalizerReleased)
	if calls.Load() == before {
		t.Error("release-finalizer=true released the finalizer without a last cleanup")
	}
	events, err := f.eventNotes(ctx, "retried")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(events, "\n"), "had not finished") {
		t.Errorf("events of retried %q, want the release to say the last cleanup had not finished", events)
	}
}

// metricSum returns the sum of the series of the counter named name in
// reg.
func metricSum(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range families {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// eventNotes returns the notes of the events recorded about the Widget.
func (f *fixture) eventNotes(ctx context.Context, widget string) ([]string, error) {
	var list eventsv1.EventList
	if err := f.c.List(ctx, &list, client.InNamespace(f.ns)); err != nil {
		return nil, err
	}
	var notes []string
	for _, e := range list.Items {
		if e.Regarding.Name == widget {
			notes = append(notes, e.Note)
		}
	}
	return notes, nil
}
