package explore_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/explore"
)

// probeReconciler marks every Probe Ready for its generation. With buggy
// set, a Probe of size 10 gets a new status.seen on every pass: a write
// each time, which the exploration must find, and a Probe of size 7 gets
// the touch label it was read with in its status, after a slow pass: a
// write on each touch. A Probe of size 9 stands
// for one whose resource takes a while to make: it is Ready False,
// Provisioning, until the passes of its generation have read it with two
// values of bosuntest.TouchLabel. A Probe of size 8 is Ready False,
// Creating ("Creating"), for its first two seconds. A Probe
// of size 6 is refused with an error logged every 50 ms. A Probe of size 5
// is Ready False, NotReady, until three replicas are up, one more by the
// time of each touch, which its condition ReplicasReady counts.
type probeReconciler struct {
	c     client.Client
	buggy bool

	mu sync.Mutex
	// touches are the values of the touch label each Probe was read with,
	// at the generation read.
	touches map[types.NamespacedName]map[string]bool
	gen     map[types.NamespacedName]int64
	// touchedCreating counts the passes that read a Probe touched while
	// it was Creating.
	touchedCreating int
}

// slowPass is how long a pass of a Probe of size 7 takes with buggy set.
const slowPass = 500 * time.Millisecond

// replicas is how many replicas a Probe of size 5 waits for.
const replicas = 3

// createFor is how long a Probe of size 8 is Creating.
const createFor = 2 * time.Second

// created returns how long obj, of size 8, is still Creating, and notes a
// pass that read it touched meanwhile.
func (r *probeReconciler) created(obj *unstructured.Unstructured) time.Duration {
	left := createFor - time.Since(obj.GetCreationTimestamp().Time)
	if _, touched := obj.GetLabels()[bosuntest.TouchLabel]; touched && left > 0 {
		r.mu.Lock()
		r.touchedCreating++
		r.mu.Unlock()
	}
	return left
}

// creating reports whether the resource of obj, of size 9, is still being
// made.
func (r *probeReconciler) creating(obj *unstructured.Unstructured) bool {
	return r.touchesAt(obj) < 2
}

// touchesAt returns how many values of the touch label passes read obj
// with at its generation, this one's included.
func (r *probeReconciler) touchesAt(obj *unstructured.Unstructured) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if r.touches == nil {
		r.touches, r.gen = map[types.NamespacedName]map[string]bool{}, map[types.NamespacedName]int64{}
	}
	if r.gen[key] != obj.GetGeneration() {
		r.touches[key], r.gen[key] = map[string]bool{}, obj.GetGeneration()
	}
	if v, ok := obj.GetLabels()[bosuntest.TouchLabel]; ok {
		r.touches[key][v] = true
	}
	return len(r.touches[key])
}

func (r *probeReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(probeGVK)
	if err := r.c.Get(ctx, req.NamespacedName, obj); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	ready, reason := "True", "Succeeded"
	var res reconcile.Result
	var more []any
	switch size, _, _ := unstructured.NestedInt64(obj.Object, "spec", "size"); {
	case size == 9 && r.creating(obj):
		ready, reason = "False", "Provisioning"
	case size == 5:
		// Replicas that come up one more by the time of each touch,
		// which Ready does not tell until all three are.
		up := min(r.touchesAt(obj), replicas)
		if up < replicas {
			ready, reason = "False", "NotReady"
		}
		more = append(more, map[string]any{
			"type": "ReplicasReady", "status": ready, "reason": reason, "message": fmt.Sprintf("%d of %d available", up, replicas),
			"observedGeneration": obj.GetGeneration(), "lastTransitionTime": "2026-01-01T00:00:00Z",
		})
	case size == 6:
		// Refused, with an error logged, again and again.
		logf.FromContext(ctx).Error(errors.New("size 6 is refused"), "refusing a probe")
		return reconcile.Result{RequeueAfter: 50 * time.Millisecond}, nil
	case size == 8:
		if left := r.created(obj); left > 0 {
			ready, reason, res = "False", "Creating", reconcile.Result{RequeueAfter: left}
		}
	}
	status := map[string]any{"conditions": append([]any{map[string]any{
		"type": "Ready", "status": ready, "reason": reason, "message": "",
		"observedGeneration": obj.GetGeneration(), "lastTransitionTime": "2026-01-01T00:00:00Z",
	}}, more...)}
	switch size, _, _ := unstructured.NestedInt64(obj.Object, "spec", "size"); {
	case r.buggy && size == 10:
		status["seen"] = time.Now().Format(time.RFC3339Nano)
	case r.buggy && size == 7:
		// A slow pass that writes what it read of the touch label.
		time.Sleep(slowPass)
		status["touch"] = obj.GetLabels()[bosuntest.TouchLabel]
	}
	if equality.Semantic.DeepEqual(obj.Object["status"], status) {
		return res, nil
	}
	obj.Object["status"] = status
	if err := r.c.Status().Update(ctx, obj); err != nil {
		return reconcile.Result{}, err
	}
	return res, nil
}

