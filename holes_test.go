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

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// TestNoOpWriteDoesNotWedgeObject runs a step that sets a status field the
// CRD prunes, so every status write after the first changes nothing on the
// server and keeps its resourceVersion. The engine must not take that
// version for one it wrote over: the step keeps running at the interval it
// asks for, instead of every pass ending with "cache behind own writes".
func TestNoOpWriteDoesNotWedgeObject(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var passes atomic.Int64
	r := &bosun.Reconciler[*testapi.Widget]{
		Name: "noop-write",
		Steps: []bosun.Step[*testapi.Widget]{
			bosun.NewStep("prune", func(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
				passes.Add(1)
				req.Object.Status.Pruned = "dropped by the server"
				req.Object.Status.Result = req.Object.Spec.Value
				return ctrl.Result{RequeueAfter: 200 * time.Millisecond}, nil
			}),
		},
	}
	f.run(r, runOptions{})
	f.create("w", 3, 1, nil)
	f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
	start := passes.Load()
	bosuntest.Eventually(t, func(context.Context) error {
		if n := passes.Load() - start; n < 10 {
			return fmt.Errorf("%d passes of the step since Ready, want 10: the object is wedged", n)
		}
		return nil
	})
}

// noisy owns the condition Noisy and puts a 100 KB message in it, without
// going through conditions.Set.
type noisy struct{}

func (noisy) Conditions() []string { return []string{"Noisy"} }

func (noisy) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	w := req.Object
	msg := strings.Repeat("every child is unwell; ", 100_000/23)
	c := conditions.Find(w.Status.Conditions, "Noisy")
	if c == nil {
		w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: "Noisy"})
		c = &w.Status.Conditions[len(w.Status.Conditions)-1]
	}
	c.Status, c.Reason, c.Message, c.ObservedGeneration = metav1.ConditionFalse, "Unwell", msg, w.Generation
	c.LastTransitionTime = metav1.Now()
	return ctrl.Result{}, nil
}

// TestLongConditionMessageIsBounded checks that a step's 100 KB condition
// message does not make the status write fail: the engine cuts it to the
// API server's limit, and Ready carries the cut message.
func TestLongConditionMessageIsBounded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.run(&bosun.Reconciler[*testapi.Widget]{Name: "noisy", Steps: []bosun.Step[*testapi.Widget]{noisy{}}}, runOptions{})
	f.create("w", 1, 1, nil)
	w := f.waitReady("w", metav1.ConditionFalse, "Unwell")
	for _, c := range w.Status.Conditions {
		if len(c.Message) > conditions.MaxMessageLength {
			t.Errorf("condition %s has a %d-byte message, want at most %d", c.Type, len(c.Message), conditions.MaxMessageLength)
		}
	}
	if m := conditions.Find(w.Status.Conditions, "Noisy").Message; !strings.HasSuffix(m, conditions.CutMarker) {
		t.Errorf("Noisy message does not end with %q", conditions.CutMarker)
	}
}

// setNamespacePolicy sets the reconcile policy annotation of the fixture's
// Namespace to value.
func (f *fixture) setNamespacePolicy(value string) {
	f.t.Helper()
	ns := &corev1.Namespace{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Name: f.ns}, ns); err != nil {
		f.t.Fatal(err)
	}
	patch := client.MergeFrom(ns.DeepCopy())
	metav1.SetMetaDataAnnotation(&ns.ObjectMeta, bosun.AnnotationReconcilePolicy, value)
	if err := f.c.Patch(context.Background(), ns, patch); err != nil {
		f.t.Fatal(err)
	}
}

