package bosun_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// These tests run the engine against controller-runtime's fake client, for
// the rules that need no API server.

func fakeClient(t *testing.T, funcs *interceptor.Funcs, objs ...client.Object) client.WithWatch {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := testapi.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&testapi.Widget{}).WithObjects(objs...)
	if funcs != nil {
		b = b.WithInterceptorFuncs(*funcs)
	}
	return b.Build()
}

func fakeWidget(name string, finalizers []string, deleting bool, annotations map[string]string) *testapi.Widget {
	w := &testapi.Widget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Generation: 1, Finalizers: finalizers, Annotations: annotations},
		Spec:       testapi.WidgetSpec{Value: 6, Divisor: 3},
	}
	if deleting {
		w.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	}
	return w
}

// trace records the calls of traced steps, in order.
type trace struct {
	mu    sync.Mutex
	calls []string
}

func (tr *trace) add(s string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.calls = append(tr.calls, s)
}

func (tr *trace) get() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.calls...)
}

// traced is a step whose every phase is recorded and answers with the
// outcome configured for it.
type traced struct {
	name    string
	tr      *trace
	do      func() (ctrl.Result, error)
	cleanup func() (ctrl.Result, error)
	post    error
}

func (s *traced) Name() string { return s.name }

func (s *traced) Do(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	s.tr.add(s.name + ".do")
	if s.do != nil {
		return s.do()
	}
	return ctrl.Result{}, nil
}

func (s *traced) Cleanup(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	s.tr.add(s.name + ".cleanup")
	if s.cleanup != nil {
		return s.cleanup()
	}
	return ctrl.Result{}, nil
}

func (s *traced) Post(context.Context, *bosun.Pass[*testapi.Widget]) error {
	s.tr.add(s.name + ".post")
	return s.post
}

func reconcileWidget(t *testing.T, r *bosun.Reconciler[*testapi.Widget], c client.Client, name string) (ctrl.Result, *testapi.Widget, error) {
	t.Helper()
	key := client.ObjectKey{Namespace: "ns", Name: name}
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
	w := &testapi.Widget{}
	if gerr := c.Get(context.Background(), key, w); apierrors.IsNotFound(gerr) {
		w = nil
	} else if gerr != nil {
		t.Fatal(gerr)
	}
	return res, w, err
}

func readyOf(w *testapi.Widget) string {
	c := conditions.Find(w.Status.Conditions, conditions.TypeReady)
	if c == nil {
		return "none"
	}
	return fmt.Sprintf("%s/%s: %s", c.Status, c.Reason, c.Message)
}

