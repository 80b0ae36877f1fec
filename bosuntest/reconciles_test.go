package bosuntest_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/bosuntest"
)

func TestReconcileCounter(t *testing.T) {
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	errFirst := errors.New("first visit fails")
	var counter bosuntest.ReconcileCounter
	var mu sync.Mutex
	failed := map[types.NamespacedName]bool{}
	// The reconciler fails the first visit of "flaky" and does nothing
	// else, so the controller settles after one visit per change.
	r := reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		if req.Name == "flaky" && !failed[req.NamespacedName] {
			failed[req.NamespacedName] = true
			return reconcile.Result{}, errFirst
		}
		return reconcile.Result{}, nil
	})
	bosuntest.RunManager(t, cp, func(mgr ctrl.Manager) error {
		return ctrl.NewControllerManagedBy(mgr).
			Named("counted").
			For(&corev1.ConfigMap{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
				return o.GetNamespace() == ns
			}))).
			Complete(counter.Wrap(r))
	})

	steady := client.ObjectKey{Namespace: ns, Name: "steady"}
	flaky := client.ObjectKey{Namespace: ns, Name: "flaky"}
	for _, key := range []client.ObjectKey{steady, flaky} {
		if err := cp.Client.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}); err != nil {
			t.Fatalf("creating %s: %v", key, err)
		}
	}
	wantAtLeast := func(key client.ObjectKey, n int) {
		t.Helper()
		bosuntest.Eventually(t, func(context.Context) error {
			if got := counter.Count(key); got < n {
				return fmt.Errorf("%s reconciled %d times, want at least %d", key, got, n)
			}
			return nil
		})
	}
	wantAtLeast(steady, 1)
	wantAtLeast(flaky, 2) // the failure is retried

	// Settled: a Window of a second and 5 passes of a third ConfigMap,
	// ticked by Window, goes by without a call of the two.
	mark := time.Now()
	before := counter.Counts()
	clock := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "clock"}}
	if err := cp.Client.Create(t.Context(), clock.DeepCopy()); err != nil {
		t.Fatalf("creating the clock: %v", err)
	}
	bosuntest.Window(t, cp.Client, clock, func() int { return counter.Count(client.ObjectKeyFromObject(clock)) }, time.Second, 5)
	if got := time.Since(mark); got < time.Second {
		t.Errorf("Window returned after %s, want at least 1s", got)
	}
	if got := counter.CountSince(client.ObjectKeyFromObject(clock), mark); got < 5 {
		t.Errorf("the clock had %d passes in the Window, want at least 5", got)
	}
	for _, key := range []client.ObjectKey{steady, flaky} {
		if n := counter.CountSince(key, mark); n != 0 {
			t.Errorf("%s reconciled %d times while nothing changed", key, n)
		}
		if got := counter.Count(key); got != before[key] {
			t.Errorf("Count(%s) = %d, Counts() said %d before the Window", key, got, before[key])
		}
	}
	total := 0
	for _, n := range counter.Counts() {
		total += n
	}
	if got := counter.Total(); got != total {
		t.Errorf("Total() = %d, want the sum of Counts(), %d", got, total)
	}

	// The flaky object's first call carries its error; later ones none.
	var flakyCalls []bosuntest.ReconcileCall
	for _, c := range counter.Calls() {
		if c.Request.NamespacedName == flaky {
			flakyCalls = append(flakyCalls, c)
		}
		if c.Start.IsZero() || c.Duration < 0 {
			t.Errorf("call %v has start %v and duration %v", c.Request, c.Start, c.Duration)
		}
	}
	if !errors.Is(flakyCalls[0].Err, errFirst) || flakyCalls[len(flakyCalls)-1].Err != nil {
		t.Errorf("flaky calls returned %v first and %v last, want %v then nil",
			flakyCalls[0].Err, flakyCalls[len(flakyCalls)-1].Err, errFirst)
	}

	// A change is one more call.
	counter.Reset()
	if counter.Total() != 0 || len(counter.Counts()) != 0 || len(counter.Calls()) != 0 {
		t.Fatalf("after Reset: Total() = %d, Counts() = %v", counter.Total(), counter.Counts())
	}
	if err := cp.Client.Patch(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "steady"}},
		client.RawPatch(types.MergePatchType, []byte(`{"data":{"changed":"yes"}}`))); err != nil {
		t.Fatalf("changing %s: %v", steady, err)
	}
	wantAtLeast(steady, 1)
	if got := counter.Count(flaky); got != 0 {
		t.Errorf("Count(%s) = %d after a change of another object, want 0", flaky, got)
	}
}

func TestReconcileCounterRecordsPanics(t *testing.T) {
	var counter bosuntest.ReconcileCounter
	r := counter.Wrap(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		panic("boom")
	}))
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "x"}}
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v, want the reconciler's panic passed on", p)
			}
		}()
		_, _ = r.Reconcile(t.Context(), req)
	}()
	calls := counter.Calls()
	if len(calls) != 1 || calls[0].Request != req {
		t.Fatalf("Calls() = %v, want one call for %v", calls, req)
	}
	if err := calls[0].Err; err == nil || !strings.Contains(err.Error(), "panicked: boom") {
		t.Errorf("panicking call recorded error %v, want one naming the panic", err)
	}
}

// TestReconcileCounterTouch checks that Touch returns only once the call
// that read the touched object has returned, however long that call
// takes.
func TestReconcileCounterTouch(t *testing.T) {
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	var counter bosuntest.ReconcileCounter
	var mu sync.Mutex
	var seen []string // the TouchLabel values the calls read, as they return
	bosuntest.RunManager(t, cp, func(mgr ctrl.Manager) error {
		c := counter.WrapClient(mgr.GetClient())
		r := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			cm := &corev1.ConfigMap{}
			if err := c.Get(ctx, req.NamespacedName, cm); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			v := cm.Labels[bosuntest.TouchLabel]
			if v == "slow" {
				// A long pass: Touch must wait for its end.
				time.Sleep(500 * time.Millisecond)
			}
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, v)
			return reconcile.Result{}, nil
		})
		return ctrl.NewControllerManagedBy(mgr).
			Named("touched").
			For(&corev1.ConfigMap{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
				return o.GetNamespace() == ns
			}))).
			Complete(counter.Wrap(r))
	})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "touched"}}
	if err := cp.Client.Create(t.Context(), cm.DeepCopy()); err != nil {
		t.Fatalf("creating %s: %v", cm.Name, err)
	}
	for _, value := range []string{"slow", "quick"} {
		start := time.Now()
		counter.Touch(t, cp.Client, cm, value)
		mu.Lock()
		got := slices.Contains(seen, value)
		mu.Unlock()
		if !got {
			t.Errorf("Touch(%q) returned after %s, before the call that read it returned", value, time.Since(start).Round(time.Millisecond))
		}
	}
	got := &corev1.ConfigMap{}
	if err := cp.Client.Get(t.Context(), client.ObjectKeyFromObject(cm), got); err != nil {
		t.Fatal(err)
	}
	if v := got.Labels[bosuntest.TouchLabel]; v != "quick" {
		t.Errorf("label %s = %q, want the last value touched, %q", bosuntest.TouchLabel, v, "quick")
	}
}
