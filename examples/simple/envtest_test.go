package simple

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	simplev1 "github.com/bosunkit/bosun/examples/simple/api/v1alpha1"
)

var (
	readyTrue   = condition{metav1.ConditionTrue, conditions.ReasonSucceeded}
	divisorOK   = condition{metav1.ConditionTrue, simplev1.ReasonNonZeroDivisor}
	zeroDivisor = condition{metav1.ConditionFalse, simplev1.ReasonZeroDivisor}
)

// results returns the quotient and remainder of s, nil when absent.
func results(s *simplev1.Simple) []*int64 { return []*int64{s.Status.Quotient, s.Status.Remainder} }

// TestDivisionLifecycle follows one Simple from a valid division to a zero
// divisor and back.
func TestDivisionLifecycle(t *testing.T) {
	cp := runController(t, nil)
	ctx := t.Context()
	ns := bosuntest.Namespace(t, cp.Client)
	key := createSimple(t, cp.Client, ns, "div", 17, 5)

	s := waitStatus(t, cp.Client, key, readyTrue, divisorOK)
	if diff := cmp.Diff([]*int64{ptr(3), ptr(2)}, results(s)); diff != "" {
		t.Errorf("quotient, remainder (-want +got):\n%s", diff)
	}
	if len(s.Finalizers) != 0 {
		t.Errorf("finalizers = %v, want none: no step cleans up", s.Finalizers)
	}

	// A zero divisor: DivisorValid and, through the summary, Ready are False
	// with reason ZeroDivisor; the old results are gone.
	base := s.DeepCopy()
	s.Spec.Divisor = 0
	if err := cp.Client.Patch(ctx, s, client.MergeFrom(base)); err != nil {
		t.Fatalf("patch simple: %v", err)
	}
	s = waitStatus(t, cp.Client, key, condition{metav1.ConditionFalse, simplev1.ReasonZeroDivisor}, zeroDivisor)
	ready := conditions.Find(s.Status.Conditions, conditions.TypeReady)
	divisor := conditions.Find(s.Status.Conditions, simplev1.ConditionDivisorValid)
	if ready.Message != divisor.Message {
		t.Errorf("Ready message %q, want DivisorValid's %q", ready.Message, divisor.Message)
	}
	if diff := cmp.Diff([]*int64{nil, nil}, results(s)); diff != "" {
		t.Errorf("quotient, remainder with a zero divisor (-want +got):\n%s", diff)
	}

	// Fixing the divisor recovers.
	base = s.DeepCopy()
	s.Spec.Dividend, s.Spec.Divisor = -7, 2
	if err := cp.Client.Patch(ctx, s, client.MergeFrom(base)); err != nil {
		t.Fatalf("patch simple: %v", err)
	}
	s = waitStatus(t, cp.Client, key, readyTrue, divisorOK)
	if diff := cmp.Diff([]*int64{ptr(-3), ptr(-1)}, results(s)); diff != "" {
		t.Errorf("quotient, remainder (-want +got):\n%s", diff)
	}
	if len(s.Finalizers) != 0 {
		t.Errorf("finalizers = %v, want none", s.Finalizers)
	}
}

// TestZeroDivisorSettles checks that a zero divisor is neither retried nor
// logged as an error: once the condition is written, nothing reconciles the
// object until it changes.
func TestZeroDivisorSettles(t *testing.T) {
	cp := shared.ControlPlane(t)
	counter := &bosuntest.ReconcileCounter{}
	logs := &bosuntest.LogRecorder{}
	bosuntest.RunManager(t, cp, func(mgr ctrl.Manager) error {
		mgr = bosuntest.ManagerWithLogger(mgr, logs.Wrap(mgr.GetLogger()))
		r := NewReconciler()
		r.Client = mgr.GetClient()
		r.APIReader = mgr.GetAPIReader()
		if err := r.Validate(); err != nil {
			return err
		}
		// Registered directly with controller-runtime, so that the counter
		// sits between the controller and the engine.
		return ctrl.NewControllerManagedBy(mgr).For(&simplev1.Simple{}).Named(ControllerName).Complete(counter.Wrap(r))
	})
	ns := bosuntest.Namespace(t, cp.Client)
	key := createSimple(t, cp.Client, ns, "zero", 7, 0)
	waitStatus(t, cp.Client, key, condition{metav1.ConditionFalse, simplev1.ReasonZeroDivisor}, zeroDivisor)

	// The controller is registered directly with controller-runtime, so
	// the event of the status write brings one more reconcile: the count
	// begins once it has returned, and runs over a window measured in
	// time and in the reconciles of another Simple.
	bosuntest.Eventually(t, func(context.Context) error {
		if n := counter.Count(key); n < 2 {
			return fmt.Errorf("%d reconciles, want the one of the creation and the one of the status write", n)
		}
		return nil
	})
	clock := createSimple(t, cp.Client, ns, "clock", 7, 1)
	waitStatus(t, cp.Client, clock, readyTrue, divisorOK)
	before := counter.Count(key)
	const span, ticks = 3 * time.Second, 15
	window(t, cp.Client, counter, clock, span, ticks)
	if n := counter.Count(key) - before; n > 0 {
		t.Errorf("%d reconciles in %s and %d reconciles of another Simple after the zero divisor was reported, want 0", n, span, ticks)
	}
	for _, c := range counter.Calls() {
		if c.Request.NamespacedName == key && (c.Err != nil || !c.Result.IsZero()) {
			t.Errorf("reconcile returned %+v, %v; want a zero result and no error", c.Result, c.Err)
		}
	}
	if errs := logs.Errors(); len(errs) > 0 {
		t.Errorf("error logs: %v", errs)
	}
}

