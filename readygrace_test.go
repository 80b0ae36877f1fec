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
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// The condition blip owns, the reason of its errors, and the annotation
// that makes it fail.
const (
	typeFetched                         = "Fetched"
	reasonFetchFailed conditions.Reason = "FetchFailed"
	annFail                             = "test.bosun.dev/fail"
)

// blip is a step that owns the condition Fetched and sets it True when its
// Do succeeds. Do fails with a retried error while it has failures left
// to give (left, for any Widget), or while the Widget's annotation
// test.bosun.dev/fail asks: "warning", a retried error on every pass, and
// "terminal", a terminal one. Cleanup fails under "warning". Its retried
// errors name Fetched, unless untyped is set: then they are plain errors
// that name no condition.
type blip struct {
	left    atomic.Int32
	untyped bool
}

func (*blip) Name() string         { return "blip" }
func (*blip) Conditions() []string { return []string{typeFetched} }

func (b *blip) retried() error {
	if b.untyped {
		return errors.New("the fetch failed")
	}
	return &conditions.Error{Type: typeFetched, Reason: reasonFetchFailed, Err: errors.New("the fetch failed")}
}

func (b *blip) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	switch req.Object.Annotations[annFail] {
	case "terminal":
		return ctrl.Result{}, &conditions.Error{Type: typeFetched, Reason: reasonFetchFailed, Severity: conditions.SeverityError, Err: errors.New("the fetch failed for good")}
	case "warning":
		return ctrl.Result{}, b.retried()
	}
	for n := b.left.Load(); n > 0; n = b.left.Load() {
		if b.left.CompareAndSwap(n, n-1) {
			return ctrl.Result{}, b.retried()
		}
	}
	conds := req.Object.Status.Conditions
	conditions.Set(&conds, metav1.Condition{Type: typeFetched, Status: metav1.ConditionTrue, Reason: "Fetched", ObservedGeneration: req.Object.Generation}, metav1.Now())
	req.Object.Status.Conditions = conds
	return ctrl.Result{}, nil
}

func (b *blip) Cleanup(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	if req.Object.Annotations[annFail] == "warning" {
		return ctrl.Result{}, b.retried()
	}
	return ctrl.Result{}, nil
}

// versions records, through a watch, every version of one Widget that the
// API server stores.
type versions struct {
	mu     sync.Mutex
	seen   []*testapi.Widget
	closed bool
}

// watchVersions watches the Widget name from resourceVersion rv on: the
// versions stored after rv, in order.
func (f *fixture) watchVersions(name, rv string) *versions {
	f.t.Helper()
	wc, err := client.NewWithWatch(f.cp.Config, client.Options{Scheme: f.cp.Scheme})
	if err != nil {
		f.t.Fatal(err)
	}
	w, err := wc.Watch(f.t.Context(), &testapi.WidgetList{}, &client.ListOptions{
		Namespace:     f.ns,
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name),
		Raw:           &metav1.ListOptions{ResourceVersion: rv},
	})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(w.Stop)
	v := &versions{}
	go func() {
		for ev := range w.ResultChan() {
			if obj, ok := ev.Object.(*testapi.Widget); ok {
				v.mu.Lock()
				v.seen = append(v.seen, obj)
				v.mu.Unlock()
			}
		}
		v.mu.Lock()
		v.closed = true
		v.mu.Unlock()
	}()
	return v
}

// all returns the versions seen so far; it fails the test if the watch
// ended, since versions may then be missing.
func (v *versions) all(t *testing.T) []*testapi.Widget {
	t.Helper()
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		t.Fatal("the watch of the Widget's versions ended early")
	}
	return append([]*testapi.Widget(nil), v.seen...)
}

// condOf is the condition typ of w as status/reason, or "none".
func condOf(w *testapi.Widget, typ string) string {
	c := conditions.Find(w.Status.Conditions, typ)
	if c == nil {
		return "none"
	}
	return string(c.Status) + "/" + c.Reason
}

