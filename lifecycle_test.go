package bosun_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// hotLoopWindow is how long the no-hot-loop tests count reconciles at
// least; hotLoopTicks is how many passes of another Widget they count them
// over at least (see passWindow).
const (
	hotLoopWindow = 10 * time.Second
	hotLoopTicks  = 40
)

// widgetWrites returns the writes of Widgets among all counted writes.
func widgetWrites(w *bosuntest.WriteCounter) map[string]int {
	got := map[string]int{}
	for op, n := range w.Counts() {
		if strings.HasSuffix(op, " Widget") {
			got[op] = n
		}
	}
	return got
}

// touch changes a label of the Widget, which makes the controller reconcile it
// without changing its generation.
func (f *fixture) touch(name, value string) {
	f.t.Helper()
	w, err := f.get(context.Background(), name)
	if err != nil {
		f.t.Fatal(err)
	}
	patch := client.MergeFrom(w.DeepCopy())
	w.Labels = map[string]string{"touched": value}
	if err := f.c.Patch(context.Background(), w, patch); err != nil {
		f.t.Fatal(err)
	}
}

func TestWritesMinimalAndZeroOnSecondReconcile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		cleans bool
		want   map[string]int
	}{
		{name: "no cleanup", want: map[string]int{"patch status Widget": 1}},
		{name: "cleanup", cleans: true, want: map[string]int{"patch Widget": 1, "patch status Widget": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			j := newJournal()
			writes := &bosuntest.WriteCounter{}
			f.run(newReconciler("writes", j, tc.cleans), runOptions{client: writes.Wrap})
			f.create("w", 6, 3, nil)
			w := f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
			if w.Status.Result != 2 || w.Status.ObservedGeneration != w.Generation {
				t.Errorf("status = %+v, want result 2 and observedGeneration %d", w.Status, w.Generation)
			}
			// The event of the status patch brings no pass of its own (the
			// pass that wrote it left the Widget Ready): the touch below
			// is the next.
			if diff := cmp.Diff(tc.want, widgetWrites(writes)); diff != "" {
				t.Errorf("writes of the first reconcile (-want +got):\n%s", diff)
			}

			writes.Reset()
			before := j.count(j.do, "w")
			f.touch("w", "again")
			bosuntest.Eventually(t, func(context.Context) error {
				if n := j.count(j.do, "w"); n <= before {
					return errors.New("not reconciled again yet")
				}
				return nil
			})
			if diff := cmp.Diff(map[string]int{}, widgetWrites(writes)); diff != "" {
				t.Errorf("writes of a reconcile with nothing changed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClaimBeforeAct(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	j := newJournal()
	f.run(newReconciler("claim", j, true), runOptions{})
	const n = 100
	for i := range n {
		f.create(fmt.Sprintf("w%03d", i), int64(i), 1, nil)
	}
	for i := range n {
		f.waitReady(fmt.Sprintf("w%03d", i), metav1.ConditionTrue, conditions.ReasonSucceeded)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.finalizerAtFirstDo) != n {
		t.Fatalf("output ran for %d widgets, want %d", len(j.finalizerAtFirstDo), n)
	}
	for name, stored := range j.finalizerAtFirstDo {
		if !stored {
			t.Errorf("widget %s: finalizer not stored when Do first ran", name)
		}
	}
}

func TestInvalidPolicy(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	j := newJournal()
	counter := &bosuntest.ReconcileCounter{}
	f.run(newReconciler("invalid-policy", j, true), runOptions{counter: counter})
	f.create("w", 1, 1, map[string]string{bosun.AnnotationReconcilePolicy: "sometimes"})
	w := f.waitReady("w", metav1.ConditionFalse, conditions.ReasonInvalidPolicy)
	if msg := conditions.Find(w.Status.Conditions, conditions.TypeReady).Message; !strings.Contains(msg, `"sometimes"`) {
		t.Errorf("Ready message %q does not name the value", msg)
	}
	if len(w.Finalizers) != 0 {
		t.Errorf("finalizers = %v, want none", w.Finalizers)
	}
	assertNoHotLoop(t, counter, w)
	if n := j.count(j.do, "w") + j.count(j.posts, "w"); n != 0 {
		t.Errorf("steps ran %d times, want 0", n)
	}

	// Fixing the value lets the object be managed.
	patch := client.MergeFrom(w.DeepCopy())
	w.Annotations[bosun.AnnotationReconcilePolicy] = string(bosun.PolicyManage)
	if err := f.c.Patch(context.Background(), w, patch); err != nil {
		t.Fatal(err)
	}
	f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
}

// assertNoHotLoop counts the reconciles of w, whose status the first one
// wrote, over a window of hotLoopWindow and hotLoopTicks passes of another
// Widget it creates, and fails if there are more than one. The controller
// is registered directly with controller-runtime (runOptions.counter), so
// the event of the status write brings a second reconcile: the count
// begins once that one has returned.
func assertNoHotLoop(t *testing.T, counter *bosuntest.ReconcileCounter, w *testapi.Widget) {
	t.Helper()
	cp := shared.ControlPlane(t)
	f := &fixture{t: t, cp: cp, c: cp.Client, ns: w.Namespace}
	key := client.ObjectKeyFromObject(w)
	bosuntest.Eventually(t, func(context.Context) error {
		if n := counter.Count(key); n < 2 {
			return fmt.Errorf("%d reconciles of %s, want the one of its creation and the one of its status write", n, key)
		}
		return nil
	})
	const clock = "hot-loop-clock"
	f.create(clock, 1, 1, nil)
	before := counter.Count(key)
	f.passWindow(counter, clock, hotLoopWindow, hotLoopTicks)
	if n := counter.Count(key) - before; n > 1 {
		t.Errorf("%d reconciles of %s in %s and %d passes of another Widget, want at most 1", n, key, hotLoopWindow, hotLoopTicks)
	}
}

// passWindow is bosuntest.Window with the Widget clock, whose passes
// counter counts.
func (f *fixture) passWindow(counter *bosuntest.ReconcileCounter, clock string, d time.Duration, n int) {
	f.t.Helper()
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: clock}}
	bosuntest.Window(f.t, f.c, w, func() int { return counter.Count(client.ObjectKeyFromObject(w)) }, d, n)
}

func TestTerminalErrorNoHotLoop(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	j := newJournal()
	counter := &bosuntest.ReconcileCounter{}
	f.run(newReconciler("terminal", j, false), runOptions{counter: counter})
	f.create("w", 1, 0, nil)
	w := f.waitReady("w", metav1.ConditionFalse, "ZeroDivisor")
	if got := conditions.Find(w.Status.Conditions, conditions.TypeReady).Message; got != "divisor is zero" {
		t.Errorf("Ready message = %q, want %q", got, "divisor is zero")
	}
	assertNoHotLoop(t, counter, w)

	// A new spec is reconciled again.
	patch := client.MergeFrom(w.DeepCopy())
	w.Spec.Divisor = 1
	if err := f.c.Patch(context.Background(), w, patch); err != nil {
		t.Fatal(err)
	}
	f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
}

func TestPanicIsRecovered(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	j := newJournal()
	counter := &bosuntest.ReconcileCounter{}
	r := &bosun.Reconciler[*testapi.Widget]{
		Name:  "panic",
		Steps: []bosun.Step[*testapi.Widget]{panicker{}, &divide{j: j}},
	}
	f.run(r, runOptions{counter: counter})
	f.create("boom", 666, 1, nil)
	f.create("fine", 4, 2, nil)
	w := f.waitReady("boom", metav1.ConditionFalse, conditions.ReasonPanic)
	f.waitReady("fine", metav1.ConditionTrue, conditions.ReasonSucceeded)
	if n := j.count(j.do, "boom"); n != 0 {
		t.Errorf("divide ran %d times after the panic, want 0", n)
	}
	if n := j.count(j.posts, "boom"); n == 0 {
		t.Error("Post did not run after the panic")
	}
	// The panic backs off: a handful of retries, not a loop. The count
	// begins once the pause between the end of a retry and the start of
	// the next has grown to half a second, as the backoff's do after its
	// first few quick ones, and runs over hotLoopWindow and hotLoopTicks
	// passes of the other Widget.
	key := client.ObjectKeyFromObject(w)
	bosuntest.Eventually(t, func(context.Context) error {
		var calls []bosuntest.ReconcileCall
		for _, c := range counter.Calls() {
			if c.Request.NamespacedName == key {
				calls = append(calls, c)
			}
		}
		for i := 1; i < len(calls); i++ {
			if calls[i].Start.Sub(calls[i-1].Start.Add(calls[i-1].Duration)) >= 500*time.Millisecond {
				return nil
			}
		}
		return fmt.Errorf("%d reconciles of %s, none half a second after the end of the one before", len(calls), key)
	}, bosuntest.Timeout(2*time.Minute))
	before := counter.Count(key)
	f.passWindow(counter, "fine", hotLoopWindow, hotLoopTicks)
	if n := counter.Count(key) - before; n > 8 {
		t.Errorf("%d reconciles in %s and %d passes of another Widget after a panic, want backoff", n, hotLoopWindow, hotLoopTicks)
	}
}

func TestSkipPolicyChangesOnlyStatus(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	j := newJournal()
	f.run(newReconciler("skip", j, true), runOptions{})
	created := f.create("w", 6, 3, map[string]string{bosun.AnnotationReconcilePolicy: string(bosun.PolicySkip)})
	var got *testapi.Widget
	bosuntest.Eventually(t, func(ctx context.Context) error {
		w, err := f.get(ctx, "w")
		if err != nil {
			return err
		}
		if w.Status.Result != -1 || conditions.Find(w.Status.Conditions, conditions.TypeReady) == nil {
			return fmt.Errorf("status %+v not observed yet", w.Status)
		}
		got = w
		return nil
	})
	if diff := cmp.Diff(created.ObjectMeta, got.ObjectMeta, ignoreServerMeta()); diff != "" {
		t.Errorf("metadata changed under skip (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(created.Spec, got.Spec); diff != "" {
		t.Errorf("spec changed under skip (-want +got):\n%s", diff)
	}
	if n := j.count(j.do, "w"); n != 0 {
		t.Errorf("Do ran %d times under skip, want 0", n)
	}
	assertNoSecret(t, f, "w")
}

// ignoreServerMeta ignores what the API server changes on every write.
func ignoreServerMeta() cmp.Option {
	return cmp.FilterPath(func(p cmp.Path) bool {
		switch p.Last().String() {
		case ".ResourceVersion", ".ManagedFields":
			return true
		}
		return false
	}, cmp.Ignore())
}

func assertNoSecret(t *testing.T, f *fixture, widget string) {
	t.Helper()
	err := f.c.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: outputName(widget)}, &corev1.Secret{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("output secret of %s: got error %v, want NotFound", widget, err)
	}
}

func TestNamespacePolicyApplies(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ns := &corev1.Namespace{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Name: f.ns}, ns); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(ns.DeepCopy())
	ns.Annotations = map[string]string{bosun.AnnotationReconcilePolicy: string(bosun.PolicySkip)}
	if err := f.c.Patch(context.Background(), ns, patch); err != nil {
		t.Fatal(err)
	}
	j := newJournal()
	f.run(newReconciler("namespace-policy", j, true), runOptions{})
	f.create("inherits", 6, 3, nil)
	f.create("overrides", 6, 3, map[string]string{bosun.AnnotationReconcilePolicy: string(bosun.PolicyManage)})
	f.waitReady("overrides", metav1.ConditionTrue, conditions.ReasonSucceeded)
	bosuntest.Eventually(t, func(context.Context) error {
		if j.count(j.observes, "inherits") == 0 {
			return errors.New("not observed yet")
		}
		return nil
	})
	w, err := f.get(context.Background(), "inherits")
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Finalizers) != 0 || j.count(j.do, "inherits") != 0 {
		t.Errorf("namespace skip policy ignored: finalizers %v, %d Do calls", w.Finalizers, j.count(j.do, "inherits"))
	}
	assertNoSecret(t, f, "inherits")
}

