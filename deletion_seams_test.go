package bosun_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// switchCleanup is a step whose Cleanup fails while broken is set, as an
// external system that is down would, and counts its calls.
type switchCleanup struct {
	calls  *atomic.Int32
	broken *atomic.Bool
}

func newSwitchCleanup() switchCleanup {
	s := switchCleanup{calls: &atomic.Int32{}, broken: &atomic.Bool{}}
	s.broken.Store(true)
	return s
}

func (switchCleanup) Do(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}

func (c switchCleanup) Cleanup(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	c.calls.Add(1)
	if c.broken.Load() {
		return ctrl.Result{}, conditions.Warningf("ExternalDown", "the external system is down")
	}
	return ctrl.Result{}, nil
}

// waitCalls waits until the cleanup has been called at least n times.
func (c switchCleanup) waitCalls(t *testing.T, n int32) {
	t.Helper()
	bosuntest.Eventually(t, func(context.Context) error {
		if got := c.calls.Load(); got < n {
			return fmt.Errorf("%d cleanup calls, want %d", got, n)
		}
		return nil
	})
}

// runCleanup runs a reconciler named name whose one step is c, with the
// test finalizer and opts.
func (f *fixture) runCleanup(name string, c switchCleanup, opts bosun.Options, ro runOptions) {
	f.t.Helper()
	f.run(&bosun.Reconciler[*testapi.Widget]{
		Name:      name,
		Finalizer: testFinalizer,
		Steps:     []bosun.Step[*testapi.Widget]{c},
		Options:   opts,
	}, ro)
}

// deleteReady creates the Widget name with finalizers fins besides the
// engine's, waits for it to be Ready and deletes it.
func (f *fixture) deleteReady(name string, fins ...string) {
	f.t.Helper()
	// The other finalizers come with the create: a patch of the list
	// after it could take away the engine's, claimed meanwhile.
	w := &testapi.Widget{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Finalizers: fins},
		Spec:       testapi.WidgetSpec{Value: 1, Divisor: 1},
	}
	if err := f.c.Create(f.t.Context(), w); err != nil {
		f.t.Fatal(err)
	}
	w = f.waitReady(name, metav1.ConditionTrue, conditions.ReasonSucceeded)
	if err := f.c.Delete(f.t.Context(), w); err != nil {
		f.t.Fatal(err)
	}
}

// annotateWidget sets the annotation key=value on the Widget name.
func (f *fixture) annotateWidget(name, key, value string) {
	f.t.Helper()
	w, err := f.get(f.t.Context(), name)
	if err != nil {
		f.t.Fatal(err)
	}
	patch := client.MergeFrom(w.DeepCopy())
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[key] = value
	if err := f.c.Patch(f.t.Context(), w, patch); err != nil {
		f.t.Fatal(err)
	}
}

// TestBlockedDeletionIsWrittenOnce deletes a Widget whose cleanup keeps
// failing the same way: once DeletionBlocked shows, the passes that retry
// the cleanup write nothing more to the Widget. Budget: one write when the
// condition first shows, none while nothing changes.
func TestBlockedDeletionIsWrittenOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := newSwitchCleanup()
	writes := &bosuntest.WriteCounter{}
	f.runCleanup("blocked-quiet", c, bosun.Options{DeletionDeadline: time.Second}, runOptions{client: writes.Wrap})
	f.deleteReady("w")
	f.waitDeletionBlocked("w")
	writes.Reset()
	at := c.calls.Load()
	// Three more cleanups: the one the event of the write brings, and two
	// retries, more than a second apart, once the queue's backoff has
	// grown past the deadline.
	c.waitCalls(t, at+3)
	for _, w := range writes.Writes() {
		if w.Name == "w" {
			t.Errorf("%s after DeletionBlocked showed and while nothing changed; want none (all: %v)", w, writes.Writes())
		}
	}
}

// TestFailingCleanupIsBlockedOnTime deletes a Widget whose cleanup fails on
// every try: DeletionBlocked shows at the deadline, not when the queue's
// exponential backoff happens to bring the next retry.
func TestFailingCleanupIsBlockedOnTime(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const deadline = 6 * time.Second
	f.runCleanup("blocked-on-time", newSwitchCleanup(), bosun.Options{DeletionDeadline: deadline}, runOptions{})
	f.deleteReady("w")
	c := f.waitDeletionBlocked("w")
	w, err := f.get(t.Context(), "w")
	if err != nil {
		t.Fatal(err)
	}
	// Retries of a failing pass come 5 ms, 10 ms, ... apart: one at about
	// 5.1 s after the deletion, the next at about 10.2 s. Both times have
	// a resolution of a second.
	if late := c.LastTransitionTime.Sub(w.DeletionTimestamp.Time) - deadline; late > 2*time.Second {
		t.Errorf("DeletionBlocked showed %s after the deadline of %s; want it on time", late, deadline)
	}
}