// TestTransientErrorKeepsReady fails the step of a Ready Widget once, the
// pass after it succeeding: no version the API server stores has Ready
// other than True, the failure shows in the step's own condition (or,
// for an error that names none, in Reconciling under Options.KStatus),
// kstatus reads InProgress then and never Failed, and the failure costs
// what it costs without the grace: one status write that shows it, one
// that clears it, and one Warning event.
func TestTransientErrorKeepsReady(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		kstatus bool
		untyped bool
		// shows tells whether a version shows the failure.
		shows func(*testapi.Widget) bool
	}{{
		name: "the step's condition shows it",
		shows: func(w *testapi.Widget) bool {
			c := conditions.Find(w.Status.Conditions, typeFetched)
			return c != nil && c.Status == metav1.ConditionFalse && c.Reason == string(reasonFetchFailed) && c.Message == "the fetch failed"
		},
	}, {
		name:    "Reconciling shows it",
		kstatus: true,
		untyped: true,
		shows: func(w *testapi.Widget) bool {
			c := conditions.Find(w.Status.Conditions, conditions.TypeReconciling)
			return c != nil && c.Status == metav1.ConditionTrue && c.Reason == string(conditions.ReasonRetrying) && strings.Contains(c.Message, "the fetch failed")
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			b := &blip{untyped: tc.untyped}
			writes := &bosuntest.WriteCounter{}
			f.run(&bosun.Reconciler[*testapi.Widget]{
				Name:      fmt.Sprintf("grace-once-%t", tc.kstatus),
				Finalizer: testFinalizer,
				Steps:     []bosun.Step[*testapi.Widget]{b},
				Options:   bosun.Options{ReadyGrace: time.Minute, KStatus: tc.kstatus},
			}, runOptions{client: writes.Wrap})
			f.create("w", 1, 1, nil)
			w := f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
			vs := f.watchVersions("w", w.ResourceVersion)
			writes.Reset()
			b.left.Store(1)
			f.annotateWidget("w", "test.bosun.dev/poke", "1")

			var failing, cleared *testapi.Widget
			bosuntest.Eventually(t, func(context.Context) error {
				failing, cleared = nil, nil
				for _, v := range vs.all(t) {
					switch {
					case failing == nil && tc.shows(v):
						failing = v
					case failing != nil && condOf(v, typeFetched) == "True/Fetched" && condOf(v, conditions.TypeReconciling) == "none":
						cleared = v
					}
				}
				switch {
				case failing == nil:
					return errors.New("no stored version shows the failure")
				case cleared == nil:
					return errors.New("no stored version after the failure has cleared it")
				}
				return nil
			})
			for _, v := range append([]*testapi.Widget{w}, vs.all(t)...) {
				if got := condOf(v, conditions.TypeReady); got != "True/"+string(conditions.ReasonSucceeded) {
					t.Errorf("version %s: Ready %s, want True/%s in every version", v.ResourceVersion, got, conditions.ReasonSucceeded)
				}
				if st, conds := kstatusOf(t, v); st == status.FailedStatus {
					t.Errorf("version %s: kstatus Failed (%v) for an error that is retried", v.ResourceVersion, conds)
				}
			}
			if st, conds := kstatusOf(t, failing); tc.kstatus && st != status.InProgressStatus {
				t.Errorf("while retrying: kstatus %s (%v), want InProgress", st, conds)
			}
			if st, _ := kstatusOf(t, cleared); st != status.CurrentStatus {
				t.Errorf("once cleared: kstatus %s, want Current", st)
			}
			// Budget: as without the grace, the status write that shows
			// the failure and the one that clears it.
			var ofW []bosuntest.Write
			for _, wr := range writes.Writes() {
				if wr.Name == "w" {
					ofW = append(ofW, wr)
				}
			}
			if len(ofW) > 2 {
				t.Errorf("%d writes of the Widget for a failure the next pass cleared, want at most 2: %v", len(ofW), ofW)
			}
			// One Warning event, as without the grace.
			reason := reasonFetchFailed
			if tc.untyped {
				reason = conditions.ReasonError
			}
			f.waitWarnings("w", reason, 1)
		})
	}
}