// TestConvergedReconcileWritesNothing checks the writes of the running
// controller for a new Simple (one status patch, nothing else, no finalizer),
// then reconciles the converged Simple twice more with a reconciler of its own
// that reads from the API server directly (no cache that could lag) and
// counts its writes: there must be none, and the resourceVersion must stay.
func TestConvergedReconcileWritesNothing(t *testing.T) {
	writes := &bosuntest.WriteCounter{}
	cp, passes := runWatched(t, writes.Wrap)
	ctx := t.Context()
	ns := bosuntest.Namespace(t, cp.Client)
	key := createSimple(t, cp.Client, ns, "still", 100, 7)
	if diff := cmp.Diff([]*int64{ptr(14), ptr(2)}, results(waitStatus(t, cp.Client, key, readyTrue, divisorOK))); diff != "" {
		t.Errorf("quotient, remainder (-want +got):\n%s", diff)
	}
	// The pass of a change made now comes after those of every earlier
	// event of the Simple: once it has ended, the passes the controller's
	// own writes could bring are over too, and this one found nothing to
	// write either.
	passes.Touch(t, cp.Client, &simplev1.Simple{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}, "settled")
	before := &simplev1.Simple{}
	if err := cp.Client.Get(ctx, key, before); err != nil {
		t.Fatal(err)
	}
	ops := map[string]int{}
	for _, w := range writes.Writes() {
		if w.Namespace == ns && w.Kind == "Simple" {
			ops[w.Op()]++
		}
	}
	if diff := cmp.Diff(map[string]int{"patch status Simple": 1}, ops); diff != "" {
		t.Errorf("writes of the controller (-want +got):\n%s", diff)
	}

	direct, err := client.New(cp.Config, client.Options{Scheme: cp.Scheme})
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	counter := &bosuntest.WriteCounter{}
	r := NewReconciler()
	r.Client = counter.Wrap(direct)
	for pass := 1; pass <= 2; pass++ {
		res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key})
		if err != nil || !res.IsZero() {
			t.Fatalf("pass %d: Reconcile = %+v, %v; want a zero result and no error", pass, res, err)
		}
		if w := counter.Writes(); len(w) > 0 {
			t.Errorf("pass %d: writes %v, want none", pass, w)
		}
	}
	after := &simplev1.Simple{}
	if err := cp.Client.Get(ctx, key, after); err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before.ResourceVersion {
		t.Errorf("resourceVersion %s, want %s unchanged", after.ResourceVersion, before.ResourceVersion)
	}
}

// TestSamplesBecomeReady creates the demo's samples and waits until each is
// Ready with the quotient Divide gives.
func TestSamplesBecomeReady(t *testing.T) {
	cp := runController(t, nil)
	ns := bosuntest.Namespace(t, cp.Client)
	for _, obj := range Samples(ns) {
		if err := cp.Client.Create(t.Context(), obj); err != nil {
			t.Fatalf("create sample %s: %v", obj.GetName(), err)
		}
	}
	for _, obj := range Samples(ns) {
		want := obj.(*simplev1.Simple).Spec
		q, r, err := Divide(want.Dividend, want.Divisor)
		if err != nil {
			t.Fatal(err)
		}
		s := waitStatus(t, cp.Client, client.ObjectKeyFromObject(obj), readyTrue, divisorOK)
		if diff := cmp.Diff([]*int64{&q, &r}, results(s)); diff != "" {
			t.Errorf("sample %s: quotient, remainder (-want +got):\n%s", s.Name, diff)
		}
	}
}
