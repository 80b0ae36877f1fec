package managed

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	v1 "github.com/bosunkit/bosun/managed/internal/bucketapi"
)

// rememberedObjects counts the objects the step keeps a memo of.
func rememberedObjects[T client.Object](s *Step[T]) int {
	n := 0
	s.memory.objs.Range(func(_ types.NamespacedName, _ types.UID, r remembered) bool {
		if !r.memo.empty() {
			n++
		}
		return true
	})
	return n
}

// TestMemoryIsReleased checks that what the step remembers of an object
// (here the failed creates it backs off from) is forgotten when the object
// is deleted, whether its Cleanup deletes the resource, leaves it in place
// (deletion policy orphan) or does not run (reconcile policy
// detach-on-delete), and when the object leaves the cache of the manager,
// as an object handed over to another member of a sharded operator does:
// the cache holds only the Buckets labelled share=a, and one is relabelled;
// and that the object handed back is remembered again at once.
func TestMemoryIsReleased(t *testing.T) {
	cl := newCloud()
	cl.failCreate = errors.New("cloud is down")
	var step *Step[*v1.Bucket]
	share := func(s string) map[string]string { return map[string]string{"share": s} }
	e := startRig(t, cl, rig{
		step: func(s *Step[*v1.Bucket]) bosun.Step[*v1.Bucket] {
			step = s
			return s
		},
		configure: func(o *ctrl.Options) {
			o.Cache.ByObject = map[client.Object]cache.ByObject{
				&v1.Bucket{}: {Label: labels.SelectorFromSet(share("a"))},
			}
		},
	})
	objects := []struct {
		name string
		ann  map[string]string
		// leave makes the object go.
		leave func(name string)
	}{
		{name: "deleted", leave: e.delete},
		{name: "orphaned", ann: annotated(AnnotationDeletionPolicy, string(DeletionOrphan)), leave: e.delete},
		{name: "detached", ann: annotated(bosun.AnnotationReconcilePolicy, string(bosun.PolicyDetachOnDelete)), leave: e.delete},
		{name: "handed-over", leave: func(name string) {
			e.change(name, func(b *v1.Bucket) { b.Labels = share("b") })
		}},
	}
	failing := map[string]cond{defaultConditionSynced: {metav1.ConditionFalse, ReasonCreateFailed}}
	for _, o := range objects {
		b := &v1.Bucket{
			ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: o.name, Labels: share("a"), Annotations: o.ann},
			Spec:       v1.BucketSpec{Size: 1},
		}
		if err := e.c.Create(t.Context(), b); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range objects {
		e.wait(o.name, failing)
	}
	bosuntest.Eventually(t, func(context.Context) error {
		if n := rememberedObjects(step); n != len(objects) {
			return fmt.Errorf("the step remembers %d objects, want %d", n, len(objects))
		}
		return nil
	})
	for _, o := range objects {
		o.leave(o.name)
	}
	for _, o := range objects[:3] {
		e.waitGone(o.name)
	}
	bosuntest.Eventually(t, func(context.Context) error {
		if n := rememberedObjects(step); n != 0 {
			return fmt.Errorf("the step still remembers %d objects that are gone or left its cache", n)
		}
		return nil
	})
	// The object that left is still there, and no longer this
	// controller's.
	if b := e.get("handed-over"); b.Labels["share"] != "b" || conditions.Find(b.Status.Conditions, defaultConditionSynced) == nil {
		t.Errorf("handed-over Bucket: labels %v, conditions %v", b.Labels, b.Status.Conditions)
	}
	// Handed back well within gone.For, as a canary's abort hands objects
	// back: the step remembers its failed creates again from its first
	// pass (it backs off from them), rather than forgetting every pass's
	// record for the rest of the minute.
	e.change("handed-over", func(b *v1.Bucket) { b.Labels = share("a") })
	bosuntest.Eventually(t, func(context.Context) error {
		if n := rememberedObjects(step); n != 1 {
			return fmt.Errorf("the step remembers %d objects, want the one handed back", n)
		}
		return nil
	})
}

