package bosun_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// seamWatchless gives a manager's client (which cannot watch) the Watch
// method interceptor.NewClient wants.
type seamWatchless struct{ client.Client }

func (seamWatchless) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	return nil, errors.New("seamWatchless: no watch")
}

// seamIntercept wraps a manager's client with funcs.
func seamIntercept(funcs interceptor.Funcs) func(client.Client) client.WithWatch {
	return func(c client.Client) client.WithWatch {
		return interceptor.NewClient(seamWatchless{c}, funcs)
	}
}

// pacedCleanup is a cleanup that asks to come back in a minute (an
// external delete that takes a while), and counts its calls.
type pacedCleanup struct{ calls *atomic.Int32 }

func (pacedCleanup) Do(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}

func (c pacedCleanup) Cleanup(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	c.calls.Add(1)
	return ctrl.Result{RequeueAfter: time.Minute}, nil
}

// TestSeamReviewMistypedReleaseKeepsCleanupPacing: a cleanup that asks to
// come back in a minute is called once a minute; a mistyped
// bosun.dev/release-finalizer must only be reported, not turn that into
// the error backoff (5 ms, 10 ms, 20 ms ...), which calls the external
// system again and again. Budget: at most two cleanups in four seconds.
func TestSeamReviewMistypedReleaseKeepsCleanupPacing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := pacedCleanup{calls: &atomic.Int32{}}
	passes := &passLog{}
	f.run(&bosun.Reconciler[*testapi.Widget]{
		Name:      "seam-typo-paced",
		Finalizer: testFinalizer,
		Steps:     []bosun.Step[*testapi.Widget]{c},
		Options:   bosun.Options{DeletionDeadline: time.Hour, Observers: []bosun.PassObserver{passes}},
	}, runOptions{})
	f.create(seamClock, 1, 1, nil)
	f.create("w", 1, 1, map[string]string{bosun.AnnotationReleaseFinalizer: "True"})
	w := f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
	if err := f.c.Delete(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(context.Context) error {
		if c.calls.Load() == 0 {
			return errors.New("no cleanup yet")
		}
		return nil
	})
	f.seamWindow(passes, 4*time.Second, 10)
	if got := c.calls.Load(); got > 2 {
		t.Errorf("a cleanup that asked to come back in a minute was called %d times in 4s because "+
			"the annotation %s holds a typo; want at most 2 (the typo is reported, the pacing kept)", got, bosun.AnnotationReleaseFinalizer)
	}
	f.waitReady("w", metav1.ConditionFalse, conditions.ReasonInvalidReleaseFinalizer)
}

