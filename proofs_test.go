package bosun_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// These tests prove rows of docs/PARITY.md and docs/RELIABILITY.md that
// were cited with tests of something else, or only with unit tests.

// heldCleanup computes status.result from the spec in Do, and holds the
// deletion in Cleanup until it is released. It records the spec value and
// the deletion state every call saw.
type heldCleanup struct {
	mu sync.Mutex
	// dos are the Do calls, cleanups the values the Cleanup calls saw.
	dos      []heldDo
	cleanups []int64
	released atomic.Bool
}

// heldDo is what one Do call saw.
type heldDo struct {
	Value    int64
	Deleting bool
}

func (*heldCleanup) Name() string { return "held-cleanup" }

func (h *heldCleanup) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	w := req.Object
	h.mu.Lock()
	h.dos = append(h.dos, heldDo{Value: w.Spec.Value, Deleting: !w.DeletionTimestamp.IsZero()})
	h.mu.Unlock()
	w.Status.Result = 10 * w.Spec.Value
	return ctrl.Result{}, nil
}

func (h *heldCleanup) Cleanup(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	h.mu.Lock()
	h.cleanups = append(h.cleanups, req.Object.Spec.Value)
	h.mu.Unlock()
	if !h.released.Load() {
		return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
	}
	return ctrl.Result{}, nil
}

// calls returns copies of the Do calls and of the Cleanup calls so far.
func (h *heldCleanup) calls() ([]heldDo, []int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]heldDo(nil), h.dos...), append([]int64(nil), h.cleanups...)
}

// TestSpecChangesWhileDeletingAreIgnored deletes a Widget whose Cleanup
// holds the deletion, and changes its spec while it waits. The engine sees
// the new spec (Cleanup is handed it) but runs no Do once the deletion has
// begun, and nothing in the status is computed from the new spec. Once
// Cleanup lets go, the finalizer is released and the Widget goes.
func TestSpecChangesWhileDeletingAreIgnored(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	h := &heldCleanup{}
	f.run(&bosun.Reconciler[*testapi.Widget]{
		Name:      "spec-while-deleting",
		Finalizer: testFinalizer,
		Steps:     []bosun.Step[*testapi.Widget]{h},
	}, runOptions{})
	f.create("w", 3, 1, nil)
	w := f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
	if w.Status.Result != 30 || !controllerutil.ContainsFinalizer(w, testFinalizer) {
		t.Fatalf("before the deletion: result %d, finalizers %v; want 30 and %s", w.Status.Result, w.Finalizers, testFinalizer)
	}
	if err := f.c.Delete(t.Context(), w); err != nil {
		t.Fatal(err)
	}

	// Once a Cleanup has run the engine has seen the deletion: count the
	// Do calls from there.
	var dosAtDeletion int
	bosuntest.Eventually(t, func(context.Context) error {
		dos, cleanups := h.calls()
		if len(cleanups) == 0 {
			return errors.New("no Cleanup yet")
		}
		dosAtDeletion = len(dos)
		return nil
	})

	// Change the spec of the Widget being deleted.
	w, err := f.get(t.Context(), "w")
	if err != nil {
		t.Fatal(err)
	}
	if w.DeletionTimestamp.IsZero() {
		t.Fatal("the Widget is not being deleted")
	}
	patch := client.MergeFrom(w.DeepCopy())
	w.Spec.Value = 4
	if err := f.c.Patch(t.Context(), w, patch); err != nil {
		t.Fatalf("changing the spec during the deletion: %v", err)
	}

	// Wait until three Cleanup passes have been handed the new spec: the
	// engine has loaded it, more than once.
	bosuntest.Eventually(t, func(context.Context) error {
		_, cleanups := h.calls()
		n := 0
		for _, v := range cleanups {
			if v == 4 {
				n++
			}
		}
		if n < 3 {
			return fmt.Errorf("%d Cleanup calls saw the new spec, want 3", n)
		}
		return nil
	})
	got, err := f.get(t.Context(), "w")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Result != 30 {
		t.Errorf("status.result = %d while deleting, want 30: computed from the new spec", got.Status.Result)
	}
	if !controllerutil.ContainsFinalizer(got, testFinalizer) {
		t.Errorf("finalizers %v while Cleanup holds the deletion, want %s", got.Finalizers, testFinalizer)
	}

	// Let the deletion finish.
	h.released.Store(true)
	f.waitGone("w")
	dos, _ := h.calls()
	if n := len(dos) - dosAtDeletion; n != 0 {
		t.Errorf("%d Do calls after the deletion began: %+v", n, dos[dosAtDeletion:])
	}
	for i, d := range dos {
		if d.Deleting || d.Value != 3 {
			t.Errorf("Do call %d saw %+v, want only the spec before the deletion (value 3) and no deletion", i, d)
		}
	}
}

