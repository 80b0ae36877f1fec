package managed

import (
	"context"
	"fmt"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
				DefaultConditionSynced:    {metav1.ConditionFalse, ReasonWaitingForFinalizers},
				DefaultConditionAvailable: {metav1.ConditionTrue, ReasonAvailable},
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