// explored runs the Probe controller in a namespace of its own and returns
// the target of its exploration.
func explored(t *testing.T, buggy bool) (explore.Target, string) {
	t.Helper()
	target, ns, _ := exploredWith(t, buggy)
	return target, ns
}

// exploredWith is explored, and returns the controller's reconciler too.
func exploredWith(t *testing.T, buggy bool) (explore.Target, string, *probeReconciler) {
	t.Helper()
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	target := explore.Target{
		Client: cp.Client,
		GVK:    probeGVK,
		Spec:   &probeSpec,
		Base:   map[string]any{"size": int64(1)},
		Passes: &bosuntest.ReconcileCounter{},
		Writes: &bosuntest.WriteCounter{},
		Logs:   &bosuntest.LogRecorder{},
	}
	r := &probeReconciler{buggy: buggy}
	bosuntest.RunManager(t, cp, func(mgr ctrl.Manager) error {
		mgr = bosuntest.ManagerWithLogger(mgr, target.Logs.Wrap(mgr.GetLogger()))
		r.c = target.Passes.WrapClient(target.Writes.Wrap(mgr.GetClient()))
		probe := &unstructured.Unstructured{}
		probe.SetGroupVersionKind(probeGVK)
		here := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == ns })
		return ctrl.NewControllerManagedBy(mgr).Named("probe").For(probe, builder.WithPredicates(here)).Complete(target.Passes.Wrap(r))
	})
	return target, ns, r
}

// TestRunPassesACorrectOperator explores a Probe controller that is right
// under three seeds, and counts what they reached: the schema of a Probe
// admits each change on any spec, so every step that changes the spec
// counts.
func TestRunPassesACorrectOperator(t *testing.T) {
	target, ns := explored(t, false)
	stats := &explore.Stats{}
	changed := 0
	for seed := range uint64(3) {
		if err := explore.Run(t.Context(), target, ns, explore.Options{Seed: seed, Steps: 6, Stats: stats}); err != nil {
			t.Errorf("seed %d: %v", seed, err)
		}
		spec := target.Base
		for _, c := range explore.Sequence(target.Spec, seed, 6) {
			next := c.Apply(spec)
			if !reflect.DeepEqual(next, spec) {
				changed++
			}
			spec = next
		}
	}
	if s, n := stats.Sequences(), stats.Steps(); s != 3 || n != changed {
		t.Errorf("%d sequences and %d steps counted, want 3 and %d", s, n, changed)
	}
	// The base spec's shape, and at most one more for each step.
	if n := stats.Shapes(); n < 2 || n > 19 {
		t.Errorf("%d shapes counted, want 2 to 19", n)
	}
}

// TestRunSettlesAgainWhenReadyChanges explores Probes of size 9, which
// are Ready False, Provisioning (a reason of their own), until a later
// pass finds them made and writes Ready True: a write of a pass that found
// something new, not a failure.
func TestRunSettlesAgainWhenReadyChanges(t *testing.T) {
	target, ns := explored(t, false)
	target.Base = map[string]any{"size": int64(9)}
	if err := explore.Run(t.Context(), target, ns, explore.Options{Seed: 1, Steps: 2, NoShrink: true}); err != nil {
		t.Error(err)
	}
}

// TestRunSettlesAgainWhenAConditionProgresses explores Probes of size 5,
// Ready False, NotReady, whose condition ReplicasReady counts replicas
// that come up one more by each touch, as a Deployment's pods do while
// the operator waits: the pass of a second touch writes the new count
// with Ready as it was, a write of a pass that found something new, not a
// failure.
func TestRunSettlesAgainWhenAConditionProgresses(t *testing.T) {
	target, ns := explored(t, false)
	target.Base = map[string]any{"size": int64(5)}
	if err := explore.Run(t.Context(), target, ns, explore.Options{Seed: 1, Steps: 2, NoShrink: true}); err != nil {
		t.Error(err)
	}
}

