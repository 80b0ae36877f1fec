package rwexternal

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	rwv1 "github.com/bosunkit/bosun/examples/rwexternal/api/v1alpha1"
)

var (
	creds      = map[string]string{"username": "admin", "password": "s3cret"}
	rotated    = map[string]string{"username": "admin", "password": "n3w s3cret", "token": "t"}
	skipPolicy = map[string]string{bosun.AnnotationReconcilePolicy: string(bosun.PolicySkip)}
)

// TestLifecycle follows an RWExternal under the default policy: the output
// appears, follows the input, and goes away with the RWExternal.
func TestLifecycle(t *testing.T) {
	e := newEnv(t, runController(t, nil))
	e.setInput("creds", creds)
	e.create("app", "creds", nil)

	rw := e.waitConditions("app", converged)
	e.waitOutput("app-output", "app", creds)
	if !controllerutil.ContainsFinalizer(rw, Finalizer) {
		t.Errorf("finalizers = %v, want %s", rw.Finalizers, Finalizer)
	}
	if rw.Status.OutputSecret != "app-output" {
		t.Errorf("status.outputSecret = %q, want app-output", rw.Status.OutputSecret)
	}

	// The watch on Secrets brings the change of the input.
	e.setInput("creds", rotated)
	e.waitOutput("app-output", "app", rotated)
	e.waitConditions("app", converged)

	// Delete: Cleanup removes the output, then the finalizer goes.
	if err := e.c.Delete(t.Context(), rw); err != nil {
		t.Fatalf("delete rwexternal: %v", err)
	}
	e.waitGone(&rwv1.RWExternal{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "app"}})
	if err := e.missing("app-output"); err != nil {
		t.Error(err)
	}
	if err := e.c.Get(t.Context(), e.key("creds"), &corev1.Secret{}); err != nil {
		t.Errorf("input secret after delete: %v, want it untouched", err)
	}
}

// TestMissingInputWaitsForSecret checks that a missing input is reported and
// that creating it later is noticed through the watch, not a timer.
func TestMissingInputWaitsForSecret(t *testing.T) {
	e := newEnv(t, runController(t, nil))
	e.create("early", "later", nil)
	rw := e.waitConditions("early", map[string]condition{
		conditions.TypeReady:     {metav1.ConditionFalse, rwv1.ReasonInputMissing},
		rwv1.ConditionInputReady: {metav1.ConditionFalse, rwv1.ReasonInputMissing},
		// writeOutput never ran: its condition is as the engine made it.
		rwv1.ConditionOutputReady: {metav1.ConditionUnknown, conditions.ReasonInitializing},
	})
	if got, want := conditions.Find(rw.Status.Conditions, conditions.TypeReady).Message, `secret "later" not found`; got != want {
		t.Errorf("Ready message = %q, want %q", got, want)
	}
	if err := e.missing("early-output"); err != nil {
		t.Error(err)
	}

	e.setInput("later", creds)
	e.waitConditions("early", converged)
	e.waitOutput("early-output", "early", creds)
}

// TestKeyCollision checks that an input whose keys collide is reported on
// InputReady and in Ready, and that fixing it recovers.
func TestKeyCollision(t *testing.T) {
	e := newEnv(t, runController(t, nil))
	e.setInput("mixed", map[string]string{"key": "1", "KEY": "2"})
	e.create("mixed", "mixed", nil)
	e.waitConditions("mixed", map[string]condition{
		conditions.TypeReady:     {metav1.ConditionFalse, rwv1.ReasonKeyCollision},
		rwv1.ConditionInputReady: {metav1.ConditionFalse, rwv1.ReasonKeyCollision},
	})
	if err := e.missing("mixed-output"); err != nil {
		t.Error(err)
	}
	e.setInput("mixed", map[string]string{"key": "1"})
	e.waitConditions("mixed", converged)
	e.waitOutput("mixed-output", "mixed", map[string]string{"key": "1"})
}

// TestOutputRepaired checks that the watch on output Secrets puts back an
// edited or deleted output.
func TestOutputRepaired(t *testing.T) {
	e := newEnv(t, runController(t, nil))
	e.setInput("creds", creds)
	e.create("fix", "creds", nil)
	out := e.waitOutput("fix-output", "fix", creds)

	out.Data["USERNAME"] = []byte("tampered")
	if err := e.c.Update(t.Context(), out); err != nil {
		t.Fatalf("update output: %v", err)
	}
	e.waitOutput("fix-output", "fix", creds)

	if err := e.c.Delete(t.Context(), out); err != nil {
		t.Fatalf("delete output: %v", err)
	}
	again := e.waitOutput("fix-output", "fix", creds)
	if again.UID == out.UID {
		t.Error("output was not created again")
	}
}