func TestCleanupReverseOrderStopsAtFirstNotDone(t *testing.T) {
	tr := &trace{}
	pending := true
	steps := []bosun.Step[*testapi.Widget]{
		&traced{name: "a", tr: tr},
		&traced{name: "b", tr: tr, cleanup: func() (ctrl.Result, error) {
			if pending {
				return ctrl.Result{RequeueAfter: time.Second}, nil
			}
			return ctrl.Result{}, nil
		}},
		&traced{name: "c", tr: tr},
	}
	c := fakeClient(t, nil, fakeWidget("w", []string{testFinalizer, "other.example.com/keep"}, true, nil))
	r := &bosun.Reconciler[*testapi.Widget]{Name: "cleanup", Client: c, Finalizer: testFinalizer, Steps: steps}

	res, w, err := reconcileWidget(t, r, c, "w")
	if err != nil || res.RequeueAfter != time.Second {
		t.Errorf("first pass = %+v, %v; want RequeueAfter 1s", res, err)
	}
	if diff := cmp.Diff([]string{"c.cleanup", "b.cleanup", "a.post", "b.post", "c.post"}, tr.get()); diff != "" {
		t.Errorf("first pass calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{testFinalizer, "other.example.com/keep"}, w.Finalizers); diff != "" {
		t.Errorf("finalizers while cleaning up (-want +got):\n%s", diff)
	}

	pending = false
	tr.calls = nil
	res, w, err = reconcileWidget(t, r, c, "w")
	if err != nil || res != (ctrl.Result{}) {
		t.Errorf("second pass = %+v, %v; want done", res, err)
	}
	if diff := cmp.Diff([]string{"c.cleanup", "b.cleanup", "a.cleanup", "a.post", "b.post", "c.post"}, tr.get()); diff != "" {
		t.Errorf("second pass calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"other.example.com/keep"}, w.Finalizers); diff != "" {
		t.Errorf("finalizers after cleanup (-want +got):\n%s", diff)
	}
}

func TestSkipAndDetachReleaseWithoutCleanup(t *testing.T) {
	for _, policy := range []bosun.Policy{bosun.PolicySkip, bosun.PolicyDetachOnDelete} {
		t.Run(string(policy), func(t *testing.T) {
			tr := &trace{}
			c := fakeClient(t, nil, fakeWidget("w", []string{testFinalizer}, true, map[string]string{bosun.AnnotationReconcilePolicy: string(policy)}))
			r := &bosun.Reconciler[*testapi.Widget]{Name: "detach", Client: c, Finalizer: testFinalizer,
				Steps: []bosun.Step[*testapi.Widget]{&traced{name: "a", tr: tr}}}
			_, w, err := reconcileWidget(t, r, c, "w")
			if err != nil {
				t.Fatal(err)
			}
			if w != nil {
				t.Errorf("object still there with finalizers %v", w.Finalizers)
			}
			if diff := cmp.Diff([]string{"a.post"}, tr.get()); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOutcomes(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name      string
		steps     func(tr *trace) []bosun.Step[*testapi.Widget]
		parallel  bool // the steps run in a ParallelJoin
		wantCalls []string
		wantReady string
		wantRes   ctrl.Result
		wantErr   string // substring; empty means nil
		terminal  bool
	}{
		{
			name: "all succeed",
			steps: func(tr *trace) []bosun.Step[*testapi.Widget] {
				return []bosun.Step[*testapi.Widget]{&traced{name: "a", tr: tr}, &traced{name: "b", tr: tr}}
			},
			wantCalls: []string{"a.do", "b.do", "a.post", "b.post"},
			wantReady: "True/Succeeded: ",
		},
		{
			name: "plain error stops later steps, posts still run, backoff",
			steps: func(tr *trace) []bosun.Step[*testapi.Widget] {
				return []bosun.Step[*testapi.Widget]{
					&traced{name: "a", tr: tr, do: func() (ctrl.Result, error) { return ctrl.Result{}, boom }},
					&traced{name: "b", tr: tr},
				}
			},
			wantCalls: []string{"a.do", "a.post", "b.post"},
			wantReady: "False/ReconcileError: boom",
			wantErr:   "boom",
			wantRes:   ctrl.Result{Priority: ptr.To(bosun.RetryPriority)},
		},
		{
			name: "terminal error",
			steps: func(tr *trace) []bosun.Step[*testapi.Widget] {
				return []bosun.Step[*testapi.Widget]{&traced{name: "a", tr: tr, do: func() (ctrl.Result, error) {
					return ctrl.Result{}, conditions.Terminal("BadSpec", boom)
				}}}
			},
			wantCalls: []string{"a.do", "a.post"},
			wantReady: "False/BadSpec: boom",
			wantErr:   "boom",
			terminal:  true,
		},
		{
			name: "post error is reported",
			steps: func(tr *trace) []bosun.Step[*testapi.Widget] {
				return []bosun.Step[*testapi.Widget]{&traced{name: "a", tr: tr, post: boom}}
			},
			wantCalls: []string{"a.do", "a.post"},
			wantReady: "False/ReconcileError: boom",
			wantErr:   "boom",
			wantRes:   ctrl.Result{Priority: ptr.To(bosun.RetryPriority)},
		},
		{
			// Ready cannot be True: b has not run for this generation.
			name: "requeue is passed on and status saved",
			steps: func(tr *trace) []bosun.Step[*testapi.Widget] {
				return []bosun.Step[*testapi.Widget]{
					&traced{name: "a", tr: tr, do: func() (ctrl.Result, error) { return ctrl.Result{RequeueAfter: 5 * time.Second}, nil }},
					&traced{name: "b", tr: tr},
				}
			},
			wantCalls: []string{"a.do", "a.post", "b.post"},
			wantReady: `False/Progressing: step "a" asked to come back before 1 later step(s) ran`,
			wantRes:   ctrl.Result{RequeueAfter: 5 * time.Second},
		},
		{
			name: "a requeue of the last step keeps Ready",
			steps: func(tr *trace) []bosun.Step[*testapi.Widget] {
				return []bosun.Step[*testapi.Widget]{
					&traced{name: "a", tr: tr},
					&traced{name: "b", tr: tr, do: func() (ctrl.Result, error) { return ctrl.Result{RequeueAfter: 5 * time.Second}, nil }},
				}
			},
			wantCalls: []string{"a.do", "b.do", "a.post", "b.post"},
			wantReady: "True/Succeeded: ",
			wantRes:   ctrl.Result{RequeueAfter: 5 * time.Second},
		},
		{
			name: "ErrStop stops quietly",
			steps: func(tr *trace) []bosun.Step[*testapi.Widget] {
				return []bosun.Step[*testapi.Widget]{
					&traced{name: "a", tr: tr, do: func() (ctrl.Result, error) { return ctrl.Result{}, bosun.ErrStop }},
					&traced{name: "b", tr: tr},
				}
			},
			wantCalls: []string{"a.do", "a.post", "b.post"},
			wantReady: "True/Succeeded: ",
		},
		{
			name: "panic in a parallel workflow",
			steps: func(tr *trace) []bosun.Step[*testapi.Widget] {
				return []bosun.Step[*testapi.Widget]{
					&traced{name: "a", tr: tr, do: func() (ctrl.Result, error) { panic("oops") }},
					&traced{name: "b", tr: tr},
				}
			},
			parallel:  true,
			wantCalls: []string{"a.do", "b.do", "a.post", "b.post"},
			wantReady: "False/Panic: ",
			wantErr:   "oops",
			wantRes:   ctrl.Result{Priority: ptr.To(bosun.RetryPriority)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &trace{}
			c := fakeClient(t, nil, fakeWidget("w", nil, false, nil))
			steps := tc.steps(tr)
			r := &bosun.Reconciler[*testapi.Widget]{Name: "outcomes", Client: c, Finalizer: testFinalizer, Steps: steps}
			if tc.parallel {
				r.Steps = []bosun.Step[*testapi.Widget]{bosun.ParallelJoin(steps...)}
			}
			res, w, err := reconcileWidget(t, r, c, "w")
			calls := tr.get()
			if tc.parallel { // the order of the Do calls is free
				calls = sortedPrefix(calls, 2)
			}
			if diff := cmp.Diff(tc.wantCalls, calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if got := readyOf(w); !strings.HasPrefix(got, tc.wantReady) {
				t.Errorf("Ready = %q, want prefix %q", got, tc.wantReady)
			}
			if diff := cmp.Diff(tc.wantRes, res); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("error = %v, want nil", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error = %v, want one containing %q", err, tc.wantErr)
			}
			if isTerminal := errors.Is(err, reconcileTerminal); err != nil && isTerminal != tc.terminal {
				t.Errorf("terminal = %t, want %t (error %v)", isTerminal, tc.terminal, err)
			}
			if w.Status.ObservedGeneration != w.Generation {
				t.Errorf("observedGeneration = %d, want %d", w.Status.ObservedGeneration, w.Generation)
			}
		})
	}
}

// sortedPrefix sorts the first n calls, whose order is not defined.
func sortedPrefix(calls []string, n int) []string {
	if len(calls) >= n && n == 2 && calls[0] > calls[1] {
		calls[0], calls[1] = calls[1], calls[0]
	}
	return calls
}

// conditionSteps owns two conditions and sets them as told.
type conditionSteps struct {
	a, b metav1.ConditionStatus
	err  error
}

func (s *conditionSteps) Name() string         { return "conds" }
func (s *conditionSteps) Conditions() []string { return []string{"A", "B"} }

func (s *conditionSteps) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	conds := req.Object.Status.Conditions
	for typ, st := range map[string]metav1.ConditionStatus{"A": s.a, "B": s.b} {
		if st != "" {
			conditions.Set(&conds, metav1.Condition{Type: typ, Status: st, Reason: "Set" + typ, Message: "set " + typ}, metav1.Now())
		}
	}
	req.Object.Status.Conditions = conds
	return ctrl.Result{}, s.err
}

func TestConditions(t *testing.T) {
	for _, tc := range []struct {
		name string
		step *conditionSteps
		want map[string]string
	}{
		{
			name: "first visit leaves unset conditions unknown",
			step: &conditionSteps{a: metav1.ConditionTrue},
			want: map[string]string{"A": "True/SetA", "B": "Unknown/Initializing", "Ready": "Unknown/Initializing"},
		},
		{
			name: "all true",
			step: &conditionSteps{a: metav1.ConditionTrue, b: metav1.ConditionTrue},
			want: map[string]string{"A": "True/SetA", "B": "True/SetB", "Ready": "True/Succeeded"},
		},
		{
			name: "worst wins",
			step: &conditionSteps{a: metav1.ConditionUnknown, b: metav1.ConditionFalse},
			want: map[string]string{"A": "Unknown/SetA", "B": "False/SetB", "Ready": "False/SetB"},
		},
		{
			name: "typed error names its condition",
			step: &conditionSteps{a: metav1.ConditionTrue, err: &conditions.Error{Type: "B", Reason: "Broken", Severity: conditions.SeverityWarning, Err: errors.New("b broke")}},
			want: map[string]string{"A": "True/SetA", "B": "False/Broken", "Ready": "False/Broken"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeClient(t, nil, fakeWidget("w", nil, false, nil))
			r := &bosun.Reconciler[*testapi.Widget]{Name: "conditions", Client: c, Finalizer: testFinalizer, Steps: []bosun.Step[*testapi.Widget]{tc.step}}
			_, w, _ := reconcileWidget(t, r, c, "w")
			got := map[string]string{}
			for _, cond := range w.Status.Conditions {
				got[cond.Type] = string(cond.Status) + "/" + cond.Reason
				if cond.ObservedGeneration != w.Generation {
					t.Errorf("%s: observedGeneration %d, want %d", cond.Type, cond.ObservedGeneration, w.Generation)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOwnedByOtherInstance(t *testing.T) {
	tr := &trace{}
	writes := 0
	funcs := &interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			writes++
			return c.Patch(ctx, obj, patch, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			writes++
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	}
	c := fakeClient(t, funcs, fakeWidget("w", nil, false, map[string]string{bosun.AnnotationOperatorInstance: "b", bosun.AnnotationReconcilePolicy: "bogus"}))
	rec := events.NewFakeRecorder(10)
	r := &bosun.Reconciler[*testapi.Widget]{Name: "instance", Client: c, Instance: "a", Recorder: rec, Finalizer: testFinalizer,
		Steps: []bosun.Step[*testapi.Widget]{&traced{name: "a", tr: tr}}}
	for range 3 {
		if _, _, err := reconcileWidget(t, r, c, "w"); err != nil {
			t.Fatal(err)
		}
	}
	if len(tr.get()) != 0 || writes != 0 {
		t.Errorf("acted on another instance's object: calls %v, %d writes", tr.get(), writes)
	}
	if n := len(rec.Events); n != 1 {
		t.Fatalf("%d events, want 1", n)
	}
	if e := <-rec.Events; !strings.Contains(e, string(conditions.ReasonOwnedByOtherInstance)) || !strings.Contains(e, `"b"`) {
		t.Errorf("event %q does not say who owns the object", e)
	}
}

func TestConflictOnSaveIsSilentRequeue(t *testing.T) {
	funcs := &interceptor.Funcs{
		SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
			return apierrors.NewConflict(schema.GroupResource{Group: "test.bosun.dev", Resource: "widgets"}, "w", errors.New("changed"))
		},
	}
	c := fakeClient(t, funcs, fakeWidget("w", nil, false, nil))
	rec := events.NewFakeRecorder(10)
	r := &bosun.Reconciler[*testapi.Widget]{Name: "conflict", Client: c, Finalizer: testFinalizer, Recorder: rec, Steps: []bosun.Step[*testapi.Widget]{&traced{name: "a", tr: &trace{}}}}
	res, w, err := reconcileWidget(t, r, c, "w")
	if err != nil || res.RequeueAfter != bosun.ConflictRequeueDelay {
		t.Errorf("outcome = %+v, %v; want a quiet requeue after %s", res, err, bosun.ConflictRequeueDelay)
	}
	if len(w.Status.Conditions) != 0 {
		t.Errorf("conflict left conditions %v", w.Status.Conditions)
	}
	close(rec.Events)
	for e := range rec.Events {
		if !strings.Contains(e, string(conditions.ReasonClaimed)) {
			t.Errorf("event after a conflict: %q", e)
		}
	}
}

func TestNotFoundIsQuiet(t *testing.T) {
	c := fakeClient(t, nil)
	r := &bosun.Reconciler[*testapi.Widget]{Name: "gone", Client: c, Finalizer: testFinalizer, Steps: []bosun.Step[*testapi.Widget]{&traced{name: "a", tr: &trace{}}}}
	res, _, err := reconcileWidget(t, r, c, "missing")
	if err != nil || res != (ctrl.Result{}) {
		t.Errorf("outcome = %+v, %v; want nothing", res, err)
	}
}

func TestNamespaceAnnotationReadFromCache(t *testing.T) {
	tr := &trace{}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Annotations: map[string]string{bosun.AnnotationReconcilePolicy: "bogus"}}}
	c := fakeClient(t, nil, ns, fakeWidget("w", nil, false, nil))
	r := &bosun.Reconciler[*testapi.Widget]{Name: "ns-policy", Client: c, Finalizer: testFinalizer, Steps: []bosun.Step[*testapi.Widget]{&traced{name: "a", tr: tr}}}
	res, w, err := reconcileWidget(t, r, c, "w")
	if err != nil || res != (ctrl.Result{}) {
		t.Errorf("outcome = %+v, %v; want no requeue", res, err)
	}
	if got := readyOf(w); !strings.HasPrefix(got, "False/InvalidPolicy") || !strings.Contains(got, `"bogus"`) {
		t.Errorf("Ready = %q, want InvalidPolicy naming the value", got)
	}
	if len(tr.get()) != 0 {
		t.Errorf("steps ran: %v", tr.get())
	}
}

// reconcileTerminal matches every terminal error with errors.Is.
var reconcileTerminal = reconcile.TerminalError(nil)

func TestSkipEventOnce(t *testing.T) {
	j := newJournal()
	c := fakeClient(t, nil, fakeWidget("w", nil, false, map[string]string{bosun.AnnotationReconcilePolicy: string(bosun.PolicySkip)}))
	rec := events.NewFakeRecorder(10)
	r := &bosun.Reconciler[*testapi.Widget]{Name: "skip", Client: c, Recorder: rec, Finalizer: testFinalizer,
		Steps: []bosun.Step[*testapi.Widget]{&divide{j: j}, &output{j: j}}}
	var w *testapi.Widget
	for range 3 {
		var err error
		if _, w, err = reconcileWidget(t, r, c, "w"); err != nil {
			t.Fatal(err)
		}
	}
	close(rec.Events)
	var got []string
	for e := range rec.Events {
		got = append(got, e)
	}
	if diff := cmp.Diff([]string{`Normal ReconcileSkipped reconcile policy "skip": only observing`}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if j.count(j.observes, "w") != 3 || j.count(j.do, "w") != 0 || j.count(j.posts, "w") != 3 {
		t.Errorf("observe %d, do %d, post %d; want 3, 0, 3", j.count(j.observes, "w"), j.count(j.do, "w"), j.count(j.posts, "w"))
	}
	if len(w.Finalizers) != 0 || w.Status.Result != -1 {
		t.Errorf("finalizers %v, result %d; want none and -1", w.Finalizers, w.Status.Result)
	}
}

// laggingCache intercepts a fake client: while stale is set, Gets of
// Widgets return it, as a cache that missed the newer versions would; it
// counts those Gets and every write.
type laggingCache struct {
	stale        *testapi.Widget
	gets, writes int
}

func (l *laggingCache) funcs() interceptor.Funcs {
	return interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if w, ok := obj.(*testapi.Widget); ok {
				l.gets++
				if l.stale != nil {
					l.stale.DeepCopyInto(w)
					return nil
				}
			}
			return c.Get(ctx, key, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			l.writes++
			return c.Patch(ctx, obj, patch, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			l.writes++
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	}
}

// TestStaleCacheRequeues: a reconcile that loads a version the engine wrote
// over runs no step and writes nothing, and asks to be requeued after
// StaleCacheRetry in case the watch event of the newer version is filtered
// out.
func TestStaleCacheRequeues(t *testing.T) {
	lc := &laggingCache{}
	funcs := lc.funcs()
	c := fakeClient(t, &funcs, fakeWidget("w", nil, false, nil))
	before := &testapi.Widget{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "w"}, before); err != nil {
		t.Fatal(err)
	}
	tr := &trace{}
	r := &bosun.Reconciler[*testapi.Widget]{Name: "stale", Client: c, Finalizer: testFinalizer, Steps: []bosun.Step[*testapi.Widget]{&traced{name: "a", tr: tr}}}
	if _, _, err := reconcileWidget(t, r, c, "w"); err != nil {
		t.Fatal(err)
	}
	if lc.writes == 0 {
		t.Fatal("the first reconcile wrote nothing; the test needs a write to go stale against")
	}

	lc.stale, lc.writes = before, 0
	res, _, err := reconcileWidget(t, r, c, "w")
	if err != nil || res != (ctrl.Result{RequeueAfter: bosun.StaleCacheRetry}) {
		t.Errorf("stale reconcile = %+v, %v; want RequeueAfter %v", res, err, bosun.StaleCacheRetry)
	}
	if lc.writes != 0 {
		t.Errorf("stale reconcile wrote %d times, want 0", lc.writes)
	}
	if diff := cmp.Diff([]string{"a.do", "a.post"}, tr.get()); diff != "" {
		t.Errorf("steps run (-want +got):\n%s", diff)
	}
}

// TestStaleCacheReadsLiveAfterLimit: when the cache is still behind the
// engine's write after StaleCacheLimit (its watch lost the event), the pass
// reads the object from APIReader and runs on it, and keeps doing so at
// once while the cache stays behind; once the cache catches up, passes read
// from it again.
func TestStaleCacheReadsLiveAfterLimit(t *testing.T) {
	lc := &laggingCache{}
	live := fakeClient(t, nil, fakeWidget("w", nil, false, nil))
	c := interceptor.NewClient(live, lc.funcs())
	before := &testapi.Widget{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "w"}, before); err != nil {
		t.Fatal(err)
	}
	tr := &trace{}
	r := &bosun.Reconciler[*testapi.Widget]{
		Name: "stale", Client: c, APIReader: live, Finalizer: testFinalizer, Options: bosun.Options{StaleCacheLimit: 50 * time.Millisecond},
		Steps: []bosun.Step[*testapi.Widget]{&traced{name: "a", tr: tr}},
	}
	if _, _, err := reconcileWidget(t, r, c, "w"); err != nil {
		t.Fatal(err)
	}
	if lc.writes == 0 {
		t.Fatal("the first reconcile wrote nothing; the test needs a write to go stale against")
	}

	lc.stale, lc.writes = before, 0
	start := time.Now()
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "w"}})
	if err != nil || res != (ctrl.Result{RequeueAfter: bosun.StaleCacheRetry}) {
		t.Fatalf("first stale reconcile = %+v, %v; want RequeueAfter %v", res, err, bosun.StaleCacheRetry)
	}
	ran := len(tr.get())
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "w"}}); err != nil {
			return err
		}
		if len(tr.get()) == ran {
			return errors.New("no pass ran on the live object yet")
		}
		return nil
	}, bosuntest.Interval(10*time.Millisecond))
	if waited := time.Since(start); waited < r.Options.StaleCacheLimit {
		t.Errorf("a pass ran after %s, before StaleCacheLimit %s", waited, r.Options.StaleCacheLimit)
	}
	if lc.writes != 0 {
		t.Errorf("the pass on the live object, which the first pass had converged, wrote %d times; want 0", lc.writes)
	}

	// Still behind: the next pass reads live at once.
	ran = len(tr.get())
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "w"}}); err != nil {
		t.Fatal(err)
	}
	if len(tr.get()) == ran {
		t.Errorf("a pass with the cache still behind waited again; want it to read from the API server at once")
	}

	// Caught up: passes read the cache and run as usual.
	lc.stale = nil
	ran, lc.gets = len(tr.get()), 0
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "w"}}); err != nil {
		t.Fatal(err)
	}
	if len(tr.get()) == ran || lc.gets == 0 {
		t.Errorf("after the cache caught up: steps ran %v, cache reads %d; want a pass on the cache", len(tr.get()) > ran, lc.gets)
	}
}

