package bosun_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// leavingQueue is a controller queue that drops the requests of the
// objects marked as leaving, as a sharded member drops those of the
// objects it hands over.
type leavingQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	leaving *sync.Map
}

func (q *leavingQueue) Get() (reconcile.Request, bool) {
	for {
		item, shutdown := q.TypedRateLimitingInterface.Get()
		if _, gone := q.leaving.Load(item.NamespacedName); shutdown || !gone {
			return item, shutdown
		}
		q.Forget(item)
		q.Done(item)
	}
}

// TestMemoryIsReleasedWhenObjectsLeave checks that the engine forgets
// what it remembers of an object (the versions its writes made and wrote
// over) when the object leaves the cache, also when the request its
// departure brings never reaches the engine: the manager caches only the
// Widgets labelled share=a, and the objects relabelled away have their
// requests dropped, as a sharded member drops those it hands over.
func TestMemoryIsReleasedWhenObjectsLeave(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := newReconciler("memory-released", newJournal(), false)
	var leaving sync.Map
	bosuntest.RunManagerWith(t, f.cp, bosuntest.ManagerOptions{Configure: func(o *ctrl.Options) {
		o.Cache.ByObject = map[client.Object]cache.ByObject{
			&testapi.Widget{}: {Label: labels.SelectorFromSet(labels.Set{"share": "a"}), Namespaces: map[string]cache.Config{f.ns: {}}},
		}
	}}, func(mgr ctrl.Manager) error {
		return bosun.ControllerManagedBy[*testapi.Widget](mgr).For(&testapi.Widget{}).
			WithOptions(controller.Options{
				UsePriorityQueue: ptr.To(false),
				NewQueue: func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
					q := workqueue.NewTypedRateLimitingQueueWithConfig(rl, workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Name: name})
					return &leavingQueue{TypedRateLimitingInterface: q, leaving: &leaving}
				},
			}).
			Complete(r)
	})
	const n = 5
	for i := range n {
		w := &testapi.Widget{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "m" + strconv.Itoa(i), Labels: map[string]string{"share": "a"}},
			Spec:       testapi.WidgetSpec{Value: 10, Divisor: 2},
		}
		if err := f.c.Create(t.Context(), w); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		f.waitReady("m"+strconv.Itoa(i), metav1.ConditionTrue, conditions.ReasonSucceeded)
	}
	bosuntest.Eventually(t, func(context.Context) error {
		if got := bosun.RememberedObjects(r); got != n {
			return fmt.Errorf("the engine remembers %d objects, want %d", got, n)
		}
		return nil
	})
	for i := range n {
		name := "m" + strconv.Itoa(i)
		leaving.Store(types.NamespacedName{Namespace: f.ns, Name: name}, true)
		w := &testapi.Widget{}
		w.Namespace, w.Name = f.ns, name
		if err := f.c.Patch(t.Context(), w, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"share":"b"}}}`))); err != nil {
			t.Fatal(err)
		}
	}
	bosuntest.Eventually(t, func(context.Context) error {
		if got := bosun.RememberedObjects(r); got != 0 {
			return fmt.Errorf("the engine still remembers %d objects that left its cache", got)
		}
		return nil
	})
}

// holdStep holds the pass of the Widget "held" until release is closed,
// and says on entered when it began.
type holdStep struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (*holdStep) Name() string { return "hold" }

func (s *holdStep) Do(ctx context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	if req.Object.Name != "held" {
		return ctrl.Result{}, nil
	}
	s.once.Do(func() { close(s.entered) })
	select {
	case <-s.release:
	case <-ctx.Done():
	}
	return ctrl.Result{}, nil
}

// TestMemoryIsReleasedWhenObjectsLeaveDuringAPass checks that a pass that
// runs while its object leaves the cache leaves nothing in the engine's
// memory when it ends: the Widget is relabelled away while its first pass
// is held, then the pass ends (its status write, guarded by the version
// it read, is refused) and the engine remembers nothing of it.
func TestMemoryIsReleasedWhenObjectsLeaveDuringAPass(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	hold := &holdStep{entered: make(chan struct{}), release: make(chan struct{})}
	r := newReconciler("memory-released-during-a-pass", newJournal(), false)
	r.Steps = append(r.Steps, hold)
	var cached client.Reader
	bosuntest.RunManagerWith(t, f.cp, bosuntest.ManagerOptions{Configure: func(o *ctrl.Options) {
		o.Cache.ByObject = map[client.Object]cache.ByObject{
			&testapi.Widget{}: {Label: labels.SelectorFromSet(labels.Set{"share": "a"}), Namespaces: map[string]cache.Config{f.ns: {}}},
		}
	}}, func(mgr ctrl.Manager) error {
		cached = mgr.GetClient()
		return bosun.ControllerManagedBy[*testapi.Widget](mgr).For(&testapi.Widget{}).Complete(r)
	})
	w := &testapi.Widget{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "held", Labels: map[string]string{"share": "a"}},
		Spec:       testapi.WidgetSpec{Value: 10, Divisor: 2},
	}
	if err := f.c.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hold.entered:
	case <-time.After(time.Minute):
		t.Fatal("the pass of the Widget never began")
	}
	if err := f.c.Patch(t.Context(), w, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"share":"b"}}}`))); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		err := cached.Get(ctx, client.ObjectKeyFromObject(w), &testapi.Widget{})
		if err == nil {
			return errors.New("the Widget is still in the cache")
		}
		return client.IgnoreNotFound(err)
	})
	close(hold.release)
	bosuntest.Eventually(t, func(context.Context) error {
		if got := bosun.RememberedObjects(r); got != 0 {
			return fmt.Errorf("the engine remembers %d objects that left its cache", got)
		}
		return nil
	})
}
