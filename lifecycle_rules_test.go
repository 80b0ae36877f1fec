package bosun_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// These tests check the lifecycle rules on the shared control plane, each
// rule in a test of its own.

// foreignFinalizer is a finalizer of some other controller.
const foreignFinalizer = "other.example.com/keep"

// cleanupPasses splits the Cleanup calls in calls into passes; a pass starts
// with the Cleanup of the last step, first.
func cleanupPasses(calls []string, first string) [][]string {
	var passes [][]string
	for _, c := range calls {
		if !strings.HasSuffix(c, ".cleanup") {
			continue
		}
		if c == first || len(passes) == 0 {
			passes = append(passes, nil)
		}
		passes[len(passes)-1] = append(passes[len(passes)-1], c)
	}
	return passes
}

func TestEnvCleanupReverseOrderKeepsForeignFinalizer(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tr := &trace{}
	log := &passLog{}
	var pending atomic.Bool
	pending.Store(true)
	r := &bosun.Reconciler[*testapi.Widget]{
		Name:      "env-cleanup",
		Options:   bosun.Options{Observers: []bosun.PassObserver{log}},
		Finalizer: testFinalizer,
		Steps: []bosun.Step[*testapi.Widget]{
			&traced{name: "a", tr: tr},
			&traced{name: "b", tr: tr, cleanup: func() (ctrl.Result, error) {
				if pending.Load() {
					return ctrl.Result{RequeueAfter: 200 * time.Millisecond}, nil
				}
				return ctrl.Result{}, nil
			}},
			&traced{name: "c", tr: tr},
		},
	}
	f.run(r, runOptions{})
	w := &testapi.Widget{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "w", Finalizers: []string{foreignFinalizer}},
		Spec:       testapi.WidgetSpec{Value: 1, Divisor: 1},
	}
	if err := f.c.Create(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	w = f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
	if diff := cmp.Diff([]string{foreignFinalizer, testFinalizer}, w.Finalizers); diff != "" {
		t.Fatalf("finalizers before delete (-want +got):\n%s", diff)
	}
	if err := f.c.Delete(context.Background(), w); err != nil {
		t.Fatal(err)
	}

	// While b needs more time, a is never cleaned up and our finalizer stays.
	bosuntest.Eventually(t, func(context.Context) error {
		if n := len(cleanupPasses(tr.get(), "c.cleanup")); n < 3 {
			return fmt.Errorf("%d cleanup passes, want at least 3", n)
		}
		return nil
	})
	got, err := f.get(context.Background(), "w")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{foreignFinalizer, testFinalizer}, got.Finalizers); diff != "" {
		t.Errorf("finalizers while cleanup is pending (-want +got):\n%s", diff)
	}
	for i, p := range cleanupPasses(tr.get(), "c.cleanup") {
		if diff := cmp.Diff([]string{"c.cleanup", "b.cleanup"}, p); diff != "" {
			t.Errorf("pending cleanup pass %d (-want +got):\n%s", i, diff)
		}
	}

	// Once every step is done only our finalizer goes.
	pending.Store(false)
	bosuntest.Eventually(t, func(ctx context.Context) error {
		got, err = f.get(ctx, "w")
		if err != nil {
			return err
		}
		if controllerutil.ContainsFinalizer(got, testFinalizer) {
			return fmt.Errorf("finalizers %v still hold ours", got.Finalizers)
		}
		return nil
	})
	if diff := cmp.Diff([]string{foreignFinalizer}, got.Finalizers); diff != "" {
		t.Errorf("finalizers after cleanup (-want +got):\n%s", diff)
	}
	passes := cleanupPasses(tr.get(), "c.cleanup")
	done := 0
	for i, p := range passes {
		switch {
		case cmp.Equal([]string{"c.cleanup", "b.cleanup", "a.cleanup"}, p):
			done++
		case cmp.Equal([]string{"c.cleanup", "b.cleanup"}, p) && done == 0:
		default:
			t.Errorf("cleanup pass %d of %d = %v, want c, b and then a only after b is done", i, len(passes), p)
		}
	}
	if done == 0 {
		t.Errorf("no complete cleanup pass in %v", passes)
	}

	// The object stays, held by the other controller's finalizer, also
	// through a pass that finds it without ours.
	touched := time.Now()
	f.touch("w", "released")
	bosuntest.Eventually(t, func(context.Context) error {
		if !slices.ContainsFunc(log.since("w", 0), func(r bosun.PassReport) bool { return r.Start.After(touched) }) {
			return errors.New("no pass of w since its finalizer was released and it was touched")
		}
		return nil
	})
	got, err = f.get(context.Background(), "w")
	if err != nil {
		t.Fatalf("object gone while another finalizer holds it: %v", err)
	}
	if got.DeletionTimestamp.IsZero() {
		t.Error("object is not being deleted")
	}
	patch := client.MergeFrom(got.DeepCopy())
	got.Finalizers = nil
	if err := f.c.Patch(context.Background(), got, patch); err != nil {
		t.Fatal(err)
	}
	f.waitGone("w")
}