// TestPersistentErrorTurnsReadyFalse fails the step of a Ready Widget on
// every pass: Ready stays True, with the failure in the step's condition
// and in Reconciling, until the failures have lasted the grace, counted
// from the first; then it turns False with the error, on time although
// the backoff of the retries would come later, and kstatus never reads
// Failed.
func TestPersistentErrorTurnsReadyFalse(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// The retries come 5 ms, 10 ms, ... apart: at about 5.1 s after the
	// first failure, then at 10.2 s. The grace counts from the first
	// failure's second (lastTransitionTime), at most 1 s before it: it
	// ends between the two retries.
	const grace = 7 * time.Second
	f.run(&bosun.Reconciler[*testapi.Widget]{
		Name:      "grace-persistent",
		Finalizer: testFinalizer,
		Steps:     []bosun.Step[*testapi.Widget]{&blip{}},
		Options:   bosun.Options{ReadyGrace: grace, KStatus: true},
	}, runOptions{})
	f.create("w", 1, 1, nil)
	w := f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
	vs := f.watchVersions("w", w.ResourceVersion)
	f.annotateWidget("w", annFail, "warning")

	w = f.waitReady("w", metav1.ConditionFalse, reasonFetchFailed)
	ready := conditions.Find(w.Status.Conditions, conditions.TypeReady)
	fetched := conditions.Find(w.Status.Conditions, typeFetched)
	reconciling := conditions.Find(w.Status.Conditions, conditions.TypeReconciling)
	if ready.Message != "the fetch failed" {
		t.Errorf("Ready message %q, want the error's", ready.Message)
	}
	if fetched.Status != metav1.ConditionFalse || fetched.Reason != string(reasonFetchFailed) {
		t.Errorf("Fetched %s/%s, want False/%s", fetched.Status, fetched.Reason, reasonFetchFailed)
	}
	if reconciling == nil || reconciling.Status != metav1.ConditionTrue || reconciling.Reason != string(reasonFetchFailed) || !reconciling.LastTransitionTime.Equal(&fetched.LastTransitionTime) {
		t.Errorf("Reconciling %+v, want True/%s since the first failure (%s)", reconciling, reasonFetchFailed, fetched.LastTransitionTime)
	}
	// Whole seconds both: the grace ends on a second.
	after := ready.LastTransitionTime.Sub(fetched.LastTransitionTime.Time)
	if after < grace || after > grace+2*time.Second {
		t.Errorf("Ready turned False %s after the first failure, want %s (and at most 2 s later)", after, grace)
	}

	held := 0
	for _, v := range vs.all(t) {
		if st, conds := kstatusOf(t, v); st == status.FailedStatus {
			t.Errorf("version %s: kstatus Failed (%v) for an error that is retried", v.ResourceVersion, conds)
		}
		if condOf(v, conditions.TypeReady) == "True/"+string(conditions.ReasonSucceeded) && condOf(v, typeFetched) == "False/"+string(reasonFetchFailed) {
			held++
			if got := condOf(v, conditions.TypeReconciling); got != "True/"+string(conditions.ReasonRetrying) {
				t.Errorf("version %s, Ready held: Reconciling %s, want True/%s", v.ResourceVersion, got, conditions.ReasonRetrying)
			}
		}
	}
	if held == 0 {
		t.Error("no stored version held Ready True while the step failed")
	}
	if st, _ := kstatusOf(t, w); st != status.InProgressStatus {
		t.Errorf("after the grace: kstatus %s, want InProgress (the error is still retried)", st)
	}
}

