package managed

import (
	"context"
	"fmt"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	v1 "github.com/bosunkit/bosun/managed/internal/bucketapi"
)

// holder is a finalizer of someone else's that holds the test's Buckets.
const holder = "test.bosun.dev/in-use"

// TestDeletionOrderLast checks that a Bucket deleted last keeps its cloud
// bucket while another finalizer holds the object, says so in Synced and
// Ready, and deletes it once that finalizer is gone; for the annotation and
// for the option.
func TestDeletionOrderLast(t *testing.T) {
	for _, tc := range []struct {
		name string
		ann  map[string]string
		opts []Option
	}{
		{name: "annotation", ann: annotated(AnnotationDeletionOrder, "Last")},
		{name: "option", opts: []Option{WithDeletionOrder(DeletionOrderLast)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := newCloud()
			e := start(t, cl, nil, tc.opts...)
			e.create("used", 1, "", tc.ann)
			e.wait("used", converged)
			e.change("used", func(b *v1.Bucket) { b.Finalizers = append(b.Finalizers, holder) })
			e.delete("used")
			e.wait("used", map[string]cond{
				conditions.TypeReady:      {metav1.ConditionFalse, ReasonWaitingForFinalizers},
				defaultConditionSynced:    {metav1.ConditionFalse, ReasonWaitingForFinalizers},
				defaultConditionAvailable: {metav1.ConditionTrue, ReasonAvailable},
			})
			// Let several passes look at the held object.
			held := func() int {
				n := 0
				for _, l := range e.logs.Entries() {
					if l.Message == "waiting for the object's other finalizers before deleting the external resource" {
						n++
					}
				}
				return n
			}
			seen := held()
			bosuntest.Eventually(t, func(context.Context) error {
				if n := held() - seen; n < 3 {
					return fmt.Errorf("%d passes since the object was held, want 3", n)
				}
				return nil
			})
			if _, ok := cl.bucket(e.ns + ".used"); !ok {
				t.Fatal("cloud bucket deleted while another finalizer holds the object")
			}
			if _, _, d := cl.counts(); d != 0 {
				t.Fatalf("%d deletes while another finalizer holds the object, want none", d)
			}

			e.change("used", func(b *v1.Bucket) {
				b.Finalizers = slices.DeleteFunc(b.Finalizers, func(f string) bool { return f == holder })
			})
			e.waitGone("used")
			bosuntest.Eventually(t, func(context.Context) error {
				if _, ok := cl.bucket(e.ns + ".used"); ok {
					return fmt.Errorf("cloud bucket %s still exists", e.ns+".used")
				}
				return nil
			})
		})
	}
}

// TestDeletionOrderImmediate checks the default: the cloud bucket goes
// while another finalizer still holds the object.
func TestDeletionOrderImmediate(t *testing.T) {
	cl := newCloud()
	e := start(t, cl, nil)
	e.create("free", 1, "", nil)
	e.wait("free", converged)
	e.change("free", func(b *v1.Bucket) { b.Finalizers = append(b.Finalizers, holder) })
	e.delete("free")
	bosuntest.Eventually(t, func(context.Context) error {
		if _, ok := cl.bucket(e.ns + ".free"); ok {
			return fmt.Errorf("cloud bucket %s still exists", e.ns+".free")
		}
		return nil
	})
	e.change("free", func(b *v1.Bucket) {
		b.Finalizers = slices.DeleteFunc(b.Finalizers, func(f string) bool { return f == holder })
	})
	e.waitGone("free")
}

// TestTwoDeleteLastStepsBothDelete deletes a Bucket whose external
// resources two steps delete last, each in a cloud of its own: two steps of
// one reconciler, and two controllers (each with its own finalizer, as two
// operators) while a third finalizer holds the object. Neither waits for
// the other: both buckets go once the third finalizer does, and the object
// after them.
func TestTwoDeleteLastStepsBothDelete(t *testing.T) {
	secondOpts := func() []Option {
		return append(testOpts(), WithName("second"), WithConditionTypes("SecondSynced", "SecondAvailable"),
			WithAnnotationPrefix("second.bosun.dev"), WithDeletionOrder(DeletionOrderLast))
	}
	// Both resources are available before the delete: Ready then
	// reports the wait for the other finalizer, not a resource still
	// coming up.
	bothConverged := map[string]cond{
		defaultConditionSynced:    {metav1.ConditionTrue, ReasonReconcileSuccess},
		"SecondSynced":            {metav1.ConditionTrue, ReasonReconcileSuccess},
		defaultConditionAvailable: {metav1.ConditionTrue, ReasonAvailable},
		"SecondAvailable":         {metav1.ConditionTrue, ReasonAvailable},
	}
	check := func(t *testing.T, e *env, first, second *cloud) {
		t.Helper()
		e.create("shared", 1, "", nil)
		e.wait("shared", bothConverged)
		e.change("shared", func(b *v1.Bucket) { b.Finalizers = append(b.Finalizers, holder) })
		e.delete("shared")
		e.wait("shared", map[string]cond{conditions.TypeReady: {metav1.ConditionFalse, ReasonWaitingForFinalizers}})
		if _, _, d := first.counts(); d != 0 {
			t.Fatalf("%d deletes while another finalizer holds the object, want none", d)
		}
		e.change("shared", func(b *v1.Bucket) {
			b.Finalizers = slices.DeleteFunc(b.Finalizers, func(f string) bool { return f == holder })
		})
		e.waitGone("shared")
		for i, cl := range []*cloud{first, second} {
			if got := cl.live(); len(got) != 0 {
				t.Errorf("cloud %d still holds %v after the object is gone", i+1, got)
			}
		}
	}

	t.Run("one reconciler", func(t *testing.T) {
		first, second := newCloud(), newCloud()
		e := startRig(t, first, rig{
			opts: []Option{WithDeletionOrder(DeletionOrderLast)},
			step: func(s *Step[*v1.Bucket]) bosun.Step[*v1.Bucket] {
				return bosun.Join[*v1.Bucket](s, NewStep[*v1.Bucket](second, secondOpts()...))
			},
		})
		check(t, e, first, second)
	})

	t.Run("two controllers", func(t *testing.T) {
		first, second := newCloud(), newCloud()
		e := start(t, first, nil, WithDeletionOrder(DeletionOrderLast))
		// The second operator serves the test's namespace alone: the
		// Buckets earlier tests left, and their connection Secrets, which
		// the step watches, stay out of its cache.
		bosuntest.RunManagerWith(t, e.cp, bosuntest.ManagerOptions{Namespaces: []string{e.ns}}, func(mgr ctrl.Manager) error {
			r := &bosun.Reconciler[*v1.Bucket]{
				Name:      "second-" + e.ns,
				Steps:     []bosun.Step[*v1.Bucket]{NewStep[*v1.Bucket](second, secondOpts()...)},
				Finalizer: "managed.test.bosun.dev/second",
			}
			return bosun.ControllerManagedBy[*v1.Bucket](mgr).Complete(r)
		})
		check(t, e, first, second)
	})
}