// TestPollsRequeueAtLowPriority: a pass that writes nothing and asks to run
// again later is a poll, requeued at low priority so that it cannot starve
// the objects a restarted controller has yet to reconcile; a failed pass
// is retried below that, behind every fresher piece of work; a pass that
// wrote, a terminal error and a priority a step chose keep theirs.
func TestPollsRequeueAtLowPriority(t *testing.T) {
	low := ptr.To(handler.LowPriority)
	for _, tc := range []struct {
		name        string
		do          func() (ctrl.Result, error)
		first, next ctrl.Result // the results of the first pass (which claims) and of the second
		nextErr     bool
	}{
		{
			name:  "poll",
			do:    func() (ctrl.Result, error) { return ctrl.Result{RequeueAfter: time.Minute}, nil },
			first: ctrl.Result{RequeueAfter: time.Minute},
			next:  ctrl.Result{RequeueAfter: time.Minute, Priority: low},
		},
		{
			name:  "step's own priority",
			do:    func() (ctrl.Result, error) { return ctrl.Result{RequeueAfter: time.Minute, Priority: ptr.To(7)}, nil },
			first: ctrl.Result{RequeueAfter: time.Minute, Priority: ptr.To(7)},
			next:  ctrl.Result{RequeueAfter: time.Minute, Priority: ptr.To(7)},
		},
		{
			name:  "done",
			do:    func() (ctrl.Result, error) { return ctrl.Result{}, nil },
			first: ctrl.Result{},
			next:  ctrl.Result{},
		},
		{
			name:    "error",
			do:      func() (ctrl.Result, error) { return ctrl.Result{}, errors.New("boom") },
			next:    ctrl.Result{Priority: ptr.To(bosun.RetryPriority)},
			nextErr: true,
		},
		{
			name:    "terminal error",
			do:      func() (ctrl.Result, error) { return ctrl.Result{}, conditions.Terminal("BadSpec", errors.New("boom")) },
			next:    ctrl.Result{},
			nextErr: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeClient(t, nil, fakeWidget("w", nil, false, nil))
			r := &bosun.Reconciler[*testapi.Widget]{Name: "polls", Client: c, Finalizer: testFinalizer,
				Steps: []bosun.Step[*testapi.Widget]{&traced{name: "a", tr: &trace{}, do: tc.do}}}
			first, _, _ := reconcileWidget(t, r, c, "w")
			if diff := cmp.Diff(tc.first, first); diff != "" && !tc.nextErr {
				t.Errorf("first pass (-want +got):\n%s", diff)
			}
			next, _, err := reconcileWidget(t, r, c, "w")
			if (err != nil) != tc.nextErr {
				t.Errorf("second pass error = %v, want error: %t", err, tc.nextErr)
			}
			if diff := cmp.Diff(tc.next, next); diff != "" {
				t.Errorf("second pass (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDeletedBeforeClaimIsLetGo: an object deleted before the engine
// claimed it (none of its finalizers is the engine's) gets no Cleanup, no
// Do and no write: there is nothing of the engine's to release.
func TestDeletedBeforeClaimIsLetGo(t *testing.T) {
	var writes int
	funcs := &interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			writes++
			return c.Patch(ctx, obj, patch, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			writes++
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	}
	c := fakeClient(t, funcs, fakeWidget("w", []string{"other.example.com/keep"}, true, nil))
	tr := &trace{}
	r := &bosun.Reconciler[*testapi.Widget]{Name: "unclaimed", Client: c, Finalizer: testFinalizer, Steps: []bosun.Step[*testapi.Widget]{&traced{name: "a", tr: tr}}}
	res, w, err := reconcileWidget(t, r, c, "w")
	if err != nil || res != (ctrl.Result{}) {
		t.Errorf("reconcile = %+v, %v; want a zero result and no error", res, err)
	}
	if diff := cmp.Diff([]string(nil), tr.get()); diff != "" {
		t.Errorf("steps run (-want +got):\n%s", diff)
	}
	if writes != 0 {
		t.Errorf("%d writes, want 0", writes)
	}
	if diff := cmp.Diff([]string{"other.example.com/keep"}, w.Finalizers); diff != "" {
		t.Errorf("finalizers (-want +got):\n%s", diff)
	}
}