// TestMemoryIgnoresLatePassesOfForgottenObjects checks that a pass still
// running when its object went (the delete event came first) leaves
// nothing in memory.
func TestMemoryIgnoresLatePassesOfForgottenObjects(t *testing.T) {
	var m memory
	m.polls.objs = &m.objs
	bucket := func(name string) *v1.Bucket {
		return &v1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}}
	}
	a, b := bucket("a"), bucket("b")
	m.change(a, func(v *memo) { v.create = &attempt{n: 1, err: errors.New("down")} })
	m.forget(a)
	m.change(a, func(v *memo) { v.create = &attempt{n: 2, err: errors.New("down")} })
	m.polls.schedule(a.UID, client.ObjectKeyFromObject(a), time.Now())
	m.change(b, func(v *memo) { v.create = &attempt{n: 1, err: errors.New("down")} })
	got := 0
	m.objs.Range(func(_ types.NamespacedName, uid types.UID, _ remembered) bool {
		if uid != b.UID {
			got++
		}
		return true
	})
	if got != 0 {
		t.Errorf("memory holds %d memos or pacings of an object it forgot", got)
	}
	if m.get(b).create == nil {
		t.Error("memory lost the memo of another object")
	}
}

// TestMemoryForgetsAnObjectThatLeftBeforeTheStepRan checks that a pass
// of a Bucket that leaves the manager's cache after the engine loaded it,
// but before the managed step's Do runs (an earlier step of the pass
// relabels it out of the share, as a sharder hands an object over, and
// waits until the step has forgotten it), leaves nothing in the step's
// memory, its pacing of observations included: the pass started with the
// object in the cache, but the object went before the step took it back.
func TestMemoryForgetsAnObjectThatLeftBeforeTheStepRan(t *testing.T) {
	cl := newCloud()
	var step *Step[*v1.Bucket]
	var e *env
	share := func(s string) map[string]string { return map[string]string{"share": s} }
	var uid atomic.Value
	handOver := bosun.NewStep("hand-over", func(ctx context.Context, p *bosun.Pass[*v1.Bucket]) (ctrl.Result, error) {
		b := p.Object
		if b.Name != "leaving" || b.Labels["share"] != "a" {
			return ctrl.Result{}, nil
		}
		uid.Store(b.UID)
		moved := b.DeepCopy()
		moved.Labels = share("b")
		if err := e.c.Update(ctx, moved); err != nil {
			return ctrl.Result{}, err
		}
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			return step.memory.objs.Went(b.UID), nil
		})
		return ctrl.Result{}, err
	})
	e = startRig(t, cl, rig{
		step: func(s *Step[*v1.Bucket]) bosun.Step[*v1.Bucket] {
			step = s
			return bosun.Sequence[*v1.Bucket](handOver, s)
		},
		configure: func(o *ctrl.Options) {
			o.Cache.ByObject = map[client.Object]cache.ByObject{
				&v1.Bucket{}: {Label: labels.SelectorFromSet(share("a"))},
			}
		},
	})
	b := &v1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "leaving", Labels: share("a")}, Spec: v1.BucketSpec{Size: 1}}
	if err := e.c.Create(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	// The step has run after the hand-over: it observed.
	bosuntest.Eventually(t, func(context.Context) error {
		if cl.observed() == 0 {
			return errors.New("the step has not observed yet")
		}
		return nil
	})
	bosuntest.Eventually(t, func(context.Context) error {
		if n := rememberedObjects(step); n != 0 {
			return fmt.Errorf("the step remembers %d objects, want none: the one it had left its cache", n)
		}
		if _, ok := step.memory.polls.get(uid.Load().(types.UID), types.NamespacedName{Namespace: e.ns, Name: "leaving"}); ok {
			return errors.New("the step paces the observations of a Bucket that left its cache")
		}
		return nil
	})
}

// TestMemoryForgetRacesPacing forgets objects while passes of them pace
// their observations, at the same moment, in rounds: whichever comes
// first, nothing of the pacing of an object that went is kept.
func TestMemoryForgetRacesPacing(t *testing.T) {
	const rounds, n = 20, 500
	for r := range rounds {
		var m memory
		m.polls.objs = &m.objs
		objs := make([]*v1.Bucket, n)
		for i := range objs {
			objs[i] = &v1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("b", i), UID: types.UID(fmt.Sprint("uid-", i))}}
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		for _, b := range objs {
			wg.Go(func() {
				<-start
				m.polls.schedule(b.UID, client.ObjectKeyFromObject(b), time.Now())
			})
			wg.Go(func() {
				<-start
				m.forget(b)
			})
		}
		close(start)
		wg.Wait()
		for _, b := range objs {
			if _, ok := m.polls.get(b.UID, client.ObjectKeyFromObject(b)); ok {
				t.Fatalf("round %d: the step paces the observations of %s, which went", r, b.Name)
			}
		}
	}
}