// TestSeamReviewReleasedConditionsSurviveStatusConflict: the engine
// releases its finalizer while another controller's still holds the
// Widget; that controller writes to the Widget between the engine's
// release and the status write that clears DeletionBlocked (settleReleased),
// so that write conflicts. No later pass writes to an object without the
// engine's finalizer: the Widget must not go on saying the engine's
// cleanup blocks its deletion.
func TestSeamReviewReleasedConditionsSurviveStatusConflict(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cl := newSwitchCleanup()
	var raced atomic.Bool
	wrap := seamIntercept(interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if sub == "status" && obj.GetName() == "w" && !raced.Load() {
				if data, err := patch.Data(obj); err == nil && bytes.Contains(data, []byte(conditions.ReasonFinalizerReleased)) {
					raced.Store(true)
					// The other controller writes first.
					u := &testapi.Widget{}
					u.Namespace, u.Name = obj.GetNamespace(), obj.GetName()
					if err := f.c.Patch(ctx, u, client.RawPatch(types.MergePatchType,
						[]byte(`{"metadata":{"annotations":{"test.bosun.dev/other":"done-something"}}}`))); err != nil {
						t.Errorf("the other controller's write: %v", err)
					}
				}
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	f.run(&bosun.Reconciler[*testapi.Widget]{
		Name:      "seam-release-conflict",
		Finalizer: testFinalizer,
		Steps:     []bosun.Step[*testapi.Widget]{cl},
		Options:   bosun.Options{DeletionDeadline: time.Second, KStatus: true},
	}, runOptions{client: wrap})
	const other = "test.bosun.dev/other-controller"
	f.deleteReady("w", other)
	f.waitDeletionBlocked("w")
	cl.broken.Store(false)
	f.annotateWidget("w", "test.bosun.dev/poke", "1")
	bosuntest.Eventually(t, func(ctx context.Context) error {
		w, err := f.get(ctx, "w")
		if err != nil {
			return err
		}
		if controllerutil.ContainsFinalizer(w, testFinalizer) {
			return errors.New("the engine's finalizer is still there")
		}
		return nil
	})
	// The status write of settleReleased follows the release: the
	// finalizer may be seen gone before it is sent.
	bosuntest.Eventually(t, func(context.Context) error {
		if !raced.Load() {
			return errors.New("the status write of settleReleased was never seen")
		}
		return nil
	})
	seamPoll(t, 10*time.Second, func(ctx context.Context) error {
		w, err := f.get(ctx, "w")
		if err != nil {
			return err
		}
		if c := conditions.Find(w.Status.Conditions, conditions.TypeDeletionBlocked); c != nil {
			return fmt.Errorf("DeletionBlocked is %s/%s %q after the engine released its finalizer "+
				"(its status write conflicted with another controller's write); Ready %+v",
				c.Status, c.Reason, c.Message, conditions.Find(w.Status.Conditions, conditions.TypeReady))
		}
		return nil
	})
	w, err := f.get(t.Context(), "w")
	if err == nil {
		patch := client.MergeFrom(w.DeepCopy())
		w.Finalizers = nil
		_ = f.c.Patch(t.Context(), w, patch)
	}
}

// modeSetter late-initialises spec.mode.
type modeSetter struct{}

func (modeSetter) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	if req.Object.Spec.Mode == "" {
		req.Object.Spec.Mode = "fast"
	}
	return ctrl.Result{}, nil
}

// stripSpecField rewrites a merge patch of a Widget (not of its status)
// as an API server whose CRD lacks spec.<field> (an operator upgraded
// before its CRD, or a field the schema defaults back) would store it:
// without the field.
func stripSpecField(field string, count *atomic.Int32) func(client.Client) client.WithWatch {
	return seamIntercept(interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if _, ok := obj.(*testapi.Widget); !ok || patch.Type() != types.MergePatchType {
				return c.Patch(ctx, obj, patch, opts...)
			}
			data, err := patch.Data(obj)
			if err != nil {
				return err
			}
			var body map[string]any
			if err := json.Unmarshal(data, &body); err != nil {
				return err
			}
			if spec, ok := body["spec"].(map[string]any); ok {
				delete(spec, field)
				if len(spec) == 0 {
					delete(body, "spec")
				}
			}
			if obj.GetName() == "w" {
				count.Add(1)
			}
			data, _ = json.Marshal(body)
			return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data), opts...)
		},
	})
}

// TestSeamReviewPrunedSpecFieldDoesNotLoop: a step late-initialises a spec
// field the API server does not keep (its CRD is older than the operator's
// type: pruned). Before the engine compared the answer of its write with
// what it sent, that was one no-op patch per pass and a quiet object; the
// answer now "differs" from what was sent on every pass, and every pass
// requeues the next at once (ownWriteRequeue, 1 ns), without backoff.
// Budget: a handful of patches in three seconds, not a hot loop.
func TestSeamReviewPrunedSpecFieldDoesNotLoop(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var patches atomic.Int32
	passes := &passLog{}
	f.run(&bosun.Reconciler[*testapi.Widget]{
		Name:    "seam-pruned-loop",
		Steps:   []bosun.Step[*testapi.Widget]{modeSetter{}},
		Options: bosun.Options{Observers: []bosun.PassObserver{passes}},
	}, runOptions{client: stripSpecField("mode", &patches)})
	f.create(seamClock, 1, 1, nil)
	f.create("w", 1, 1, nil)
	f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
	f.seamWindow(passes, 500*time.Millisecond, 2)
	at := patches.Load()
	f.seamWindow(passes, 3*time.Second, 10)
	if got := patches.Load() - at; got > 3 {
		t.Errorf("%d patches of the Widget in 3s while nothing changed (a spec field the server does not keep); want a handful, not a hot loop", got)
	}
}