// TestReleasedFinalizerClearsDeletionBlocked deletes a Widget that another
// controller's finalizer also holds: once the engine's cleanup finishes and
// its finalizer goes, the Widget no longer says the deletion is blocked by
// the engine's step.
func TestReleasedFinalizerClearsDeletionBlocked(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := newSwitchCleanup()
	f.runCleanup("released-clears", c, bosun.Options{DeletionDeadline: time.Second, KStatus: true}, runOptions{})
	const other = "test.bosun.dev/other-controller"
	f.deleteReady("w", other)
	f.waitDeletionBlocked("w")
	c.broken.Store(false)
	f.annotateWidget("w", "test.bosun.dev/poke", "1")
	var got *testapi.Widget
	bosuntest.Eventually(t, func(ctx context.Context) error {
		w, err := f.get(ctx, "w")
		if err != nil {
			return err
		}
		if controllerutil.ContainsFinalizer(w, testFinalizer) {
			return errors.New("the engine's finalizer is still there")
		}
		got = w
		return nil
	})
	bosuntest.Eventually(t, func(ctx context.Context) error {
		w, err := f.get(ctx, "w")
		if err != nil {
			return err
		}
		got = w
		if c := conditions.Find(w.Status.Conditions, conditions.TypeDeletionBlocked); c != nil {
			return fmt.Errorf("DeletionBlocked is %s/%s %q after the engine released its finalizer", c.Status, c.Reason, c.Message)
		}
		return nil
	})
	ready := conditions.Find(got.Status.Conditions, conditions.TypeReady)
	if ready == nil || ready.Reason != string(conditions.ReasonFinalizerReleased) || !strings.Contains(ready.Message, "other finalizers") {
		t.Errorf("Ready = %+v, want False/%s saying the object waits for other finalizers", ready, conditions.ReasonFinalizerReleased)
	}
	for _, typ := range []string{conditions.TypeReconciling, conditions.TypeStalled} {
		if c := conditions.Find(got.Status.Conditions, typ); c != nil {
			t.Errorf("%s = %s/%s after the engine let go, want it gone", typ, c.Status, c.Reason)
		}
	}
	patch := client.MergeFrom(got.DeepCopy())
	got.Finalizers = nil
	if err := f.c.Patch(t.Context(), got, patch); err != nil {
		t.Fatal(err)
	}
	f.waitGone("w")
}

// TestMistypedReleaseAnnotationKeepsCleaningUp deletes a Widget whose
// external system is down, sets bosun.dev/release-finalizer to a value the
// engine does not know: the value is reported in Ready, the deletion stays
// reported blocked, the cleanup goes on being retried, and once the
// system is back the Widget goes.
func TestMistypedReleaseAnnotationKeepsCleaningUp(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := newSwitchCleanup()
	f.runCleanup("mistyped-release", c, bosun.Options{DeletionDeadline: time.Second}, runOptions{})
	f.deleteReady("w")
	f.waitDeletionBlocked("w")
	f.annotateWidget("w", bosun.AnnotationReleaseFinalizer, "True")
	w := f.waitReady("w", metav1.ConditionFalse, conditions.ReasonInvalidReleaseFinalizer)
	if b := conditions.Find(w.Status.Conditions, conditions.TypeDeletionBlocked); b == nil || b.Status != metav1.ConditionTrue || b.Reason != "ExternalDown" {
		t.Errorf("DeletionBlocked = %+v, want True/ExternalDown, the cleanup's", b)
	}
	at := c.calls.Load()
	c.waitCalls(t, at+1)
	c.broken.Store(false)
	f.annotateWidget("w", "test.bosun.dev/poke", "1")
	f.waitGone("w")
}

// TestKStatusAfterFailedSave checks the kstatus conditions when the
// engine's own write of metadata and spec fails: Stalled for an object the
// API server refuses as invalid (it waits for a change), Reconciling for a
// failure the engine retries; kstatus, as Flux and Argo CD run it, says
// Failed and InProgress.
func TestKStatusAfterFailedSave(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var unavailable atomic.Bool
	unavailable.Store(true)
	wrap := func(c client.Client) client.WithWatch {
		return unavailablePatches{Client: c, on: func(obj client.Object) bool { return obj.GetName() == "flaky" && unavailable.Load() }}
	}
	f.run(&bosun.Reconciler[*testapi.Widget]{
		Name:    "kstatus-save",
		Steps:   []bosun.Step[*testapi.Widget]{&reporter{}, labeller{}},
		Options: bosun.Options{KStatus: true},
	}, runOptions{client: wrap})

	// Value 7: the reporter late-initialises a spec value the CRD refuses.
	f.create("invalid", 7, 1, nil)
	w := f.waitReady("invalid", metav1.ConditionFalse, "SaveFailed")
	st, conds := kstatusOf(t, w)
	if st != status.FailedStatus || conds[conditions.TypeStalled] != "True/SaveFailed" || conds[conditions.TypeReconciling] != "" {
		t.Errorf("invalid: kstatus %s, conditions %v; want Failed with Stalled True/SaveFailed and no Reconciling", st, conds)
	}

	f.create("flaky", 1, 1, nil)
	w = f.waitReady("flaky", metav1.ConditionFalse, "SaveFailed")
	st, conds = kstatusOf(t, w)
	if st != status.InProgressStatus || conds[conditions.TypeReconciling] != "True/SaveFailed" || conds[conditions.TypeStalled] != "" {
		t.Errorf("flaky: kstatus %s, conditions %v; want InProgress with Reconciling True/SaveFailed and no Stalled", st, conds)
	}
	unavailable.Store(false)
	w = f.waitReady("flaky", metav1.ConditionTrue, conditions.ReasonSucceeded)
	if st, conds := kstatusOf(t, w); st != status.CurrentStatus || len(conds) != 0 {
		t.Errorf("flaky, healed: kstatus %s, conditions %v; want Current and neither", st, conds)
	}
}

// unavailablePatches is a client whose patches of the objects on picks
// (not of their status) are answered 503, as by a busy API server.
type unavailablePatches struct {
	client.Client
	on func(client.Object) bool
}

func (c unavailablePatches) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if c.on(obj) {
		return apierrors.NewServiceUnavailable("the API server is busy")
	}
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (unavailablePatches) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	return nil, errors.New("unavailablePatches: no watch")
}

// labeller labels every Widget, so that its first pass writes metadata.
type labeller struct{}

func (labeller) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	if req.Object.Labels["test.bosun.dev/labelled"] == "" {
		req.Object.SetLabels(map[string]string{"test.bosun.dev/labelled": "yes"})
	}
	return ctrl.Result{}, nil
}