// requestSeen records, for every Do of a Widget, the value of the
// requested-at annotation and of the label "touched" it saw.
type requestSeen struct {
	mu   sync.Mutex
	seen map[string][]string
}

func (*requestSeen) Name() string { return "request-seen" }

func (s *requestSeen) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	w := req.Object
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[string][]string{}
	}
	s.seen[w.Name] = append(s.seen[w.Name], fmt.Sprintf("requested=%s touched=%s", w.Annotations[bosun.AnnotationReconcileRequestedAt], w.Labels["touched"]))
	w.Status.Result = w.Spec.Value
	return ctrl.Result{}, nil
}

// passes returns what the passes of name saw.
func (s *requestSeen) passes(name string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen[name]...)
}

// request sets the requested-at annotation of the Widget name to value and
// waits until its status records the value as handled.
func (f *fixture) request(name, value string) {
	f.t.Helper()
	w, err := f.get(f.t.Context(), name)
	if err != nil {
		f.t.Fatal(err)
	}
	patch := client.MergeFrom(w.DeepCopy())
	metav1.SetMetaDataAnnotation(&w.ObjectMeta, bosun.AnnotationReconcileRequestedAt, value)
	if err := f.c.Patch(f.t.Context(), w, patch); err != nil {
		f.t.Fatal(err)
	}
	bosuntest.Eventually(f.t, func(ctx context.Context) error {
		w, err := f.get(ctx, name)
		if err != nil {
			return err
		}
		if got := w.Status.LastHandledReconcileAt; got != value {
			return fmt.Errorf("%s: lastHandledReconcileAt = %q, want %q", name, got, value)
		}
		return nil
	})
}

// TestReconcileRequestedPassesGenerationFilter runs a controller whose For
// lets through only generation changes or reconcile requests
// (predicate.Or(GenerationChangedPredicate, bosun.ReconcileRequested())).
// A new requested-at value brings a pass, which the status records; a new
// label brings none.
//
// Whether the label brought a pass is read from a later request: between
// the two, a request on a second Widget of the same namespace is handled.
// Its event comes after the label's on the same watch, and the queue hands
// out the objects of a namespace oldest first to the one worker, so a pass
// for the label would have run, and seen the old request, before the
// second Widget's status showed its request.
func TestReconcileRequestedPassesGenerationFilter(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := &requestSeen{}
	r := &bosun.Reconciler[*testapi.Widget]{Name: "requested-filter", Steps: []bosun.Step[*testapi.Widget]{s}}
	mine := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == f.ns || o.GetNamespace() == "" && o.GetName() == f.ns
	})
	forOpts := builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, bosun.ReconcileRequested()))
	bosuntest.RunManager(t, f.cp, func(mgr ctrl.Manager) error {
		return bosun.ControllerManagedBy[*testapi.Widget](mgr).For(&testapi.Widget{}, forOpts).WithEventFilter(mine).Complete(r)
	})
	f.create("w", 1, 1, nil)
	f.create("marker", 1, 1, nil)
	f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
	f.waitReady("marker", metav1.ConditionTrue, conditions.ReasonSucceeded)

	f.request("w", "1")
	f.touch("w", "yes")
	f.request("marker", "m1")
	f.request("w", "2")

	want := []string{"requested= touched=", "requested=1 touched=", "requested=2 touched=yes"}
	if diff := cmp.Diff(want, s.passes("w")); diff != "" {
		t.Errorf("passes of w (-want +got):\n%s", diff)
	}
}

// probe owns the condition Probed. Do sets it True and asks to run again
// after period; Observe sets it True too, or fails while failing is set.
type probe struct {
	period  time.Duration
	failing atomic.Bool
	dos     sync.Map // name -> struct{}
}

// errProbe is the error Observe returns while it fails.
var errProbe = errors.New("probing the widget: connection refused")

func (*probe) Name() string         { return "probe" }
func (*probe) Conditions() []string { return []string{"Probed"} }

func (p *probe) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	p.dos.Store(req.Object.Name, struct{}{})
	p.set(req.Object)
	return ctrl.Result{RequeueAfter: p.period}, nil
}

func (p *probe) Observe(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	if p.failing.Load() {
		return ctrl.Result{}, errProbe
	}
	p.set(req.Object)
	return ctrl.Result{}, nil
}

func (*probe) set(w *testapi.Widget) {
	conditions.Set(&w.Status.Conditions, metav1.Condition{
		Type: "Probed", Status: metav1.ConditionTrue, Reason: "Reachable", ObservedGeneration: w.Generation,
	}, metav1.Now())
}