// TestNamespacePolicyChangeReconcilesObjects starts Widgets under a
// Namespace whose policy is skip, one of them with an empty policy
// annotation (not set: the Namespace's applies). Changing the Namespace's
// policy to manage, and touching nothing else, brings both under
// management: the finalizer is claimed and Do runs.
func TestNamespacePolicyChangeReconcilesObjects(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.setNamespacePolicy(string(bosun.PolicySkip))
	j := newJournal()
	f.run(newReconciler("namespace-policy-change", j, true), runOptions{})
	f.create("plain", 6, 3, nil)
	f.create("empty", 6, 3, map[string]string{bosun.AnnotationReconcilePolicy: ""})
	for _, name := range []string{"plain", "empty"} {
		bosuntest.Eventually(t, func(context.Context) error {
			if j.count(j.observes, name) == 0 {
				return fmt.Errorf("%s not observed under skip yet", name)
			}
			return nil
		})
		if n := j.count(j.do, name); n != 0 {
			t.Fatalf("Do ran %d times on %s under the Namespace's skip policy", n, name)
		}
	}

	f.setNamespacePolicy(string(bosun.PolicyManage))
	for _, name := range []string{"plain", "empty"} {
		bosuntest.Eventually(t, func(ctx context.Context) error {
			w, err := f.get(ctx, name)
			if err != nil {
				return err
			}
			if !controllerutil.ContainsFinalizer(w, testFinalizer) || j.count(j.do, name) == 0 {
				return fmt.Errorf("%s not managed yet: finalizers %v, %d Do calls", name, w.Finalizers, j.count(j.do, name))
			}
			return nil
		})
	}
}

// phasePanicker panics in the phase named by the Widget's value: 1 Cleanup,
// 2 Post, 3 Observe. For value 4 the predicate of the If around it panics.
type phasePanicker struct{}

func (phasePanicker) Name() string { return "phase-panicker" }

func (phasePanicker) Do(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}

func (phasePanicker) Cleanup(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	if req.Object.Spec.Value == 1 {
		panic("cleanup blew up")
	}
	return ctrl.Result{}, nil
}

func (phasePanicker) Post(_ context.Context, req *bosun.Pass[*testapi.Widget]) error {
	if req.Object.Spec.Value == 2 {
		panic("post blew up")
	}
	return nil
}

func (phasePanicker) Observe(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	if req.Object.Spec.Value == 3 {
		panic("observe blew up")
	}
	return ctrl.Result{}, nil
}

// TestPanicInAnyPhaseIsRecovered makes a pass panic in a composite's own
// code (the predicate of an If), in Cleanup, in Post and in Observe, each
// for one Widget:
// every one of them ends with Ready False, reason Panic, and backs off; a
// Widget whose Cleanup panicked keeps its finalizer; a Widget next to them
// converges.
func TestPanicInAnyPhaseIsRecovered(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	counter := &bosuntest.ReconcileCounter{}
	p := phasePanicker{}
	r := &bosun.Reconciler[*testapi.Widget]{
		Name: "phase-panic",
		Steps: []bosun.Step[*testapi.Widget]{bosun.If(func(req *bosun.Pass[*testapi.Widget]) bool {
			if req.Object.Spec.Value == 4 {
				panic("predicate blew up")
			}
			return true
		}, bosun.Step[*testapi.Widget](p))},
		Finalizer: testFinalizer,
	}
	f.run(r, runOptions{counter: counter})
	f.create("cleanup", 1, 1, nil)
	f.create("post", 2, 1, nil)
	f.create("observe", 3, 1, map[string]string{bosun.AnnotationReconcilePolicy: string(bosun.PolicySkip)})
	f.create("workflow", 4, 1, nil)
	f.create("fine", 5, 1, nil)
	f.waitReady("fine", metav1.ConditionTrue, conditions.ReasonSucceeded)
	f.waitReady("cleanup", metav1.ConditionTrue, conditions.ReasonSucceeded)
	for _, name := range []string{"post", "observe", "workflow"} {
		f.waitReady(name, metav1.ConditionFalse, conditions.ReasonPanic)
	}

	w, err := f.get(context.Background(), "cleanup")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.c.Delete(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	f.waitReady("cleanup", metav1.ConditionFalse, conditions.ReasonPanic)
	w, err = f.get(context.Background(), "cleanup")
	if err != nil {
		t.Fatalf("the widget whose Cleanup panicked is gone: %v", err)
	}
	if !controllerutil.ContainsFinalizer(w, testFinalizer) {
		t.Error("the finalizer was released after Cleanup panicked")
	}

	// Panics back off: a handful of retries over the window, not a loop.
	time.Sleep(time.Second)
	before := map[string]int{}
	for _, name := range []string{"cleanup", "post", "observe", "workflow"} {
		before[name] = counter.Count(client.ObjectKey{Namespace: f.ns, Name: name})
	}
	time.Sleep(hotLoopWindow)
	for name, n := range before {
		if d := counter.Count(client.ObjectKey{Namespace: f.ns, Name: name}) - n; d > 8 {
			t.Errorf("%d reconciles of %s in %s after a panic, want backoff", d, name, hotLoopWindow)
		}
	}
}

// reporter owns the condition Synced, sets it True on every Do and records
// the failures of the engine's writes it is told about.
type reporter struct {
	mu     sync.Mutex
	writes []conditions.Reason
}

func (*reporter) Name() string         { return "reporter" }
func (*reporter) Conditions() []string { return []string{"Synced"} }

func (*reporter) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	w := req.Object
	conditions.Set(&w.Status.Conditions, metav1.Condition{Type: "Synced", Status: metav1.ConditionTrue, Reason: "Synced", ObservedGeneration: w.Generation}, metav1.Now())
	if w.Spec.Mode == "" && w.Spec.Value == 7 {
		// Late-initialise the spec with a value the API server refuses.
		w.Spec.Mode = "warp"
	}
	return ctrl.Result{}, nil
}

