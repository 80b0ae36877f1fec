package bosun_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// TestReconciledByMarksEachBuildOnce runs three builds of one operator
// over the same Widgets, as an upgrade would, and counts the writes of
// each Widget:
//
//   - build v1 records "reconciled-by=v1" (its controller's entry) in bosun.dev/reconciled-by on a Widget that
//     converges and on one whose pass fails, in the claim's write (their
//     first passes write no more than without a build), and not on a
//     paused Widget;
//   - build v2 rewrites it on each of them in exactly one write, not on a
//     Widget being deleted (its cleanup passes leave "v1"), and writes
//     nothing over the resyncs of a converged Widget after that;
//   - an operator without a build writes nothing, and leaves "v2".
func TestReconciledByMarksEachBuildOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	j := newJournal()
	cleanup := newSwitchCleanup()
	release := func(t *testing.T, build string, writes *bosuntest.WriteCounter) *fixture {
		ff := *f
		ff.t = t
		ff.run(&bosun.Reconciler[*testapi.Widget]{
			Name:      "reconciled-by",
			Finalizer: testFinalizer,
			Steps:     []bosun.Step[*testapi.Widget]{&divide{j: j}, cleanup},
			Resync:    time.Second,
			Options:   bosun.Options{Build: build},
		}, runOptions{client: writes.Wrap})
		return &ff
	}
	// marks waits until each Widget's annotation is as want says ("" for
	// none).
	marks := func(t *testing.T, want map[string]string) {
		t.Helper()
		bosuntest.Eventually(t, func(ctx context.Context) error {
			for name, build := range want {
				w, err := f.get(ctx, name)
				if err != nil {
					return err
				}
				if build != "" {
					// The entry of this test's controller.
					build = "reconciled-by=" + build
				}
				if got, ok := w.Annotations[bosun.AnnotationReconciledBy]; got != build || ok != (build != "") {
					return fmt.Errorf("Widget %s: %s is %q (set: %v), want %q", name, bosun.AnnotationReconciledBy, got, ok, build)
				}
			}
			return nil
		})
	}
	// writesOf returns the writes of the Widgets names, by Widget.
	writesOf := func(writes *bosuntest.WriteCounter, names ...string) map[string][]string {
		got := map[string][]string{}
		for _, w := range writes.Writes() {
			if w.Kind == "Widget" && slices.Contains(names, w.Name) {
				got[w.Name] = append(got[w.Name], w.Op())
			}
		}
		return got
	}
	// resyncs waits until the converged Widget "good" has had n more
	// passes, so that the passes before the last have made every write
	// they make (the passes of one object run one at a time).
	resyncs := func(t *testing.T, n int) {
		t.Helper()
		before := j.count(j.do, "good")
		bosuntest.Eventually(t, func(context.Context) error {
			if got := j.count(j.do, "good"); got < before+n {
				return fmt.Errorf("%d passes of good, want %d", got-before, n)
			}
			return nil
		}, bosuntest.Timeout(time.Minute))
	}

	t.Run("build v1 marks each object in the claim's write", func(t *testing.T) {
		writes := &bosuntest.WriteCounter{}
		ff := release(t, "v1", writes)
		ff.create("good", 6, 3, nil)
		ff.create("bad", 6, 0, nil)
		ff.create("doomed", 6, 3, nil)
		ff.create("paused", 6, 3, map[string]string{bosun.AnnotationReconcilePolicy: string(bosun.PolicySkip)})
		ff.waitReady("good", metav1.ConditionTrue, conditions.ReasonSucceeded)
		ff.waitReady("doomed", metav1.ConditionTrue, conditions.ReasonSucceeded)
		ff.waitReady("bad", metav1.ConditionFalse, "ZeroDivisor")
		bosuntest.Eventually(t, func(ctx context.Context) error {
			w, err := ff.get(ctx, "paused")
			if err != nil {
				return err
			}
			if conditions.Find(w.Status.Conditions, conditions.TypeReady) == nil || j.count(j.observes, "paused") == 0 {
				return errors.New("paused not observed yet")
			}
			return nil
		})
		marks(t, map[string]string{"good": "v1", "bad": "v1", "doomed": "v1", "paused": ""})
		// As many writes as without a build: the claim and the status.
		want := map[string][]string{
			"good":   {"patch Widget", "patch status Widget"},
			"bad":    {"patch Widget", "patch status Widget"},
			"paused": {"patch status Widget"},
		}
		if diff := cmp.Diff(want, writesOf(writes, "good", "bad", "paused")); diff != "" {
			t.Errorf("writes of the first passes (-want +got):\n%s", diff)
		}
	})

	// Deleted while no build runs: v2 finds it being deleted, its
	// cleanup failing.
	doomed, err := f.get(t.Context(), "doomed")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.c.Delete(t.Context(), doomed); err != nil {
		t.Fatal(err)
	}

	t.Run("build v2 marks each live object in one write", func(t *testing.T) {
		writes := &bosuntest.WriteCounter{}
		ff := release(t, "v2", writes)
		marks(t, map[string]string{"good": "v2", "bad": "v2"})
		cleanup.waitCalls(t, 2)
		marks(t, map[string]string{"doomed": "v1", "paused": ""})
		cleanup.broken.Store(false)
		ff.waitGone("doomed")
		resyncs(t, 3)
		want := map[string][]string{
			"good": {"patch Widget"},
			"bad":  {"patch Widget"},
		}
		if diff := cmp.Diff(want, writesOf(writes, "good", "bad", "paused")); diff != "" {
			t.Errorf("writes from the upgrade on (-want +got):\n%s", diff)
		}
	})

	t.Run("an operator without a build writes nothing", func(t *testing.T) {
		writes := &bosuntest.WriteCounter{}
		release(t, "", writes)
		resyncs(t, 3)
		marks(t, map[string]string{"good": "v2", "bad": "v2", "paused": ""})
		if diff := cmp.Diff(map[string][]string{}, writesOf(writes, "good", "bad", "paused")); diff != "" {
			t.Errorf("writes without a build (-want +got):\n%s", diff)
		}
	})
}