// writesOf returns the operations of the counted writes of the Widget
// name, with their counts.
func writesOf(writes *bosuntest.WriteCounter, name string) map[string]int {
	got := map[string]int{}
	for _, w := range writes.Writes() {
		if w.Kind == "Widget" && w.Name == name {
			got[w.Op()]++
		}
	}
	return got
}

// TestSkipObserveErrorBacksOff runs a Widget under the skip policy whose
// Observer fails with a plain error. Ready is False with ReconcileError
// and the error's message, and one Warning event says so; the retries back
// off: while a second Widget, polled every 200 ms, has 40 passes (8 s or
// more), the failing one has at most 20 and its status is not written
// again. Nothing but the status is ever written, and once the Observer
// works again a reconcile request brings Ready back, saying the object is
// paused.
func TestSkipObserveErrorBacksOff(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	p := &probe{period: 200 * time.Millisecond}
	p.failing.Store(true)
	log := &passLog{}
	writes := &bosuntest.WriteCounter{}
	f.run(&bosun.Reconciler[*testapi.Widget]{
		Name:    "skip-observe-error",
		Steps:   []bosun.Step[*testapi.Widget]{p},
		Options: bosun.Options{Observers: []bosun.PassObserver{log}},
	}, runOptions{client: writes.Wrap})
	f.create("clock", 1, 1, nil)
	f.create("w", 1, 1, map[string]string{bosun.AnnotationReconcilePolicy: string(bosun.PolicySkip)})

	w := f.waitReady("w", metav1.ConditionFalse, conditions.ReasonError)
	if msg := readyMessage(w); !strings.Contains(msg, errProbe.Error()) {
		t.Errorf("Ready message %q, want it to name the error (%q)", msg, errProbe.Error())
	}
	f.waitWarnings("w", conditions.ReasonError, 1)

	// Count over a window measured by the clock Widget's polls.
	passes, ticks, written := log.count("w"), log.count("clock"), writes.Total()
	wWrites := writesOf(writes, "w")
	const window, budget = 40, 20
	bosuntest.Eventually(t, func(context.Context) error {
		if n := log.count("clock") - ticks; n < window {
			return fmt.Errorf("%d passes of the clock Widget, want %d", n, window)
		}
		return nil
	}, bosuntest.Timeout(5*time.Minute))
	n := log.count("w") - passes
	t.Logf("%d passes of the failing Widget during %d polls of the clock (%d writes in all)", n, window, writes.Total()-written)
	if n > budget {
		t.Errorf("%d passes of the failing Widget during %d polls of the clock, want at most %d: backoff", n, window, budget)
	}
	if n == 0 {
		t.Errorf("no pass of the failing Widget during %d polls of the clock: it is not retried", window)
	}
	if diff := cmp.Diff(wWrites, writesOf(writes, "w")); diff != "" {
		t.Errorf("writes of the failing Widget during the window (-before +after):\n%s", diff)
	}
	f.waitWarnings("w", conditions.ReasonError, 1)

	// The Observer works again; a request brings the next pass at once.
	p.failing.Store(false)
	f.request("w", "recovered")
	w = f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
	if msg := readyMessage(w); !strings.Contains(msg, `"skip"`) {
		t.Errorf("Ready message %q after recovery, want it to name the skip policy", msg)
	}
	if c := conditions.Find(w.Status.Conditions, "Probed"); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Probed = %+v after recovery, want True", c)
	}
	if len(w.Finalizers) != 0 {
		t.Errorf("finalizers %v under skip, want none", w.Finalizers)
	}
	for op := range writesOf(writes, "w") {
		if op != "patch status Widget" {
			t.Errorf("write %q of the Widget under skip, want only its status written", op)
		}
	}
	if _, ok := p.dos.Load("w"); ok {
		t.Error("Do ran for the Widget under skip")
	}
}

// TestSkipObserveErrorNamesThePolicy runs a Widget under the skip policy
// whose Observer fails with a plain error. Ready is False with
// ReconcileError, and its message names both the error and the policy: a
// paused object says it is paused, also when observing it fails.
func TestSkipObserveErrorNamesThePolicy(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	p := &probe{period: 200 * time.Millisecond}
	p.failing.Store(true)
	f.run(&bosun.Reconciler[*testapi.Widget]{Name: "skip-observe-error-paused", Steps: []bosun.Step[*testapi.Widget]{p}}, runOptions{})
	f.create("w", 1, 1, map[string]string{bosun.AnnotationReconcilePolicy: string(bosun.PolicySkip)})
	w := f.waitReady("w", metav1.ConditionFalse, conditions.ReasonError)
	if msg := readyMessage(w); !strings.Contains(msg, errProbe.Error()) || !strings.Contains(msg, `"skip"`) {
		t.Errorf("Ready message %q, want it to name the error (%q) and the skip policy", msg, errProbe.Error())
	}
}