// TestNoGraceWhereReadyCannotHold: with a grace longer than the test
// waits, Ready turns False at once for a terminal error, for a retried
// error of a new generation, of an object being deleted (which the API
// server also counts as a new generation; TestReadyGraceRules has a
// deletion alone), and of an object that was never Ready.
func TestNoGraceWhereReadyCannotHold(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.run(&bosun.Reconciler[*testapi.Widget]{
		Name:      "grace-none",
		Finalizer: testFinalizer,
		Steps:     []bosun.Step[*testapi.Widget]{&blip{}},
		Options:   bosun.Options{ReadyGrace: time.Hour, KStatus: true},
	}, runOptions{})
	ctx := t.Context()
	f.create("fresh", 1, 1, map[string]string{annFail: "warning"})
	for _, name := range []string{"terminal", "newgen", "deleting"} {
		f.create(name, 1, 1, nil)
	}
	for _, name := range []string{"terminal", "newgen", "deleting"} {
		f.waitReady(name, metav1.ConditionTrue, conditions.ReasonSucceeded)
	}

	f.waitReady("fresh", metav1.ConditionFalse, reasonFetchFailed)

	f.annotateWidget("terminal", annFail, "terminal")
	w := f.waitReady("terminal", metav1.ConditionFalse, reasonFetchFailed)
	if st, conds := kstatusOf(t, w); st != status.FailedStatus {
		t.Errorf("terminal: kstatus %s (%v), want Failed", st, conds)
	}

	w, err := f.get(ctx, "newgen")
	if err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(w.DeepCopy())
	w.Spec.Value = 2
	w.Annotations = map[string]string{annFail: "warning"}
	if err := f.c.Patch(ctx, w, patch); err != nil {
		t.Fatal(err)
	}
	f.waitReady("newgen", metav1.ConditionFalse, reasonFetchFailed)

	// Held while it lives, not once it is being deleted.
	f.annotateWidget("deleting", annFail, "warning")
	bosuntest.Eventually(t, func(ctx context.Context) error {
		w, err := f.get(ctx, "deleting")
		if err != nil {
			return err
		}
		if got := condOf(w, typeFetched); got != "False/"+string(reasonFetchFailed) {
			return fmt.Errorf("Fetched %s, want False/%s", got, reasonFetchFailed)
		}
		return nil
	})
	w, err = f.get(ctx, "deleting")
	if err != nil {
		t.Fatal(err)
	}
	if got := condOf(w, conditions.TypeReady); got != "True/"+string(conditions.ReasonSucceeded) {
		t.Errorf("deleting, before the deletion: Ready %s, want it held True", got)
	}
	if err := f.c.Delete(ctx, w); err != nil {
		t.Fatal(err)
	}
	f.waitReady("deleting", metav1.ConditionFalse, reasonFetchFailed)
	f.annotateWidget("deleting", annFail, "")
	f.waitGone("deleting")
}

