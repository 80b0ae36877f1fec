package bosun_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/internal/testapi"
)

// slowStep takes a millisecond a pass, as a step that calls out would,
// and records the order of the first passes.
type slowStep struct {
	mu    sync.Mutex
	order []string
	seen  map[string]bool
}

func (*slowStep) Name() string { return "slow" }

func (s *slowStep) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	time.Sleep(time.Millisecond)
	s.mu.Lock()
	defer s.mu.Unlock()
	key := req.Object.Namespace + "/" + req.Object.Name
	if !s.seen[key] {
		s.seen[key] = true
		s.order = append(s.order, req.Object.Namespace)
	}
	req.Object.Status.Result = req.Object.Spec.Value
	return ctrl.Result{}, nil
}

// TestFairQueueByNamespace checks that the objects of a small namespace
// are not queued behind those of a busy one: with 400 objects of one
// namespace and 5 of another stored before the controller starts, and the
// small namespace last in the order the cache lists them, every object of
// the small one has its first pass before a fifth of the busy one's.
func TestFairQueueByNamespace(t *testing.T) {
	t.Parallel()
	cp := shared.ControlPlane(t)
	ctx := t.Context()
	busy, small := fairNamespace(t, cp.Client, "fair-a-"), fairNamespace(t, cp.Client, "fair-z-")
	const nBusy, nSmall = 400, 5
	for i := range nBusy + nSmall {
		ns, name := busy, fmt.Sprintf("b%03d", i)
		if i >= nBusy {
			ns, name = small, fmt.Sprintf("s%d", i-nBusy)
		}
		if err := cp.Client.Create(ctx, &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: testapi.WidgetSpec{Value: 1, Divisor: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	step := &slowStep{seen: map[string]bool{}}
	r := &bosun.Reconciler[*testapi.Widget]{Name: "fair", Steps: []bosun.Step[*testapi.Widget]{step}}
	mine := predicate.NewPredicateFuncs(func(o client.Object) bool {
		ns := o.GetNamespace()
		if ns == "" {
			ns = o.GetName()
		}
		return ns == busy || ns == small
	})
	bosuntest.RunManager(t, cp, func(mgr ctrl.Manager) error {
		return bosun.ControllerManagedBy[*testapi.Widget](mgr).WithEventFilter(mine).Complete(r)
	})
	bosuntest.Eventually(t, func(context.Context) error {
		step.mu.Lock()
		defer step.mu.Unlock()
		if n := len(step.order); n < nBusy+nSmall {
			return fmt.Errorf("%d objects had a pass, want %d", n, nBusy+nSmall)
		}
		return nil
	}, bosuntest.Timeout(2*time.Minute))
	step.mu.Lock()
	defer step.mu.Unlock()
	last := 0
	for i, ns := range step.order {
		if ns == small {
			last = i
		}
	}
	busyBefore := last - (nSmall - 1)
	t.Logf("the last object of the small namespace had its first pass after %d of the busy namespace's %d", busyBefore, nBusy)
	if busyBefore > nBusy/5 {
		t.Errorf("the small namespace waited for %d objects of the busy one, want at most %d", busyBefore, nBusy/5)
	}
	if !slices.Contains(step.order, busy) {
		t.Error("the busy namespace had no pass")
	}
}

// fairNamespace creates a namespace whose name starts with prefix.
func fairNamespace(t *testing.T, c client.Client, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}
	if err := c.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// orderStep fails the Widgets with a zero divisor and records every pass,
// in order.
type orderStep struct {
	mu     sync.Mutex
	passes []string
}

func (*orderStep) Name() string { return "order" }

func (s *orderStep) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	s.mu.Lock()
	s.passes = append(s.passes, req.Object.Namespace+"/"+req.Object.Name)
	s.mu.Unlock()
	if req.Object.Spec.Divisor == 0 {
		return ctrl.Result{}, errors.New("divisor is zero")
	}
	req.Object.Status.Result = req.Object.Spec.Value / req.Object.Spec.Divisor
	return ctrl.Result{}, nil
}

// TestRetriesWaitForFreshWork checks that failing objects do not slow the
// healthy ones: with 5 failing objects in one namespace and 60 healthy
// ones in another stored before the controller starts, one worker and a
// rate limiter that makes every retry due after a millisecond, no failing
// object has a second pass before every healthy one had its first. The
// fair queue alone would give the failing namespace every other turn.
func TestRetriesWaitForFreshWork(t *testing.T) {
	t.Parallel()
	cp := shared.ControlPlane(t)
	ctx := t.Context()
	failing, healthy := fairNamespace(t, cp.Client, "retry-a-"), fairNamespace(t, cp.Client, "retry-b-")
	const nFailing, nHealthy = 5, 60
	for i := range nFailing + nHealthy {
		ns, name, divisor := healthy, fmt.Sprintf("h%02d", i-nFailing), int64(1)
		if i < nFailing {
			ns, name, divisor = failing, fmt.Sprintf("f%d", i), 0
		}
		if err := cp.Client.Create(ctx, &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: testapi.WidgetSpec{Value: 1, Divisor: divisor}}); err != nil {
			t.Fatal(err)
		}
	}
	step := &orderStep{}
	r := &bosun.Reconciler[*testapi.Widget]{Name: "retries", Steps: []bosun.Step[*testapi.Widget]{step}}
	mine := predicate.NewPredicateFuncs(func(o client.Object) bool {
		ns := o.GetNamespace()
		if ns == "" {
			ns = o.GetName()
		}
		return ns == failing || ns == healthy
	})
	bosuntest.RunManager(t, cp, func(mgr ctrl.Manager) error {
		return bosun.ControllerManagedBy[*testapi.Widget](mgr).WithEventFilter(mine).WithOptions(controller.Options{
			MaxConcurrentReconciles: 1,
			RateLimiter:             workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](time.Millisecond, time.Millisecond),
		}).Complete(r)
	})
	firstPasses := func() (healthyDone int, retriesBefore int) {
		step.mu.Lock()
		defer step.mu.Unlock()
		seen := map[string]bool{}
		for _, key := range step.passes {
			if strings.HasPrefix(key, healthy+"/") {
				if !seen[key] {
					healthyDone++
				}
			} else if seen[key] && healthyDone < nHealthy {
				retriesBefore++
			}
			seen[key] = true
		}
		return healthyDone, retriesBefore
	}
	bosuntest.Eventually(t, func(context.Context) error {
		if n, _ := firstPasses(); n < nHealthy {
			return fmt.Errorf("%d healthy objects had a pass, want %d", n, nHealthy)
		}
		return nil
	}, bosuntest.Timeout(2*time.Minute))
	if _, retries := firstPasses(); retries > 0 {
		t.Errorf("failing objects were retried %d times before every healthy object had its first pass, want none", retries)
	}
}
