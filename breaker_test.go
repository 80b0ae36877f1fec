package bosun_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// countingCleanup is a step whose Cleanup succeeds, as the delete of an
// external resource does, and counts its calls by Widget name.
type countingCleanup struct{ calls *callCount }

// callCount counts calls.
type callCount struct{ total atomic.Int32 }

func (countingCleanup) Do(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}

func (c countingCleanup) Cleanup(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	c.calls.total.Add(1)
	return ctrl.Result{}, nil
}

// waitHeld waits until the Widget shows DeletionBlocked True, wants it
// and Ready False with ReasonDeletionHeld (one status write sets both),
// and returns DeletionBlocked.
func (f *fixture) waitHeld(name string) metav1.Condition {
	f.t.Helper()
	c := f.waitDeletionBlocked(name)
	if c.Reason != string(conditions.ReasonDeletionHeld) {
		f.t.Fatalf("%s: DeletionBlocked %s (%s), want %s", name, c.Reason, c.Message, conditions.ReasonDeletionHeld)
	}
	w, err := f.get(f.t.Context(), name)
	if err != nil {
		f.t.Fatal(err)
	}
	if r := conditions.Find(w.Status.Conditions, conditions.TypeReady); r == nil || r.Status != metav1.ConditionFalse || r.Reason != string(conditions.ReasonDeletionHeld) {
		f.t.Errorf("%s: Ready is %v, want False %s", name, r, conditions.ReasonDeletionHeld)
	}
	return c
}

// annotate sets one annotation on the Widget name.
func (f *fixture) annotate(name, key, value string) {
	f.t.Helper()
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}}
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, key, value)
	if err := f.c.Patch(f.t.Context(), w, client.RawPatch("application/merge-patch+json", patch)); err != nil {
		f.t.Fatal(err)
	}
}

// TestMassDeletionHeldWhileTheCRDIsDeleted deletes the CRD of Widgets
// whose reconciler cleans up, on a control plane of the test's own: the
// API server deletes every Widget, and the breaker holds each cleanup,
// deleting nothing, with DeletionBlocked and Ready saying why, one event
// and the metric per Widget, and no pass writing again. Then an
// administrator lets one cleanup go on by the annotation, releases one
// without cleanup, and lets the last go by the operator's switch; the CRD
// goes once they are gone.
func TestMassDeletionHeldWhileTheCRDIsDeleted(t *testing.T) {
	t.Parallel()
	opts, err := testapi.ControlPlaneOptions()
	if err != nil {
		t.Fatal(err)
	}
	cp := bosuntest.Start(t, opts)
	f := &fixture{t: t, cp: cp, c: cp.Client, ns: bosuntest.Namespace(t, cp.Client)}
	calls := &callCount{}
	reg := prometheus.NewRegistry()
	reconciler := func() *bosun.Reconciler[*testapi.Widget] {
		return &bosun.Reconciler[*testapi.Widget]{
			Name: "crd", Finalizer: testFinalizer, Steps: []bosun.Step[*testapi.Widget]{countingCleanup{calls: calls}},
			Options: bosun.Options{Metrics: reg},
		}
	}
	names := []string{"allowed", "orphaned", "switched"}

	t.Run("held", func(t *testing.T) {
		f := &fixture{t: t, cp: cp, c: cp.Client, ns: f.ns}
		writes := &bosuntest.WriteCounter{}
		f.run(reconciler(), runOptions{client: func(c client.Client) client.WithWatch { return writes.Wrap(c) }})
		for _, name := range names {
			f.create(name, 1, 1, nil)
			f.waitReady(name, metav1.ConditionTrue, conditions.ReasonSucceeded)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "widgets.test.bosun.dev"}}
		if err := f.c.Delete(t.Context(), crd); err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			c := f.waitHeld(name)
			for _, want := range []string{"CustomResourceDefinition widgets.test.bosun.dev is being deleted", bosun.AnnotationAllowMassDeletion + "=true", bosun.AnnotationReleaseFinalizer + "=orphan"} {
				if !strings.Contains(c.Message, want) {
					t.Errorf("%s: DeletionBlocked says %q, which lacks %q", name, c.Message, want)
				}
			}
			f.waitEvent(name, conditions.ReasonDeletionHeld)
		}
		if n := calls.total.Load(); n != 0 {
			t.Errorf("%d cleanups ran while the CRD was being deleted, want 0", n)
		}
		if got := metricSum(t, reg, bosun.MetricDeletionHeld); got != 3 {
			t.Errorf("%s = %v, want 3", bosun.MetricDeletionHeld, got)
		}
		// A held object's passes write nothing more: a touch brings one
		// that finds it held as before.
		before := len(writes.Writes())
		f.annotate("switched", "test.bosun.dev/touch", "1")
		bosuntest.Eventually(t, func(ctx context.Context) error {
			w, err := f.get(ctx, "switched")
			if err != nil {
				return err
			}
			if w.Annotations["test.bosun.dev/touch"] != "1" {
				return errors.New("not touched yet")
			}
			return nil
		})
		f.annotate("allowed", bosun.AnnotationAllowMassDeletion, "true")
		f.waitGone("allowed")
		if n := calls.total.Load(); n != 1 {
			t.Errorf("%d cleanups after one was allowed, want 1", n)
		}
		f.annotate("orphaned", bosun.AnnotationReleaseFinalizer, "orphan")
		f.waitGone("orphaned")
		if n := calls.total.Load(); n != 1 {
			t.Errorf("%d cleanups after one was released without cleanup, want 1", n)
		}
		for _, w := range writes.Writes()[before:] {
			if w.Name == "switched" {
				t.Errorf("held Widget written after it was held: %+v", w)
			}
		}
	})

	t.Run("switch", func(t *testing.T) {
		f := &fixture{t: t, cp: cp, c: cp.Client, ns: f.ns}
		// The operator's switch, as --allow-mass-deletion sets it.
		f.run(reconciler(), runOptions{manager: func(mgr ctrl.Manager) { bosun.ObservationOf(mgr).AllowMassDeletion = true }})
		f.waitGone("switched")
		if n := calls.total.Load(); n != 2 {
			t.Errorf("%d cleanups after the switch, want 2", n)
		}
		bosuntest.Eventually(t, func(ctx context.Context) error {
			err := f.c.Get(ctx, client.ObjectKey{Name: "widgets.test.bosun.dev"}, &apiextensionsv1.CustomResourceDefinition{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("the CRD: %w, want it gone", err)
		})
	})
}