// TestReadyGraceRules runs one failing pass over a Widget stored Ready,
// with the fake client: when Ready holds, and that the streak is counted
// from the conditions stored on the object, so that an operator that
// restarts in the middle of one does not start the grace again.
func TestReadyGraceRules(t *testing.T) {
	broken := func(sev conditions.Severity) error {
		return &conditions.Error{Type: "B", Reason: "Broken", Severity: sev, Err: errors.New("b broke")}
	}
	now := time.Now()
	for _, tc := range []struct {
		name string
		// bSince is when the stored B turned False; zero means B is
		// stored True.
		bSince     time.Time
		step       *conditionSteps
		noGrace    bool
		kstatus    bool
		generation int64
		// deleting runs the pass over a Widget being deleted, whose
		// Cleanup fails as step's Do would.
		deleting bool
		want     map[string]string
	}{{
		name: "a first failure holds Ready",
		step: &conditionSteps{a: metav1.ConditionTrue, err: broken(conditions.SeverityWarning)},
		want: map[string]string{"A": "True/SetA", "B": "False/Broken", "Ready": "True/Succeeded"},
	}, {
		name:   "failures that began within the grace hold Ready",
		bSince: now.Add(-10 * time.Second),
		step:   &conditionSteps{a: metav1.ConditionTrue, err: broken(conditions.SeverityWarning)},
		want:   map[string]string{"A": "True/SetA", "B": "False/Broken", "Ready": "True/Succeeded"},
	}, {
		name:   "failures that began before the grace, by the stored condition, turn Ready False",
		bSince: now.Add(-2 * time.Minute),
		step:   &conditionSteps{a: metav1.ConditionTrue, err: broken(conditions.SeverityWarning)},
		want:   map[string]string{"A": "True/SetA", "B": "False/Broken", "Ready": "False/Broken"},
	}, {
		name: "another condition not True turns Ready False",
		step: &conditionSteps{a: metav1.ConditionFalse, err: broken(conditions.SeverityWarning)},
		want: map[string]string{"A": "False/SetA", "B": "False/Broken", "Ready": "False/Broken"},
	}, {
		name: "a terminal error turns Ready False",
		step: &conditionSteps{a: metav1.ConditionTrue, err: broken(conditions.SeverityError)},
		want: map[string]string{"A": "True/SetA", "B": "False/Broken", "Ready": "False/Broken"},
	}, {
		name:       "a new generation turns Ready False",
		generation: 2,
		step:       &conditionSteps{a: metav1.ConditionTrue, err: broken(conditions.SeverityWarning)},
		want:       map[string]string{"A": "True/SetA", "B": "False/Broken", "Ready": "False/Broken"},
	}, {
		name: "an error that names no condition, without KStatus, turns Ready False",
		step: &conditionSteps{a: metav1.ConditionTrue, err: errors.New("plain")},
		want: map[string]string{"A": "True/SetA", "B": "True/SetB", "Ready": "False/" + string(conditions.ReasonError)},
	}, {
		name:    "an error that names no condition, with KStatus, holds Ready and shows in Reconciling",
		step:    &conditionSteps{a: metav1.ConditionTrue, err: errors.New("plain")},
		kstatus: true,
		want:    map[string]string{"A": "True/SetA", "B": "True/SetB", "Ready": "True/Succeeded", "Reconciling": "True/" + string(conditions.ReasonRetrying)},
	}, {
		name:     "a Widget being deleted turns Ready False",
		deleting: true,
		step:     &conditionSteps{err: broken(conditions.SeverityWarning)},
		want:     map[string]string{"A": "True/SetA", "B": "False/Broken", "Ready": "False/Broken"},
	}, {
		name:    "a zero grace turns Ready False",
		noGrace: true,
		step:    &conditionSteps{a: metav1.ConditionTrue, err: broken(conditions.SeverityWarning)},
		want:    map[string]string{"A": "True/SetA", "B": "False/Broken", "Ready": "False/Broken"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			long := metav1.NewTime(now.Add(-time.Hour).Truncate(time.Second))
			var fins []string
			if tc.deleting {
				fins = []string{testFinalizer}
			}
			w := fakeWidget("w", fins, tc.deleting, nil)
			if tc.generation != 0 {
				w.Generation = tc.generation
			}
			b := metav1.Condition{Type: "B", Status: metav1.ConditionTrue, Reason: "SetB", Message: "set B", ObservedGeneration: 1, LastTransitionTime: long}
			if !tc.bSince.IsZero() {
				b.Status, b.Reason, b.Message, b.LastTransitionTime = metav1.ConditionFalse, "Broken", "b broke", metav1.NewTime(tc.bSince.Truncate(time.Second))
			}
			w.Status.ObservedGeneration = 1
			w.Status.Conditions = []metav1.Condition{
				{Type: "A", Status: metav1.ConditionTrue, Reason: "SetA", Message: "set A", ObservedGeneration: 1, LastTransitionTime: long},
				b,
				{Type: conditions.TypeReady, Status: metav1.ConditionTrue, Reason: string(conditions.ReasonSucceeded), ObservedGeneration: 1, LastTransitionTime: long},
			}
			grace := time.Minute
			if tc.noGrace {
				grace = 0
			}
			c := fakeClient(t, nil, w)
			r := &bosun.Reconciler[*testapi.Widget]{
				Name: "grace-rules", Client: c, Steps: []bosun.Step[*testapi.Widget]{tc.step},
				Options: bosun.Options{ReadyGrace: grace, KStatus: tc.kstatus},
			}
			if tc.deleting {
				r.Finalizer = testFinalizer
				r.Steps = []bosun.Step[*testapi.Widget]{cleaningConditionSteps{tc.step}}
			}
			_, got, err := reconcileWidget(t, r, c, "w")
			if err == nil {
				t.Fatal("the pass did not fail")
			}
			conds := map[string]string{}
			for _, c := range got.Status.Conditions {
				conds[c.Type] = string(c.Status) + "/" + c.Reason
			}
			if diff := cmp.Diff(tc.want, conds); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

// cleaningConditionSteps is conditionSteps whose Cleanup fails with its
// error too.
type cleaningConditionSteps struct{ *conditionSteps }

func (s cleaningConditionSteps) Cleanup(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	return ctrl.Result{}, s.err
}