func (r *reporter) WriteFailed(req *bosun.Pass[*testapi.Widget], reason conditions.Reason, err error) {
	r.mu.Lock()
	r.writes = append(r.writes, reason)
	r.mu.Unlock()
	o := req.Object
	conditions.Set(&o.Status.Conditions, metav1.Condition{Type: "Synced", Status: metav1.ConditionFalse, Reason: string(reason), Message: err.Error(), ObservedGeneration: o.Generation}, metav1.Now())
}

func (r *reporter) count(reason conditions.Reason) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, x := range r.writes {
		if x == reason {
			n++
		}
	}
	return n
}

// waitWarnings waits until exactly n Warning events with reason have been
// recorded for the Widget named, and fails if one repeats.
func (f *fixture) waitWarnings(widget string, reason conditions.Reason, n int) {
	f.t.Helper()
	bosuntest.Eventually(f.t, func(ctx context.Context) error {
		var evs eventsv1.EventList
		if err := f.c.List(ctx, &evs, client.InNamespace(f.ns)); err != nil {
			return err
		}
		got := 0
		for _, ev := range evs.Items {
			if ev.Reason != string(reason) || ev.Regarding.Name != widget || ev.Type != corev1.EventTypeWarning {
				continue
			}
			got++
			if ev.Series != nil && ev.Series.Count > 1 || ev.DeprecatedCount > 1 {
				return fmt.Errorf("event %s repeated %d times", reason, max(ev.DeprecatedCount, ev.Series.Count))
			}
		}
		if got != n {
			return fmt.Errorf("%d %s events for %s, want %d", got, reason, widget, n)
		}
		return nil
	})
}