func TestEnvPostRunsAfterDoError(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tr := &trace{}
	r := &bosun.Reconciler[*testapi.Widget]{
		Name:      "env-post",
		Finalizer: testFinalizer,
		Steps: []bosun.Step[*testapi.Widget]{
			&traced{name: "a", tr: tr},
			&traced{name: "b", tr: tr, do: func() (ctrl.Result, error) {
				return ctrl.Result{}, conditions.Terminal("Broken", errors.New("b broke"))
			}},
			&traced{name: "c", tr: tr},
		},
	}
	f.run(r, runOptions{})
	f.create("w", 1, 1, nil)
	f.waitReady("w", metav1.ConditionFalse, "Broken")

	// Every pass ran the Do of a and b, and then the Post of every step.
	want := []string{"a.do", "b.do", "a.post", "b.post", "c.post"}
	calls := tr.get()
	complete := len(calls) / len(want) * len(want)
	if complete == 0 {
		t.Fatalf("calls %v, want at least one pass", calls)
	}
	for i := 0; i < complete; i += len(want) {
		if diff := cmp.Diff(want, calls[i:i+len(want)]); diff != "" {
			t.Errorf("pass %d calls (-want +got):\n%s", i/len(want), diff)
		}
	}
}

// ownsA owns the condition A, which it sets False for a Widget with a value
// of 2 or more and True otherwise. It records when it first sees the label
// touched=again.
type ownsA struct {
	touched atomic.Pointer[time.Time]
}

func (*ownsA) Name() string         { return "owns-a" }
func (*ownsA) Conditions() []string { return []string{"A"} }

func (s *ownsA) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	w := req.Object
	if w.Labels["touched"] == "again" && s.touched.Load() == nil {
		now := time.Now()
		s.touched.Store(&now)
	}
	c := metav1.Condition{Type: "A", Status: metav1.ConditionTrue, Reason: "AOK", Message: "a is fine"}
	if w.Spec.Value >= 2 {
		c = metav1.Condition{Type: "A", Status: metav1.ConditionFalse, Reason: "AFailed", Message: "a failed"}
	}
	conds := w.Status.Conditions
	conditions.Set(&conds, c, metav1.Now())
	w.Status.Conditions = conds
	return ctrl.Result{}, nil
}

// ownsB owns the condition B, which it sets False for a Widget with a value
// of 2 or more and leaves alone otherwise.
type ownsB struct{}

func (ownsB) Name() string         { return "owns-b" }
func (ownsB) Conditions() []string { return []string{"B"} }

func (ownsB) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	w := req.Object
	if w.Spec.Value >= 2 {
		conds := w.Status.Conditions
		conditions.Set(&conds, metav1.Condition{Type: "B", Status: metav1.ConditionFalse, Reason: "BFailed", Message: "b failed"}, metav1.Now())
		w.Status.Conditions = conds
	}
	return ctrl.Result{}, nil
}

// conditionSummary maps condition types to "status/reason", and fails the
// test for each condition that does not observe the Widget's generation.
func conditionSummary(t *testing.T, w *testapi.Widget) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, c := range w.Status.Conditions {
		got[c.Type] = string(c.Status) + "/" + c.Reason
		if c.ObservedGeneration != w.Generation {
			t.Errorf("condition %s observes generation %d, want %d", c.Type, c.ObservedGeneration, w.Generation)
		}
	}
	if w.Status.ObservedGeneration != w.Generation {
		t.Errorf("status.observedGeneration = %d, want %d", w.Status.ObservedGeneration, w.Generation)
	}
	return got
}

