package simple

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/controlplane"
	simplev1 "github.com/bosunkit/bosun/examples/simple/api/v1alpha1"
)

// shared is the control plane, with the Simple CRD installed, that the
// envtest tests of this package share. Each test runs its own manager and
// works in a namespace of its own.
var shared = bosuntest.Shared{Options: controlplane.OptionsFor(AddToScheme, CRDs)}

func TestMain(m *testing.M) { shared.Main(m) }

// runController runs the Simple controller, set up as the demo sets it up,
// until the test ends. wrap, when not nil, wraps the client the controller
// writes through.
func runController(t *testing.T, wrap func(client.Client) client.WithWatch) *controlplane.ControlPlane {
	t.Helper()
	cp, _ := runWatched(t, wrap)
	return cp
}

// runWatched is runController, and returns the record of the controller's
// passes too, which notes the Simples the controller loads for its Touch.
func runWatched(t *testing.T, wrap func(client.Client) client.WithWatch) (*controlplane.ControlPlane, *bosuntest.ReconcileCounter) {
	t.Helper()
	cp := shared.ControlPlane(t)
	p := &bosuntest.ReconcileCounter{}
	bosuntest.RunManager(t, cp, func(mgr ctrl.Manager) error {
		bosun.ObservationOf(mgr).AddObserver(bosun.PassObserverFunc(func(_ context.Context, r bosun.PassReport) {
			p.Record(bosuntest.ReconcileCall{Request: reconcile.Request{NamespacedName: r.Object}, Start: r.Start, Duration: r.Duration})
		}))
		c := p.WrapClient(mgr.GetClient())
		if wrap != nil {
			c = wrap(c)
		}
		return SetupWithManager(bosuntest.ManagerWithClient(mgr, c))
	})
	return cp, p
}

// window is bosuntest.Window with the Simple at clock, whose passes
// counter counts.
func window(t *testing.T, c client.Client, counter *bosuntest.ReconcileCounter, clock client.ObjectKey, d time.Duration, n int) {
	t.Helper()
	s := &simplev1.Simple{ObjectMeta: metav1.ObjectMeta{Namespace: clock.Namespace, Name: clock.Name}}
	bosuntest.Window(t, c, s, func() int { return counter.Count(clock) }, d, n)
}

// createSimple creates a Simple in namespace ns.
func createSimple(t *testing.T, c client.Client, ns, name string, dividend, divisor int64) client.ObjectKey {
	t.Helper()
	s := &simplev1.Simple{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       simplev1.SimpleSpec{Dividend: dividend, Divisor: divisor},
	}
	if err := c.Create(t.Context(), s); err != nil {
		t.Fatalf("create simple %s: %v", name, err)
	}
	return client.ObjectKeyFromObject(s)
}

// condition describes a condition by the fields the tests check.
type condition struct {
	Status metav1.ConditionStatus
	Reason conditions.Reason
}

// waitStatus waits until the Simple at key has the Ready and DivisorValid
// conditions given, both for its current generation, as well as
// status.observedGeneration, and returns it.
func waitStatus(t *testing.T, c client.Client, key client.ObjectKey, ready, divisorValid condition) *simplev1.Simple {
	t.Helper()
	var got *simplev1.Simple
	bosuntest.Eventually(t, func(ctx context.Context) error {
		s := &simplev1.Simple{}
		if err := c.Get(ctx, key, s); err != nil {
			return err
		}
		if s.Status.ObservedGeneration != s.Generation {
			return fmt.Errorf("observedGeneration %d, generation %d", s.Status.ObservedGeneration, s.Generation)
		}
		for typ, want := range map[string]condition{conditions.TypeReady: ready, simplev1.ConditionDivisorValid: divisorValid} {
			cond := conditions.Find(s.Status.Conditions, typ)
			switch {
			case cond == nil:
				return errors.New("no " + typ + " condition")
			case cond.Status != want.Status || cond.Reason != string(want.Reason):
				return fmt.Errorf("%s is %s/%s (%q), want %s/%s", typ, cond.Status, cond.Reason, cond.Message, want.Status, want.Reason)
			case cond.ObservedGeneration != s.Generation:
				return fmt.Errorf("%s describes generation %d, object is at %d", typ, cond.ObservedGeneration, s.Generation)
			}
		}
		got = s
		return nil
	})
	return got
}
