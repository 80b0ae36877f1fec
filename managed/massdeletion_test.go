package managed

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	v1 "github.com/bosunkit/bosun/managed/internal/bucketapi"
)

// massCount is the breaker's default count.
const massCount = 20

// TestMassDeletionOfANamespace deletes a few Buckets, whose cleanups go
// on, then the namespace of 200 Buckets, which the namespace controller
// of the shared control plane empties: the mass-deletion breaker, on by
// default, lets at most its default count of cleanups go on and holds the
// others, each with DeletionBlocked and Ready DeletionHeld and its bucket
// undeleted in the cloud. Once an administrator annotates them
// bosun.dev/allow-mass-deletion=true, every bucket is deleted and the
// namespace goes.
func TestMassDeletionOfANamespace(t *testing.T) {
	t.Parallel()
	cl := newCloud()
	e := startRig(t, cl, rig{workers: 2})
	ctx := t.Context()

	// A normal deletion of a few is not held.
	few := []string{"few-0", "few-1", "few-2"}
	for _, name := range few {
		e.create(name, 1, "", nil)
	}
	for _, name := range few {
		e.wait(name, converged)
	}
	for _, name := range few {
		e.delete(name)
	}
	for _, name := range few {
		e.waitGone(name)
	}
	if live := len(cl.live()); live != 0 {
		t.Fatalf("%d buckets left after a normal deletion of %d, want 0", live, len(few))
	}

	const n = 200
	for i := range n {
		e.create(fmt.Sprintf("b-%03d", i), 1, "", nil)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		var list v1.BucketList
		if err := e.c.List(ctx, &list, client.InNamespace(e.ns)); err != nil {
			return err
		}
		ready := 0
		for i := range list.Items {
			if checkConditions(&list.Items[i], converged) == nil {
				ready++
			}
		}
		if ready != n {
			return fmt.Errorf("%d of %d Buckets converged", ready, n)
		}
		return nil
	}, bosuntest.Timeout(5*time.Minute))
	if live := len(cl.live()); live != n {
		t.Fatalf("%d buckets in the cloud, want %d", live, n)
	}

	if err := e.c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}); err != nil {
		t.Fatal(err)
	}
	// Every Bucket is gone or held.
	var held []v1.Bucket
	bosuntest.Eventually(t, func(ctx context.Context) error {
		var list v1.BucketList
		if err := e.c.List(ctx, &list, client.InNamespace(e.ns)); err != nil {
			return err
		}
		held = held[:0]
		for _, b := range list.Items {
			c := conditions.Find(b.Status.Conditions, conditions.TypeDeletionBlocked)
			if b.DeletionTimestamp == nil || c == nil || c.Reason != string(conditions.ReasonDeletionHeld) {
				return fmt.Errorf("bucket %s is neither gone nor held (deleting %v, DeletionBlocked %v)", b.Name, b.DeletionTimestamp != nil, c)
			}
			if r := conditions.Find(b.Status.Conditions, conditions.TypeReady); r == nil || r.Reason != string(conditions.ReasonDeletionHeld) {
				return fmt.Errorf("bucket %s: Ready %v, want DeletionHeld", b.Name, r)
			}
			held = append(held, b)
		}
		return nil
	}, bosuntest.Timeout(2*time.Minute))
	if gone := n - len(held); gone > massCount {
		t.Errorf("%d Buckets cleaned up, want at most the breaker's count %d", gone, massCount)
	}
	t.Logf("%d of %d Buckets cleaned up before the breaker held the other %d", n-len(held), n, len(held))
	cl.mu.Lock()
	for _, b := range held {
		if d := cl.deletes[string(b.UID)]; d != 0 {
			t.Errorf("bucket %s held but deleted %d times in the cloud", b.Name, d)
		}
		if bk, ok := cl.buckets[nameOf(&b)]; !ok || bk.deleted {
			t.Errorf("bucket %s held but gone from the cloud", b.Name)
		}
	}
	cl.mu.Unlock()
	if live := len(cl.live()); live != len(held) {
		t.Errorf("%d buckets in the cloud, want the %d held", live, len(held))
	}

	// The administrator lets the deletion go on.
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"true"}}}`, bosun.AnnotationAllowMassDeletion)
	for _, b := range held {
		err := e.c.Patch(ctx, &v1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: b.Name}}, client.RawPatch(types.MergePatchType, patch))
		if client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		err := e.c.Get(ctx, client.ObjectKey{Name: e.ns}, &corev1.Namespace{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("namespace %s: %w, want it gone", e.ns, err)
		}
		return nil
	}, bosuntest.Timeout(3*time.Minute))
	if live := cl.live(); len(live) != 0 {
		t.Errorf("%d buckets left in the cloud after the allowed deletion, want 0", len(live))
	}
}