func TestDeleteRunsCleanup(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.run(newReconciler("cleanup", newJournal(), true), runOptions{})
	w := f.create("w", 6, 3, nil)
	f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
	f.waitSecret("w")
	if err := f.c.Delete(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	f.waitGone("w")
	assertNoSecret(t, f, "w")
	f.waitEvent("w", conditions.ReasonCleanedUp)
}

// waitEvent waits until exactly one event with the reason is recorded about
// the Widget.
func (f *fixture) waitEvent(widget string, reason conditions.Reason) {
	f.t.Helper()
	bosuntest.Eventually(f.t, func(ctx context.Context) error {
		got, err := f.events(ctx, widget)
		if err != nil {
			return err
		}
		if got[reason] != 1 {
			return fmt.Errorf("events %v, want one %s", got, reason)
		}
		return nil
	})
}

func TestDetachOnDeleteKeepsOutput(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.run(newReconciler("detach", newJournal(), true), runOptions{})
	f.create("w", 6, 3, map[string]string{bosun.AnnotationReconcilePolicy: string(bosun.PolicyDetachOnDelete)})
	w := f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
	if !controllerutil.ContainsFinalizer(w, testFinalizer) {
		t.Fatalf("finalizers = %v, want %s", w.Finalizers, testFinalizer)
	}
	f.waitSecret("w")
	if err := f.c.Delete(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	f.waitGone("w")
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: outputName("w")}, &corev1.Secret{}); err != nil {
		t.Errorf("output secret after detach: %v", err)
	}
	f.waitEvent("w", conditions.ReasonDetached)
}

