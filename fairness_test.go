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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/fairqueue"
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
	storeWidgets(ctx, t, cp.Client, busy, "b", nBusy, 1)
	storeWidgets(ctx, t, cp.Client, small, "s", nSmall, 1)
	step := &slowStep{seen: map[string]bool{}}
	runIn(t, cp, &bosun.Reconciler[*testapi.Widget]{Name: "fair", Steps: []bosun.Step[*testapi.Widget]{step}}, controller.Options{}, fairqueue.ByNamespace, busy, small)
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

// storeWidgets creates n Widgets in ns, named prefix and a number, of
// value 1 and the divisor.
func storeWidgets(ctx context.Context, t *testing.T, c client.Client, ns, prefix string, n int, divisor int64) {
	t.Helper()
	for i := range n {
		w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s%03d", prefix, i)}, Spec: testapi.WidgetSpec{Value: 1, Divisor: divisor}}
		if err := c.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
}

// runIn runs r with the controller options opts on the objects of the
// namespaces alone, with a fair queue grouped by key when key is set.
func runIn(t *testing.T, cp *controlplane.ControlPlane, r *bosun.Reconciler[*testapi.Widget], opts controller.Options, key fairqueue.KeyFunc[reconcile.Request], namespaces ...string) {
	t.Helper()
	mine := predicate.NewPredicateFuncs(func(o client.Object) bool {
		ns := o.GetNamespace()
		if ns == "" {
			ns = o.GetName()
		}
		return slices.Contains(namespaces, ns)
	})
	bosuntest.RunManager(t, cp, func(mgr ctrl.Manager) error {
		b := bosun.ControllerManagedBy[*testapi.Widget](mgr).WithEventFilter(mine).WithOptions(opts)
		if key != nil {
			b = b.WithFairQueue(key)
		}
		return b.Complete(r)
	})
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
// in order; as the reconciler's event recorder, it also records every
// Warning event among them, as "event ns/name".
type orderStep struct {
	mu     sync.Mutex
	passes []string
}

func (s *orderStep) Eventf(regarding, _ runtime.Object, eventtype, _, _, _ string, _ ...any) {
	if eventtype != corev1.EventTypeWarning {
		return
	}
	obj, ok := regarding.(client.Object)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.passes = append(s.passes, "event "+obj.GetNamespace()+"/"+obj.GetName())
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
// object has a second pass, and none has its Warning event recorded (an
// API write), before every healthy one had its first pass; then each has
// its one event. The fair queue alone would give the failing namespace
// every other turn.
func TestRetriesWaitForFreshWork(t *testing.T) {
	t.Parallel()
	cp := shared.ControlPlane(t)
	ctx := t.Context()
	failing, healthy := fairNamespace(t, cp.Client, "retry-a-"), fairNamespace(t, cp.Client, "retry-b-")
	const nFailing, nHealthy = 5, 60
	storeWidgets(ctx, t, cp.Client, failing, "f", nFailing, 0)
	storeWidgets(ctx, t, cp.Client, healthy, "h", nHealthy, 1)
	step := &orderStep{}
	runIn(t, cp, &bosun.Reconciler[*testapi.Widget]{Name: "retries", Steps: []bosun.Step[*testapi.Widget]{step}, Recorder: step}, controller.Options{
		MaxConcurrentReconciles: 1,
		RateLimiter:             workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](time.Millisecond, time.Millisecond),
	}, nil, failing, healthy)
	firstPasses := func() (healthyDone, retriesBefore, eventsBefore, events int) {
		step.mu.Lock()
		defer step.mu.Unlock()
		seen := map[string]bool{}
		for _, key := range step.passes {
			if strings.HasPrefix(key, "event ") {
				events++
				if healthyDone < nHealthy {
					eventsBefore++
				}
				continue
			}
			if strings.HasPrefix(key, healthy+"/") {
				if !seen[key] {
					healthyDone++
				}
			} else if seen[key] && healthyDone < nHealthy {
				retriesBefore++
			}
			seen[key] = true
		}
		return healthyDone, retriesBefore, eventsBefore, events
	}
	bosuntest.Eventually(t, func(context.Context) error {
		if n, _, _, events := firstPasses(); n < nHealthy || events < nFailing {
			return fmt.Errorf("%d healthy objects had a pass, want %d; %d Warning events, want %d", n, nHealthy, events, nFailing)
		}
		return nil
	}, bosuntest.Timeout(2*time.Minute))
	_, retries, eventsBefore, events := firstPasses()
	if retries > 0 {
		t.Errorf("failing objects were retried %d times before every healthy object had its first pass, want none", retries)
	}
	if eventsBefore > 0 {
		t.Errorf("%d Warning events were recorded before every healthy object had its first pass, want none", eventsBefore)
	}
	if events != nFailing {
		t.Errorf("%d Warning events, want one per failing object (%d)", events, nFailing)
	}
}