// TestFailedSaveIsReported late-initialises a spec field with a value the
// API server refuses. The object's conditions say so (Ready False with
// SaveFailed and the server's error, the reporter step's Synced False with
// the same reason), one Warning event is recorded however often the pass
// is retried, and the retries back off.
func TestFailedSaveIsReported(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	rep := &reporter{}
	counter := &bosuntest.ReconcileCounter{}
	f.run(&bosun.Reconciler[*testapi.Widget]{Name: "save-failed", Steps: []bosun.Step[*testapi.Widget]{rep}}, runOptions{counter: counter})
	f.create("w", 7, 1, nil)
	w := f.waitReady("w", metav1.ConditionFalse, "SaveFailed")
	if m := conditions.Find(w.Status.Conditions, conditions.TypeReady).Message; !strings.Contains(m, "warp") {
		t.Errorf("Ready message %q does not carry the server's error", m)
	}
	if c := conditions.Find(w.Status.Conditions, "Synced"); c == nil || c.Status != metav1.ConditionFalse || c.Reason != string(conditions.ReasonSaveFailed) {
		t.Errorf("Synced = %+v, want False/%s", c, "SaveFailed")
	}
	if w.Spec.Mode != "" {
		t.Errorf("spec.mode = %q stored, want it refused", w.Spec.Mode)
	}
	f.waitWarnings("w", "SaveFailed", 1)
	assertNoHotLoop(t, counter, w)
	f.waitWarnings("w", "SaveFailed", 1)
	if rep.count(conditions.ReasonSaveFailed) == 0 {
		t.Error("the reporter step was never told of the failed save")
	}

	// A spec that makes the step stop late-initialising heals the object.
	patch := client.MergeFrom(w.DeepCopy())
	w.Spec.Value = 8
	if err := f.c.Patch(context.Background(), w, patch); err != nil {
		t.Fatal(err)
	}
	f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
}

// refusedFinalizer is a finalizer that a ValidatingAdmissionPolicy refuses
// to let any Widget carry.
const refusedFinalizer = "test.bosun.dev/refused"

// refuseFinalizer installs a ValidatingAdmissionPolicy, with its binding,
// that refuses Widgets carrying refusedFinalizer, and waits until the API
// server enforces it.
func (f *fixture) refuseFinalizer() {
	f.t.Helper()
	f.admissionPolicy("refuse-finalizer", fmt.Sprintf("!has(object.metadata.finalizers) || !('%s' in object.metadata.finalizers)", refusedFinalizer))
	bosuntest.Eventually(f.t, func(ctx context.Context) error {
		probe := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, GenerateName: "probe-", Finalizers: []string{refusedFinalizer}}}
		err := f.c.Create(ctx, probe, client.DryRunAll)
		if err == nil {
			return errors.New("the policy is not enforced yet")
		}
		return nil
	})
}

// admissionPolicy installs a ValidatingAdmissionPolicy named name, with its
// binding to the fixture's namespace, that refuses creates and updates of
// Widgets for which the CEL expression is false.
func (f *fixture) admissionPolicy(name, expression string) {
	f.t.Helper()
	ctx := context.Background()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
						Rule: admissionregistrationv1.Rule{
							APIGroups: []string{testapi.GroupVersion.Group}, APIVersions: []string{"*"}, Resources: []string{"widgets"},
						},
					},
				}},
			},
			Validations: []admissionregistrationv1.Validation{{
				Expression: expression,
				Message:    "refused by policy " + name,
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: f.ns}},
			},
		},
	}
	for _, o := range []client.Object{policy, binding} {
		if err := f.c.Create(ctx, o); err != nil {
			f.t.Fatalf("creating %T: %v", o, err)
		}
		f.t.Cleanup(func() { _ = f.c.Delete(context.Background(), o) })
	}
}

