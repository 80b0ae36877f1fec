package bosun_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// TestReconcileOnRequest: a new value of the requested-at annotation
// brings a pass, after which the status records the value; a pass with
// the value already recorded writes nothing.
func TestReconcileOnRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	j := newJournal()
	writes := &bosuntest.WriteCounter{}
	f.run(newReconciler("requested", j, false), runOptions{client: writes.Wrap})
	f.create("w", 6, 3, nil)
	f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)

	for _, value := range []string{"1732380000", "2026-11-23T19:00:00Z"} {
		before := j.count(j.do, "w")
		w, err := f.get(t.Context(), "w")
		if err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(w.DeepCopy())
		metav1.SetMetaDataAnnotation(&w.ObjectMeta, bosun.AnnotationReconcileRequestedAt, value)
		if err := f.c.Patch(t.Context(), w, patch); err != nil {
			t.Fatal(err)
		}
		bosuntest.Eventually(t, func(ctx context.Context) error {
			w, err := f.get(ctx, "w")
			if err != nil {
				return err
			}
			if got := w.Status.LastHandledReconcileAt; got != value {
				return fmt.Errorf("lastHandledReconcileAt = %q, want %q", got, value)
			}
			return nil
		})
		if n := j.count(j.do, "w"); n <= before {
			t.Errorf("the request %q brought no pass", value)
		}
	}

	// Once recorded, passes write nothing.
	writes.Reset()
	before := j.count(j.do, "w")
	f.touch("w", "again")
	bosuntest.Eventually(t, func(context.Context) error {
		if n := j.count(j.do, "w"); n <= before {
			return fmt.Errorf("not reconciled again yet")
		}
		return nil
	})
	if diff := cmp.Diff(map[string]int{}, widgetWrites(writes)); diff != "" {
		t.Errorf("writes of a pass with the request handled (-want +got):\n%s", diff)
	}
}

func TestReconcileRequestedPredicate(t *testing.T) {
	with := func(v string) *testapi.Widget {
		w := &testapi.Widget{}
		if v != "" {
			metav1.SetMetaDataAnnotation(&w.ObjectMeta, bosun.AnnotationReconcileRequestedAt, v)
		}
		return w
	}
	p := bosun.ReconcileRequested()
	got := map[string]bool{
		"new value":  p.Update(event.UpdateEvent{ObjectOld: with("1"), ObjectNew: with("2")}),
		"first":      p.Update(event.UpdateEvent{ObjectOld: with(""), ObjectNew: with("1")}),
		"same value": p.Update(event.UpdateEvent{ObjectOld: with("1"), ObjectNew: with("1")}),
		"none":       p.Update(event.UpdateEvent{ObjectOld: with(""), ObjectNew: with("")}),
		"create":     p.Create(event.CreateEvent{Object: with("1")}),
	}
	want := map[string]bool{"new value": true, "first": true}
	for k := range got {
		if !got[k] {
			delete(got, k)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("passes (-want +got):\n%s", diff)
	}
}