// TestSkipPolicy checks that under the skip policy the output is neither
// created nor changed, that the steps still report what they observe, and
// that no finalizer is added.
func TestSkipPolicy(t *testing.T) {
	e := newEnv(t, runController(t, nil))
	e.setInput("creds", creds)

	// Skipped from the start: nothing is written but the status.
	e.create("hands-off", "creds", skipPolicy)
	rw := e.waitConditions("hands-off", map[string]condition{
		conditions.TypeReady:      {metav1.ConditionFalse, rwv1.ReasonOutputMissing},
		rwv1.ConditionInputReady:  inputFound,
		rwv1.ConditionOutputReady: {metav1.ConditionFalse, rwv1.ReasonOutputMissing},
	})
	if len(rw.Finalizers) != 0 {
		t.Errorf("finalizers = %v, want none under skip", rw.Finalizers)
	}
	if err := e.missing("hands-off-output"); err != nil {
		t.Error(err)
	}

	// Managed first, then skipped: a new input is observed, not written.
	e.create("paused", "creds", nil)
	e.waitConditions("paused", converged)
	before := e.waitOutput("paused-output", "paused", creds)
	e.annotate("paused", bosun.AnnotationReconcilePolicy, string(bosun.PolicySkip))
	// The input changes only once the controller has seen the policy: a
	// pass that reads the object from before the annotation still manages.
	e.waitSkipped("paused")
	e.setInput("creds", rotated)
	e.waitConditions("paused", map[string]condition{
		conditions.TypeReady:      {metav1.ConditionFalse, rwv1.ReasonOutputOutOfDate},
		rwv1.ConditionOutputReady: {metav1.ConditionFalse, rwv1.ReasonOutputOutOfDate},
	})
	after := &corev1.Secret{}
	if err := e.c.Get(t.Context(), e.key("paused-output"), after); err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before.ResourceVersion {
		t.Errorf("output changed under skip: resourceVersion %s, was %s", after.ResourceVersion, before.ResourceVersion)
	}
	if err := e.missing("hands-off-output"); err != nil {
		t.Error(err)
	}

	// Managed again: the output catches up.
	e.annotate("paused", bosun.AnnotationReconcilePolicy, "")
	e.waitOutput("paused-output", "paused", rotated)
	e.waitConditions("paused", converged)
}

// TestDetachOnDelete checks that under detach-on-delete the output stays
// behind when the RWExternal is deleted.
func TestDetachOnDelete(t *testing.T) {
	e := newEnv(t, runController(t, nil))
	e.setInput("creds", creds)
	rw := e.create("leaver", "creds", map[string]string{bosun.AnnotationReconcilePolicy: string(bosun.PolicyDetachOnDelete)})
	e.waitConditions("leaver", converged)
	out := e.waitOutput("leaver-output", "leaver", creds)

	if err := e.c.Delete(t.Context(), rw); err != nil {
		t.Fatalf("delete rwexternal: %v", err)
	}
	e.waitGone(&rwv1.RWExternal{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "leaver"}})
	kept, err := e.checkOutput(t.Context(), "leaver-output", "leaver", creds)
	if err != nil {
		t.Fatalf("output after detach: %v", err)
	}
	if kept.UID != out.UID {
		t.Error("output was replaced")
	}
}