func (f *fixture) waitSecret(widget string) {
	f.t.Helper()
	bosuntest.Eventually(f.t, func(ctx context.Context) error {
		return f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: outputName(widget)}, &corev1.Secret{})
	})
}

func (f *fixture) waitGone(name string) {
	f.t.Helper()
	bosuntest.Eventually(f.t, func(ctx context.Context) error {
		_, err := f.get(ctx, name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return errors.New("still there")
	})
}

func TestTwoInstancesReconcileDisjointObjects(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	j := newJournal()
	logs := map[string]*passLog{}
	for _, inst := range []string{"a", "b"} {
		logs[inst] = &passLog{}
		r := &bosun.Reconciler[*testapi.Widget]{
			Name:     "instance-" + inst,
			Instance: inst,
			Steps:    []bosun.Step[*testapi.Widget]{&divide{j: j, instance: inst}},
			Options:  bosun.Options{Observers: []bosun.PassObserver{logs[inst]}},
		}
		f.run(r, runOptions{})
	}
	const n = 30
	names := make([]string, 0, n)
	for i := range n {
		name := fmt.Sprintf("w%02d", i)
		var ann map[string]string
		switch i % 3 {
		case 0:
			ann = map[string]string{bosun.AnnotationOperatorInstance: "a"}
		case 1:
			ann = map[string]string{bosun.AnnotationOperatorInstance: "b"}
		}
		f.create(name, 1, 1, ann)
		names = append(names, name)
	}
	for _, name := range names {
		f.waitReady(name, metav1.ConditionTrue, conditions.ReasonSucceeded)
	}
	// Each instance sees every write of the other: once both have had a
	// pass of each Widget that found it Ready, which its last write made
	// it, no pass is left that could run Do.
	bosuntest.Eventually(t, func(context.Context) error {
		for inst, log := range logs {
			for _, name := range names {
				if !slices.ContainsFunc(log.since(name, 0), func(r bosun.PassReport) bool {
					c := conditions.Find(r.Conditions, conditions.TypeReady)
					return c != nil && c.Status == metav1.ConditionTrue
				}) {
					return fmt.Errorf("instance %s has had no pass of %s that found it Ready", inst, name)
				}
			}
		}
		return nil
	})
	for i, name := range names {
		w, err := f.get(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		owner := w.Annotations[bosun.AnnotationOperatorInstance]
		j.mu.Lock()
		got := j.instances[name]
		j.mu.Unlock()
		if diff := cmp.Diff(map[string]bool{owner: true}, got); diff != "" {
			t.Errorf("%s, claimed by %q: instances that ran Do (-want +got):\n%s", name, owner, diff)
		}
		if want := map[int]string{0: "a", 1: "b"}[i%3]; want != "" && owner != want {
			t.Errorf("%s: owner %q, want %q", name, owner, want)
		}
	}
}

func TestConflictsAreSilentRequeues(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	j := newJournal()
	conflicts := &bosuntest.ConflictInjector{Fraction: 0.3, Seed: 3, Kinds: []string{"Widget"}}
	logs := &bosuntest.LogRecorder{}
	f.run(newReconciler("conflicts", j, true), runOptions{client: conflicts.Wrap, logs: logs})
	const n = 100
	for i := range n {
		f.create(fmt.Sprintf("w%03d", i), int64(i), 1, nil)
	}
	for i := range n {
		f.waitReady(fmt.Sprintf("w%03d", i), metav1.ConditionTrue, conditions.ReasonSucceeded)
	}
	if conflicts.Injected() == 0 {
		t.Fatal("no conflicts injected")
	}
	t.Logf("%d conflicts injected", conflicts.Injected())
	for _, e := range logs.Errors() {
		// The namespace is named after the test, which mentions conflicts.
		line := strings.ReplaceAll(e.String(), f.ns, "<namespace>")
		if apierrors.IsConflict(e.Err) || strings.Contains(strings.ToLower(line), "conflict") {
			t.Errorf("error log mentions a conflict: %s", e)
		}
	}
	// The engine's log lines carry the request's identity, with the keys
	// of controller-runtime's builder.
	claimedLines := 0
	for _, e := range logs.Entries() {
		if e.Message != "claimed" {
			continue
		}
		claimedLines++
		for _, key := range []string{"controller", "controllerGroup", "controllerKind", "Widget", "namespace", "name", "reconcileID", "policy"} {
			if _, ok := e.Value(key); !ok {
				t.Errorf("log line %s has no %s", e, key)
			}
		}
	}
	if claimedLines < n {
		t.Errorf("%d claimed log lines, want at least %d", claimedLines, n)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for name, stored := range j.finalizerAtFirstDo {
		if !stored {
			t.Errorf("widget %s: finalizer not stored when Do first ran", name)
		}
	}
}