func TestEnvOwnedConditions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := &ownsA{}
	counter := &bosuntest.ReconcileCounter{}
	r := &bosun.Reconciler[*testapi.Widget]{
		Name:  "env-conditions",
		Steps: []bosun.Step[*testapi.Widget]{a, ownsB{}},
	}
	f.run(r, runOptions{counter: counter})
	f.create("w", 1, 1, nil)

	// First visit: B, which no step set, is Unknown, and so is Ready.
	w := f.waitReady("w", metav1.ConditionUnknown, conditions.ReasonInitializing)
	want := map[string]string{"A": "True/AOK", "B": "Unknown/" + string(conditions.ReasonInitializing), "Ready": "Unknown/" + string(conditions.ReasonInitializing)}
	if diff := cmp.Diff(want, conditionSummary(t, w)); diff != "" {
		t.Errorf("conditions after the first visit (-want +got):\n%s", diff)
	}

	// A reconcile that changes nothing leaves the transition times alone.
	// The stored times have a precision of a second: wait until the clock
	// has passed the second of the latest, so that a time set anew would
	// differ.
	var latest time.Time
	for _, c := range w.Status.Conditions {
		if c.LastTransitionTime.After(latest) {
			latest = c.LastTransitionTime.Time
		}
	}
	bosuntest.Eventually(t, func(context.Context) error {
		if now := time.Now(); now.Before(latest.Add(time.Second)) {
			return fmt.Errorf("the clock is at %s, in the second of the latest transition time %s", now.Format(time.RFC3339Nano), latest.Format(time.RFC3339))
		}
		return nil
	})
	f.touch("w", "again")
	key := client.ObjectKeyFromObject(w)
	bosuntest.Eventually(t, func(context.Context) error {
		seen := a.touched.Load()
		if seen == nil {
			return errors.New("touched label not seen by a step yet")
		}
		for _, c := range counter.Calls() {
			if c.Request.NamespacedName == key && !c.Start.After(*seen) {
				if c.Start.Add(c.Duration).After(*seen) {
					return nil
				}
			}
		}
		return errors.New("the reconcile that saw the label has not returned yet")
	})
	touched, err := f.get(context.Background(), "w")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w.Status, touched.Status); diff != "" {
		t.Errorf("status after a reconcile with nothing to change (-before +after):\n%s", diff)
	}

	// Among equally bad conditions the first in step order decides Ready,
	// and every condition observes the new generation.
	patch := client.MergeFrom(touched.DeepCopy())
	touched.Spec.Value = 2
	if err := f.c.Patch(context.Background(), touched, patch); err != nil {
		t.Fatal(err)
	}
	w = f.waitReady("w", metav1.ConditionFalse, "AFailed")
	if w.Generation < 2 {
		t.Errorf("generation = %d, want at least 2", w.Generation)
	}
	want = map[string]string{"A": "False/AFailed", "B": "False/BFailed", "Ready": "False/AFailed"}
	if diff := cmp.Diff(want, conditionSummary(t, w)); diff != "" {
		t.Errorf("conditions after the spec change (-want +got):\n%s", diff)
	}
	if msg := conditions.Find(w.Status.Conditions, conditions.TypeReady).Message; msg != "a failed" {
		t.Errorf("Ready message = %q, want %q", msg, "a failed")
	}
}

// flaky fails every Do with a warning, and counts its calls.
type flaky struct {
	mu    sync.Mutex
	calls int
}

func (*flaky) Name() string { return "flaky" }

func (s *flaky) Do(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	return ctrl.Result{}, conditions.Warning("NotYet", errors.New("dependency not ready"))
}

func TestEnvWarningErrorBacksOff(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	counter := &bosuntest.ReconcileCounter{}
	r := &bosun.Reconciler[*testapi.Widget]{Name: "env-warning", Steps: []bosun.Step[*testapi.Widget]{&flaky{}}}
	f.run(r, runOptions{counter: counter})
	f.create("w", 1, 1, nil)
	w := f.waitReady("w", metav1.ConditionFalse, "NotYet")
	if msg := conditions.Find(w.Status.Conditions, conditions.TypeReady).Message; msg != "dependency not ready" {
		t.Errorf("Ready message = %q, want %q", msg, "dependency not ready")
	}

	// The reconciles go on, returning the error for a retry, with growing
	// pauses between them.
	key := client.ObjectKeyFromObject(w)
	const retries = 9
	var failed []bosuntest.ReconcileCall
	bosuntest.Eventually(t, func(context.Context) error {
		failed = failed[:0]
		for _, c := range counter.Calls() {
			if c.Request.NamespacedName == key && c.Err != nil {
				failed = append(failed, c)
			}
		}
		if len(failed) < retries {
			return fmt.Errorf("%d failed reconciles, want %d", len(failed), retries)
		}
		return nil
	})
	for _, c := range failed {
		if errors.Is(c.Err, reconcileTerminal) {
			t.Fatalf("warning returned as a terminal error: %v", c.Err)
		}
	}
	last := failed[retries-1].Start.Sub(failed[retries-2].Start)
	t.Logf("pause before retry %d: %s", retries, last)
	if last < 300*time.Millisecond {
		t.Errorf("pause before retry %d is %s, want backoff of at least 300ms", retries, last)
	}
	first := failed[0].Start
	if n := counter.CountSince(key, first); n > 3*retries {
		t.Errorf("%d reconciles since the first failure, want backoff", n)
	}
}

func TestEnvNotFoundIsQuiet(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tr := &trace{}
	writes := &bosuntest.WriteCounter{}
	r := &bosun.Reconciler[*testapi.Widget]{
		Name:      "env-not-found",
		Client:    writes.Wrap(f.c),
		Finalizer: testFinalizer,
		Steps:     []bosun.Step[*testapi.Widget]{&traced{name: "a", tr: tr}},
	}
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: f.ns, Name: "missing"}})
	if err != nil || res != (ctrl.Result{}) {
		t.Errorf("outcome = %+v, %v; want a zero result and no error", res, err)
	}
	if n := writes.Total(); n != 0 {
		t.Errorf("%d writes for a missing object: %v", n, writes.Writes())
	}
	if calls := tr.get(); len(calls) != 0 {
		t.Errorf("steps ran for a missing object: %v", calls)
	}

	// The same reconciler writes an object that exists, so the counter sees
	// its writes.
	f.create("present", 1, 1, nil)
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: f.ns, Name: "present"}}); err != nil {
		t.Fatal(err)
	}
	if writes.Total() == 0 {
		t.Error("no writes counted for an existing object")
	}
}