// TestNamespacePolicy checks that the policy annotation of the Namespace
// applies to RWExternals without one of their own, and that theirs wins.
func TestNamespacePolicy(t *testing.T) {
	cp, p := runWatched(t, nil)
	annotateNS := func(e *env, policy bosun.Policy) {
		t.Helper()
		ns := &corev1.Namespace{}
		if err := e.c.Get(t.Context(), client.ObjectKey{Name: e.ns}, ns); err != nil {
			t.Fatal(err)
		}
		base := ns.DeepCopy()
		ns.Annotations = map[string]string{bosun.AnnotationReconcilePolicy: string(policy)}
		if err := e.c.Patch(t.Context(), ns, client.MergeFrom(base)); err != nil {
			t.Fatalf("annotate namespace: %v", err)
		}
		// The RWExternals come only once the controller's cache holds
		// the policy: a pass that reads the Namespace from before it
		// applies the default.
		bosuntest.Eventually(t, func(ctx context.Context) error {
			seen := &metav1.PartialObjectMetadata{}
			seen.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
			if err := p.mgr.GetClient().Get(ctx, client.ObjectKey{Name: e.ns}, seen); err != nil {
				return err
			}
			if got := seen.Annotations[bosun.AnnotationReconcilePolicy]; got != string(policy) {
				return fmt.Errorf("cached namespace policy %q, want %q", got, policy)
			}
			return nil
		})
	}

	t.Run("skip", func(t *testing.T) {
		e := newEnv(t, cp)
		annotateNS(e, bosun.PolicySkip)
		e.setInput("creds", creds)
		e.create("inherits", "creds", nil)
		e.create("overrides", "creds", map[string]string{bosun.AnnotationReconcilePolicy: string(bosun.PolicyManage)})
		e.waitConditions("inherits", map[string]condition{
			rwv1.ConditionInputReady:  inputFound,
			rwv1.ConditionOutputReady: {metav1.ConditionFalse, rwv1.ReasonOutputMissing},
		})
		e.waitConditions("overrides", converged)
		e.waitOutput("overrides-output", "overrides", creds)
		if err := e.missing("inherits-output"); err != nil {
			t.Error(err)
		}
	})

	t.Run("detach-on-delete", func(t *testing.T) {
		e := newEnv(t, cp)
		annotateNS(e, bosun.PolicyDetachOnDelete)
		e.setInput("creds", creds)
		rw := e.create("inherits", "creds", nil)
		e.waitConditions("inherits", converged)
		e.waitOutput("inherits-output", "inherits", creds)
		if err := e.c.Delete(t.Context(), rw); err != nil {
			t.Fatal(err)
		}
		e.waitGone(&rwv1.RWExternal{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "inherits"}})
		if _, err := e.checkOutput(t.Context(), "inherits-output", "inherits", creds); err != nil {
			t.Errorf("output after detach: %v", err)
		}
	})
}

// TestForeignOutputLeftAlone checks that a Secret with the output's name
// that the operator did not write is reported, not changed, and survives the
// deletion of the RWExternal.
func TestForeignOutputLeftAlone(t *testing.T) {
	e := newEnv(t, runController(t, nil))
	e.setInput("creds", creds)
	foreign := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "taken-output"},
		StringData: map[string]string{"mine": "yes"},
	}
	if err := e.c.Create(t.Context(), foreign); err != nil {
		t.Fatal(err)
	}
	rw := e.create("taken", "creds", nil)
	e.waitConditions("taken", map[string]condition{
		conditions.TypeReady:      {metav1.ConditionFalse, rwv1.ReasonOutputNotOwned},
		rwv1.ConditionOutputReady: {metav1.ConditionFalse, rwv1.ReasonOutputNotOwned},
	})
	if err := e.c.Delete(t.Context(), rw); err != nil {
		t.Fatal(err)
	}
	e.waitGone(&rwv1.RWExternal{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "taken"}})
	after := &corev1.Secret{}
	if err := e.c.Get(t.Context(), e.key("taken-output"), after); err != nil {
		t.Fatalf("foreign secret after delete: %v", err)
	}
	if after.ResourceVersion != foreign.ResourceVersion {
		t.Errorf("foreign secret was changed: resourceVersion %s, was %s", after.ResourceVersion, foreign.ResourceVersion)
	}
}