// TestFailedClaimIsReported runs a reconciler whose finalizer the API
// server refuses: no step acts, Ready is False with ClaimFailed and the
// server's message, one Warning event says so, and retries back off.
func TestFailedClaimIsReported(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.refuseFinalizer()
	rep := &reporter{}
	counter := &bosuntest.ReconcileCounter{}
	cleaner := bosun.NewStep("noop", func(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) { return ctrl.Result{}, nil })
	r := &bosun.Reconciler[*testapi.Widget]{
		Name:      "claim-failed",
		Steps:     []bosun.Step[*testapi.Widget]{rep, cleanerStep{cleaner}},
		Finalizer: refusedFinalizer,
	}
	f.run(r, runOptions{counter: counter})
	f.create("w", 1, 1, nil)
	w := f.waitReady("w", metav1.ConditionFalse, "ClaimFailed")
	if m := conditions.Find(w.Status.Conditions, conditions.TypeReady).Message; !strings.Contains(m, "refused by policy") {
		t.Errorf("Ready message %q does not carry the server's error", m)
	}
	if len(w.Finalizers) != 0 {
		t.Errorf("finalizers %v stored, want none", w.Finalizers)
	}
	if c := conditions.Find(w.Status.Conditions, "Synced"); c == nil || c.Reason != string(conditions.ReasonClaimFailed) {
		t.Errorf("Synced = %+v, want reason %s", c, "ClaimFailed")
	}
	f.waitWarnings("w", "ClaimFailed", 1)
	assertNoHotLoop(t, counter, w)
	f.waitWarnings("w", "ClaimFailed", 1)
}

// cleanerStep is a step with a Cleanup that does nothing, so that the
// reconciler claims a finalizer.
type cleanerStep struct {
	bosun.StepFunc[*testapi.Widget]
}

func (cleanerStep) Cleanup(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}

// keptFinalizer is a finalizer that a ValidatingAdmissionPolicy refuses to
// let anyone remove from a Widget labelled keep=true.
const keptFinalizer = "test.bosun.dev/kept"

// TestFailedReleaseIsReported deletes a Widget whose finalizer removal the
// API server refuses: Cleanup has run, Ready is False with ReleaseFailed
// and the server's message, the finalizer stays, and one Warning event says
// so.
func TestFailedReleaseIsReported(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.admissionPolicy("keep-finalizer", fmt.Sprintf(
		"!has(object.metadata.labels) || !('keep' in object.metadata.labels) || (has(object.metadata.finalizers) && '%s' in object.metadata.finalizers) || "+
			"!has(oldObject.metadata.finalizers) || !('%s' in oldObject.metadata.finalizers)", keptFinalizer, keptFinalizer))
	rep := &reporter{}
	cleaner := bosun.NewStep("noop", func(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) { return ctrl.Result{}, nil })
	f.run(&bosun.Reconciler[*testapi.Widget]{
		Name:      "release-failed",
		Steps:     []bosun.Step[*testapi.Widget]{rep, cleanerStep{cleaner}},
		Finalizer: keptFinalizer,
	}, runOptions{})
	f.create("w", 1, 1, nil)
	f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
	// Label it only now, and wait until the policy refuses a removal.
	w, err := f.get(context.Background(), "w")
	if err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(w.DeepCopy())
	metav1.SetMetaDataLabel(&w.ObjectMeta, "keep", "true")
	if err := f.c.Patch(context.Background(), w, patch); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		probe := w.DeepCopy()
		probe.Finalizers = nil
		if err := f.c.Update(ctx, probe, client.DryRunAll); err == nil {
			return errors.New("the policy is not enforced yet")
		}
		return nil
	})
	if err := f.c.Delete(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	got := f.waitReady("w", metav1.ConditionFalse, "ReleaseFailed")
	if !controllerutil.ContainsFinalizer(got, keptFinalizer) {
		t.Error("the finalizer is gone although its removal was refused")
	}
	if m := conditions.Find(got.Status.Conditions, conditions.TypeReady).Message; !strings.Contains(m, "refused by policy") {
		t.Errorf("Ready message %q does not carry the server's error", m)
	}
	f.waitWarnings("w", "ReleaseFailed", 1)

	// Once the label goes, the release goes through and the Widget is gone.
	patch = client.MergeFrom(got.DeepCopy())
	delete(got.Labels, "keep")
	if err := f.c.Patch(context.Background(), got, patch); err != nil {
		t.Fatal(err)
	}
	f.waitGone("w")
}

// healthy owns the condition Healthy and sets it True both when it acts and
// when it only observes.
type healthy struct{}

func (healthy) Name() string         { return "healthy" }
func (healthy) Conditions() []string { return []string{"Healthy"} }

