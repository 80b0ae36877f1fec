package bosun_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// TestFinalizerRenameIsOneWritePerObject runs a release that claims
// Widgets with the old finalizer, then one that lists it among
// FormerFinalizers: each Widget gets the new name in place of the old in
// exactly one write, a patch of the object (the claim's), and its next
// pass writes nothing. Budget: one write per object for the rename, none
// after.
func TestFinalizerRenameIsOneWritePerObject(t *testing.T) {
	t.Parallel()
	const oldName, newName = testFinalizer, "widgets.example.com/cleanup"
	names := []string{"a", "b", "c"}
	f := newFixture(t)
	j := newJournal()
	log := cleanupLog{mu: &sync.Mutex{}, cleaned: &[]string{}}
	release := func(t *testing.T, opts runOptions, finalizer string, former ...string) *fixture {
		ff := *f
		ff.t = t
		ff.run(&bosun.Reconciler[*testapi.Widget]{
			Name:      "rename-writes",
			Finalizer: finalizer,
			Steps:     []bosun.Step[*testapi.Widget]{&divide{j: j}, log},
			Options:   bosun.Options{FormerFinalizers: former},
		}, opts)
		return &ff
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
	// passAgain touches the Widget and waits for the Do of the pass that
	// brings.
	passAgain := func(t *testing.T, ff *fixture, name, value string) {
		t.Helper()
		before := j.count(j.do, name)
		ff.touch(name, value)
		bosuntest.Eventually(t, func(context.Context) error {
			if n := j.count(j.do, name); n <= before {
				return fmt.Errorf("%s: no pass since the touch (%d Do calls)", name, n)
			}
			return nil
		})
	}

	t.Run("the old release claims with the old name", func(t *testing.T) {
		ff := release(t, runOptions{}, oldName)
		for _, name := range names {
			ff.create(name, 6, 3, nil)
			ff.waitReady(name, metav1.ConditionTrue, conditions.ReasonSucceeded)
			finalizers(t, name, oldName)
		}
	})

	writes := &bosuntest.WriteCounter{}
	t.Run("the new release renames in one write per object", func(t *testing.T) {
		ff := release(t, runOptions{client: writes.Wrap}, newName, oldName)
		for _, name := range names {
			finalizers(t, name, newName)
		}
		// The passes of one object run one at a time: once the pass of
		// the second touch has begun, the rename's pass and the pass of
		// the first touch have made every write they make.
		for _, name := range names {
			passAgain(t, ff, name, "1")
			passAgain(t, ff, name, "2")
		}
		got := map[string][]string{}
		for _, w := range writes.Writes() {
			if w.Kind == "Widget" {
				got[w.Name] = append(got[w.Name], w.Op())
			}
		}
		want := map[string][]string{}
		for _, name := range names {
			want[name] = []string{"patch Widget"}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("writes of the Widgets from the rename on (-want +got):\n%s", diff)
		}
		log.mu.Lock()
		defer log.mu.Unlock()
		if len(*log.cleaned) != 0 {
			t.Errorf("cleanups of live Widgets %v, want none", *log.cleaned)
		}
	})
}