// TestConvergedReconcileWritesNothing checks the writes of the running
// controller for a new RWExternal (the finalizer, the output, one status
// patch), then reconciles the converged RWExternal twice more with a
// reconciler of its own that reads from the API server directly and counts
// its writes: there must be none.
func TestConvergedReconcileWritesNothing(t *testing.T) {
	writes := &bosuntest.WriteCounter{}
	cp, passes := runWatched(t, writes.Wrap)
	e := newEnv(t, cp)
	e.setInput("creds", creds)
	e.create("still", "creds", nil)
	e.waitConditions("still", converged)
	e.waitOutput("still-output", "still", creds)
	// The passes that could still write are those that ran before the
	// controller's cache held the output. Once it does, the pass of a
	// change made now comes after every pass so far, and after those of
	// the RWExternal's earlier events (the controller's own writes among
	// them), which the watch delivers in order: once it has ended, those
	// passes are over, and this one found nothing to write either.
	e.waitCached(passes, "still-output")
	e.touch(passes, "still", "settled")
	before := &rwv1.RWExternal{}
	if err := e.c.Get(t.Context(), e.key("still"), before); err != nil {
		t.Fatal(err)
	}
	beforeOut := e.waitOutput("still-output", "still", creds)
	ops := map[string]int{}
	for _, w := range writes.Writes() {
		if w.Namespace == e.ns {
			ops[w.Op()]++
		}
	}
	// A create may be refused once with AlreadyExists when the cache lags
	// behind; everything else happens exactly once.
	if ops["create Secret"] == 2 {
		ops["create Secret"] = 1
	}
	want := map[string]int{"patch RWExternal": 1, "create Secret": 1, "patch status RWExternal": 1}
	if diff := cmp.Diff(want, ops); diff != "" {
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
		res, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: e.key("still")})
		if err != nil || !res.IsZero() {
			t.Fatalf("pass %d: Reconcile = %+v, %v; want a zero result and no error", pass, res, err)
		}
		if w := counter.Writes(); len(w) > 0 {
			t.Errorf("pass %d: writes %v, want none", pass, w)
		}
	}
	after := &rwv1.RWExternal{}
	if err := e.c.Get(t.Context(), e.key("still"), after); err != nil {
		t.Fatal(err)
	}
	afterOut, err := e.checkOutput(t.Context(), "still-output", "still", creds)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{after.ResourceVersion, afterOut.ResourceVersion}
	if diff := cmp.Diff([]string{before.ResourceVersion, beforeOut.ResourceVersion}, got); diff != "" {
		t.Errorf("resourceVersions of rwexternal and output (-want +got):\n%s", diff)
	}
}

// TestValidation checks the rules the API server enforces.
func TestValidation(t *testing.T) {
	cp := shared.ControlPlane(t)
	e := newEnv(t, cp)
	ctx := t.Context()
	invalid := func(err error, msg string) {
		t.Helper()
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), msg) {
			t.Errorf("error = %v, want Invalid mentioning %q", err, msg)
		}
	}
	rw := func(name string, spec rwv1.RWExternalSpec) *rwv1.RWExternal {
		return &rwv1.RWExternal{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name}, Spec: spec}
	}
	invalid(e.c.Create(ctx, rw("no-input", rwv1.RWExternalSpec{})), "spec.inputSecret")
	invalid(e.c.Create(ctx, rw("bad-output", rwv1.RWExternalSpec{InputSecret: "x", OutputSecret: "Not_A_Name"})), "spec.outputSecret")
	long := strings.Repeat("a", 247)
	invalid(e.c.Create(ctx, rw(long, rwv1.RWExternalSpec{InputSecret: "x"})), "need spec.outputSecret")
	if err := e.c.Create(ctx, rw(long, rwv1.RWExternalSpec{InputSecret: "x", OutputSecret: "short"})); err != nil {
		t.Errorf("long name with an output name: %v", err)
	}

	fixed := rw("fixed", rwv1.RWExternalSpec{InputSecret: "x", OutputSecret: "first"})
	if err := e.c.Create(ctx, fixed); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"second", ""} {
		changed := fixed.DeepCopy()
		changed.Spec.OutputSecret = name
		invalid(e.c.Patch(ctx, changed, client.MergeFrom(fixed)), "outputSecret is immutable")
	}
	// The input may change.
	changed := fixed.DeepCopy()
	changed.Spec.InputSecret = "y"
	if err := e.c.Patch(ctx, changed, client.MergeFrom(fixed)); err != nil {
		t.Errorf("change input: %v", err)
	}
}

// TestSamplesBecomeReady prepares and creates the demo's samples and waits,
// as the demo does, until each is Ready with its output written.
func TestSamplesBecomeReady(t *testing.T) {
	e := newEnv(t, runController(t, nil))
	if err := PrepareSamples(t.Context(), e.c, e.ns); err != nil {
		t.Fatal(err)
	}
	// A second call leaves the existing inputs alone.
	if err := PrepareSamples(t.Context(), e.c, e.ns); err != nil {
		t.Fatalf("PrepareSamples again: %v", err)
	}
	inputs := map[string]map[string]string{}
	for _, s := range SampleInputs(e.ns) {
		inputs[s.Name] = s.StringData
	}
	for _, obj := range Samples(e.ns) {
		if err := e.c.Create(t.Context(), obj); err != nil {
			t.Fatalf("create sample %s: %v", obj.GetName(), err)
		}
	}
	for _, obj := range Samples(e.ns) {
		rw := obj.(*rwv1.RWExternal)
		e.waitConditions(rw.Name, converged)
		e.waitOutput(rw.OutputSecretName(), rw.Name, inputs[rw.Spec.InputSecret])
	}
}