func (h healthy) Do(ctx context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	return h.Observe(ctx, req)
}

func (healthy) Observe(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	w := req.Object
	conditions.Set(&w.Status.Conditions, metav1.Condition{
		Type: "Healthy", Status: metav1.ConditionTrue, Reason: "Fine", Message: "all is well", ObservedGeneration: w.Generation,
	}, metav1.Now())
	return ctrl.Result{}, nil
}

// setPolicy sets the reconcile policy annotation of a Widget to value.
func (f *fixture) setPolicy(name, value string) {
	f.t.Helper()
	w, err := f.get(context.Background(), name)
	if err != nil {
		f.t.Fatal(err)
	}
	patch := client.MergeFrom(w.DeepCopy())
	metav1.SetMetaDataAnnotation(&w.ObjectMeta, bosun.AnnotationReconcilePolicy, value)
	if err := f.c.Patch(context.Background(), w, patch); err != nil {
		f.t.Fatal(err)
	}
}

// readyMessage returns the message of the Widget's Ready condition.
func readyMessage(w *testapi.Widget) string {
	if c := conditions.Find(w.Status.Conditions, conditions.TypeReady); c != nil {
		return c.Message
	}
	return ""
}

// TestSkipWithoutObserversSaysPaused runs a reconciler whose steps cannot
// observe. Under the skip policy nothing refreshes the object's health, so
// Ready must not claim it is ready: it is False with ReconcilePaused and a
// message naming the policy. Managed again, the object becomes Ready.
func TestSkipWithoutObserversSaysPaused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.run(&bosun.Reconciler[*testapi.Widget]{Name: "skip-blind", Steps: []bosun.Step[*testapi.Widget]{panicker{}}}, runOptions{})
	f.create("w", 1, 1, map[string]string{bosun.AnnotationReconcilePolicy: string(bosun.PolicySkip)})
	w := f.waitReady("w", metav1.ConditionFalse, conditions.ReasonReconcilePaused)
	if msg := readyMessage(w); !strings.Contains(msg, `"skip"`) {
		t.Errorf("Ready message %q does not name the skip policy", msg)
	}

	f.setPolicy("w", "")
	w = f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
	if msg := readyMessage(w); strings.Contains(msg, "skip") {
		t.Errorf("Ready message %q still speaks of skip under manage", msg)
	}
}

// TestSkipKeepsObservedHealthAndSaysPaused runs a reconciler with an
// Observer. Under the skip policy Ready keeps the health it observes (True,
// Succeeded, as a parent or kubectl wait expect) and its message says the
// object is paused; managed again, the message no longer does.
func TestSkipKeepsObservedHealthAndSaysPaused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.run(&bosun.Reconciler[*testapi.Widget]{Name: "skip-observer", Steps: []bosun.Step[*testapi.Widget]{healthy{}}}, runOptions{})
	f.create("w", 1, 1, map[string]string{bosun.AnnotationReconcilePolicy: string(bosun.PolicySkip)})
	bosuntest.Eventually(t, func(ctx context.Context) error {
		w, err := f.get(ctx, "w")
		if err != nil {
			return err
		}
		c := conditions.Find(w.Status.Conditions, conditions.TypeReady)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != string(conditions.ReasonSucceeded) || !strings.Contains(c.Message, `"skip"`) {
			return fmt.Errorf("Ready is %+v, want True/%s with a message naming the skip policy", c, conditions.ReasonSucceeded)
		}
		return nil
	})

	f.setPolicy("w", string(bosun.PolicyManage))
	bosuntest.Eventually(t, func(ctx context.Context) error {
		w, err := f.get(ctx, "w")
		if err != nil {
			return err
		}
		c := conditions.Find(w.Status.Conditions, conditions.TypeReady)
		if c == nil || c.Status != metav1.ConditionTrue || strings.Contains(c.Message, "skip") {
			return fmt.Errorf("Ready is %+v, want True without the pause", c)
		}
		return nil
	})
}