// committingLabeller labels the Widget and commits at once.
type committingLabeller struct{}

func (committingLabeller) Do(ctx context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	if req.Object.Labels["test.bosun.dev/labelled"] == "" {
		req.Object.SetLabels(map[string]string{"test.bosun.dev/labelled": "yes"})
		if err := req.Commit(ctx); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// stampOnLabel adds, to a merge patch of a Widget that sets the label
// test.bosun.dev/labelled, the annotation stampAnnotation=42, as the
// mutating webhook of TestWebhookChangeOnOwnWriteIsReconciled does.
func stampOnLabel() func(client.Client) client.WithWatch {
	var mu sync.Mutex
	return seamIntercept(interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if _, ok := obj.(*testapi.Widget); !ok || patch.Type() != types.MergePatchType {
				return c.Patch(ctx, obj, patch, opts...)
			}
			mu.Lock()
			defer mu.Unlock()
			data, err := patch.Data(obj)
			if err != nil {
				return err
			}
			var body map[string]any
			if err := json.Unmarshal(data, &body); err != nil {
				return err
			}
			md, _ := body["metadata"].(map[string]any)
			labels, _ := md["labels"].(map[string]any)
			if labels["test.bosun.dev/labelled"] != nil {
				ann, _ := md["annotations"].(map[string]any)
				if ann == nil {
					ann = map[string]any{}
				}
				ann[stampAnnotation] = "42"
				md["annotations"] = ann
			}
			data, _ = json.Marshal(body)
			return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data), opts...)
		},
	})
}

// stampRun runs steps on a Widget whose patches the stamping
// "webhook" mutates, and waits for status.result to show the stamp.
func stampRun(t *testing.T, name string, steps ...bosun.Step[*testapi.Widget]) {
	f := newFixture(t)
	f.run(&bosun.Reconciler[*testapi.Widget]{Name: name, Steps: steps}, runOptions{client: stampOnLabel()})
	f.create("w", 1, 1, nil)
	seamPoll(t, 10*time.Second, func(ctx context.Context) error {
		got, err := f.get(ctx, "w")
		if err != nil {
			return err
		}
		if got.Status.Result != 42 {
			return fmt.Errorf("status.result = %d, annotations %v, Ready %+v: the stamp the engine's write came back with was never reconciled",
				got.Status.Result, got.Annotations, conditions.Find(got.Status.Conditions, conditions.TypeReady))
		}
		return nil
	})
}

// TestSeamReviewStampEmulationControl: the emulated webhook on the
// engine's final save is reconciled (what 4efb0e3 fixed), proving the
// emulation.
func TestSeamReviewStampEmulationControl(t *testing.T) {
	t.Parallel()
	stampRun(t, "seam-stamp-save", stampReader{}, labeller{})
}

// TestSeamReviewWebhookChangeOnCommitIsReconciled: as
// TestWebhookChangeOnOwnWriteIsReconciled, but the label is written by
// Pass.Commit in a step after the one that reads the stamp: the stamp
// the write came back with is a change the earlier step has not seen,
// and a pass over that version must follow.
func TestSeamReviewWebhookChangeOnCommitIsReconciled(t *testing.T) {
	t.Parallel()
	stampRun(t, "seam-stamp-commit", stampReader{}, committingLabeller{})
}

// seamClock is the Widget whose passes measure the windows of the seam
// tests.
const seamClock = "clock"

// seamWindow returns once d has gone by and the clock Widget has had n
// passes, as passes records them (bosuntest.Window).
func (f *fixture) seamWindow(passes *passLog, d time.Duration, n int) {
	f.t.Helper()
	clock := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: seamClock}}
	bosuntest.Window(f.t, f.c, clock, func() int { return passes.count(seamClock) }, d, n)
}

// seamPoll is bosuntest.Eventually with a timeout of d.
func seamPoll(t *testing.T, d time.Duration, check func(context.Context) error) {
	t.Helper()
	bosuntest.Eventually(t, check, bosuntest.Timeout(d))
}
