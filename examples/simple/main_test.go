package simple

import (
	"context"
	"errors"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	cp := shared.ControlPlane(t)
	bosuntest.RunManager(t, cp, func(mgr ctrl.Manager) error {
		if wrap != nil {
			mgr = bosuntest.ManagerWithClient(mgr, wrap(mgr.GetClient()))
		}
		return SetupWithManager(mgr)
	})
	return cp
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
	Reason string
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
			case cond.Status != want.Status || cond.Reason != want.Reason:
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