// TestRunWaitsPastWorkUnderWay explores Probes of size 8, which are
// Ready False, Creating, for their first seconds: a step waits until they
// are made before it touches them.
func TestRunWaitsPastWorkUnderWay(t *testing.T) {
	target, ns, r := exploredWith(t, false)
	target.Base = map[string]any{"size": int64(8)}
	if err := explore.Run(t.Context(), target, ns, explore.Options{Seed: 1, Steps: 1, NoShrink: true}); err != nil {
		t.Error(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.touchedCreating > 0 {
		t.Errorf("%d passes read a Probe touched while it was Creating, want none", r.touchedCreating)
	}
}

// TestRunTouchesEachObjectAfresh explores a correct Probe, then one of
// size 7, which writes on each touch after a slow pass, under the same
// name and with the same counters: the second run's touches wait for
// passes of their own, and find the writes.
func TestRunTouchesEachObjectAfresh(t *testing.T) {
	target, ns := explored(t, true)
	// A seed whose one step leaves the size alone.
	var seed uint64
	for hasSize10(explore.Sequence(target.Spec, seed, 1)) {
		seed++
	}
	if err := explore.Run(t.Context(), target, ns, explore.Options{Seed: seed, Steps: 1}); err != nil {
		t.Fatal(err)
	}
	target.Base = map[string]any{"size": int64(7)}
	err := explore.Run(t.Context(), target, ns, explore.Options{Seed: seed, Steps: 1, NoShrink: true})
	var f *explore.Failure
	if !errors.As(err, &f) || !strings.Contains(f.Error(), "a pass that found nothing changed wrote") {
		t.Fatalf("Run = %v, want a *Failure of a write on a touch", err)
	}
}

// TestRunCountsTheErrorsOfTheObject explores Probes while the controller
// logs errors about another Probe, of size 6, in the same namespace: they
// are not the explored Probes' errors.
func TestRunCountsTheErrorsOfTheObject(t *testing.T) {
	target, ns := explored(t, false)
	other := &unstructured.Unstructured{}
	other.SetGroupVersionKind(probeGVK)
	other.SetNamespace(ns)
	other.SetName("other")
	other.Object["spec"] = map[string]any{"size": int64(6)}
	if err := target.Client.Create(t.Context(), other); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(context.Context) error {
		if len(target.Logs.Errors()) == 0 {
			return errors.New("no error logged about the other Probe yet")
		}
		return nil
	})
	if err := explore.Run(t.Context(), target, ns, explore.Options{Seed: 0, Steps: 2, NoShrink: true}); err != nil {
		t.Error(err)
	}
}

// TestRunFindsAndShrinksAFailure explores a Probe controller that writes
// on every pass of a Probe of size 10: the seed's sequence fails, and is
// shrunk to the one change that matters.
func TestRunFindsAndShrinksAFailure(t *testing.T) {
	target, ns := explored(t, true)
	// The first seed whose sequence sets the size to 10 (the maximum).
	var seed uint64
	for ; seed < 100; seed++ {
		if hasSize10(explore.Sequence(target.Spec, seed, 12)) {
			break
		}
	}
	stats := &explore.Stats{}
	err := explore.Run(t.Context(), target, ns, explore.Options{Seed: seed, Steps: 12, Stats: stats})
	var f *explore.Failure
	if !errors.As(err, &f) {
		t.Fatalf("Run = %v, want a *Failure", err)
	}
	t.Log(f)
	if f.Seed != seed || len(f.Steps) != 1 || fmt.Sprint(f.Steps[0]) != "spec.size = 10 (boundary)" {
		t.Errorf("Failure = seed %d, steps %v; want seed %d shrunk to [spec.size = 10 (boundary)]", f.Seed, f.Steps, seed)
	}
	// The sequence drawn, up to its failing step; shrinking's runs are
	// not counted.
	if s, n := stats.Sequences(), stats.Steps(); s != 1 || n < 1 || n > 12 {
		t.Errorf("%d sequences and %d steps counted, want 1 and 1 to 12", s, n)
	}
}

func hasSize10(seq []explore.Change) bool {
	for _, c := range seq {
		if fmt.Sprint(c) == "spec.size = 10 (boundary)" {
			return true
		}
	}
	return false
}

// TestRunWaitsForLeftoversToGo explores a Probe whose leftovers go a few
// checks after the Probe itself, as children the garbage collector
// deletes do: the run waits for them. Leftovers that never go fail it,
// with what was left.
func TestRunWaitsForLeftoversToGo(t *testing.T) {
	target, ns := explored(t, false)
	checks := 0
	target.Leftovers = func(context.Context, client.Object) error {
		if checks++; checks < 3 {
			return fmt.Errorf("child-%d left", checks)
		}
		return nil
	}
	if err := explore.Run(t.Context(), target, ns, explore.Options{Seed: 0, Steps: 1, NoShrink: true}); err != nil {
		t.Errorf("Run with leftovers that go = %v, want nil", err)
	}
	if checks != 3 {
		t.Errorf("leftovers checked %d times, want 3", checks)
	}
	target.Leftovers = func(context.Context, client.Object) error { return errors.New("child-0 left") }
	err := explore.Run(t.Context(), target, ns, explore.Options{Seed: 0, Steps: 1, NoShrink: true, Timeout: 2 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "child-0 left") {
		t.Errorf("Run with leftovers that stay = %v, want an error naming them", err)
	}
}
