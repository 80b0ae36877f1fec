package bosun_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/oracle"
	"github.com/bosunkit/bosun/internal/testapi"
)

// cleanupLog is a step whose Cleanup records the Widgets it cleaned up.
type cleanupLog struct {
	mu      *sync.Mutex
	cleaned *[]string
}

func (cleanupLog) Do(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}

func (c cleanupLog) Cleanup(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	*c.cleaned = append(*c.cleaned, req.Object.Name)
	return ctrl.Result{}, nil
}

func (c cleanupLog) has(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(*c.cleaned, name)
}

// TestFinalizerRename renames the engine's finalizer over three releases
// of one operator: the first uses the old name; the second the new one,
// listing the old among FormerFinalizers, and moves every object to it;
// then a rollback to a release that uses the old name again and lists the
// new one. Each release cleans up the objects it deletes, whichever name
// they carry, and none is left hanging.
func TestFinalizerRename(t *testing.T) {
	const oldName, newName = "test.bosun.dev/cleanup", "widgets.example.com/cleanup"
	f := newFixture(t)
	log := cleanupLog{mu: &sync.Mutex{}, cleaned: &[]string{}}
	release := func(t *testing.T, finalizer string, former ...string) {
		ff := *f
		ff.t = t
		ff.run(&bosun.Reconciler[*testapi.Widget]{
			Name:      "rename",
			Finalizer: finalizer,
			Steps:     []bosun.Step[*testapi.Widget]{log},
			Options:   bosun.Options{FormerFinalizers: former},
		}, runOptions{})
	}
	finalizers := func(t *testing.T, name string, want ...string) {
		t.Helper()
		bosuntest.Eventually(t, func(ctx context.Context) error {
			w, err := f.get(ctx, name)
			if err != nil {
				return err
			}
			if diff := cmp.Diff(want, w.Finalizers); diff != "" {
				return fmt.Errorf("finalizers of %s (-want +got):\n%s", name, diff)
			}
			return nil
		})
	}
	remove := func(t *testing.T, name string) {
		t.Helper()
		w, err := f.get(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.c.Delete(t.Context(), w); err != nil {
			t.Fatal(err)
		}
	}
	gone := func(t *testing.T, name string) {
		t.Helper()
		ff := *f
		ff.t = t
		ff.waitGone(name)
		if !log.has(name) {
			t.Errorf("%s was deleted without its cleanup", name)
		}
	}

	t.Run("the old release", func(t *testing.T) {
		release(t, oldName)
		for _, name := range []string{"a", "b", "c"} {
			f.create(name, 1, 1, nil)
			finalizers(t, name, oldName)
		}
	})
	t.Run("the new release moves each object to the new name", func(t *testing.T) {
		release(t, newName, oldName)
		for _, name := range []string{"a", "b", "c"} {
			finalizers(t, name, newName)
		}
		remove(t, "a")
		gone(t, "a")
	})
	t.Run("a rollback still deletes what the new release renamed", func(t *testing.T) {
		// Deleted before the rollback runs: it still carries the new name.
		remove(t, "b")
		finalizers(t, "b", newName)
		release(t, oldName, newName)
		gone(t, "b")
		finalizers(t, "c", oldName)
	})
}

// TestFormerFinalizerOfAReleaseWithoutOne checks a release that needs no
// finalizer any more (its cleanup left to owner references) and lists the
// old one in FormerFinalizers: a live object loses the old name in one
// write, and a deleted object that still carries it goes.
func TestFormerFinalizerOfAReleaseWithoutOne(t *testing.T) {
	const oldName = "test.bosun.dev/cleanup"
	f := newFixture(t)
	// Both objects carry the old name, as the release before left them;
	// "gone" is deleted before the new release runs.
	for _, name := range []string{"live", "gone"} {
		w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Finalizers: []string{oldName}}, Spec: testapi.WidgetSpec{Value: 1}}
		if err := f.c.Create(t.Context(), w); err != nil {
			t.Fatal(err)
		}
	}
	gone, err := f.get(t.Context(), "gone")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.c.Delete(t.Context(), gone); err != nil {
		t.Fatal(err)
	}
	writes := &bosuntest.WriteCounter{}
	f.run(&bosun.Reconciler[*testapi.Widget]{
		Name: "dropped",
		Steps: []bosun.Step[*testapi.Widget]{bosun.NewStatusStep("value", func(_ context.Context, w *testapi.Widget) error {
			w.Status.Result = w.Spec.Value
			return nil
		})},
		Options: bosun.Options{FormerFinalizers: []string{oldName}},
	}, runOptions{client: writes.Wrap})
	f.waitGone("gone")
	bosuntest.Eventually(t, func(ctx context.Context) error {
		w, err := f.get(ctx, "live")
		if err != nil {
			return err
		}
		if len(w.Finalizers) != 0 {
			return fmt.Errorf("finalizers of live: %v", w.Finalizers)
		}
		return oracle.CheckReady(w)
	})
	// One write drops the name, one writes the status.
	var got []string
	for _, w := range writes.Writes() {
		if w.Name == "live" {
			got = append(got, w.Op())
		}
	}
	if diff := cmp.Diff([]string{"patch Widget", "patch status Widget"}, got); diff != "" {
		t.Errorf("writes of live (-want +got):\n%s", diff)
	}
}
