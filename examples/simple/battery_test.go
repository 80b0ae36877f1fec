package simple

import (
	"context"
	"errors"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest/faults"
	simplev1 "github.com/bosunkit/bosun/examples/simple/api/v1alpha1"
)

// TestBattery runs the reliability battery on the Simple operator, set up
// as SetupWithManager sets it up. A Simple has nothing but its status:
// no children, no external resources, no finalizer. What Ready cannot show
// is whether the quotient and remainder in the status are right for the
// spec, so that is what convergence checks besides Ready.
func TestBattery(t *testing.T) {
	faults.RunBattery(t, shared.ControlPlane(t), faults.Operator{
		Name: "simple",
		Setup: func(mgr ctrl.Manager, p *faults.Process) error {
			r := NewReconciler()
			p.Configure(&r.Options)
			return faults.Shard(bosun.ControllerManagedBy[*simplev1.Simple](mgr), p).Complete(r)
		},
		Object:    batteryObject,
		Converged: batteryConverged,
		// A new divisor: the status must follow it.
		Change: func(o client.Object) { o.(*simplev1.Simple).Spec.Divisor = 3 },
		Budget: faults.Budget{
			// One status write (results and Ready) per create and per
			// change; nothing to clean up.
			Create: faults.Cost{Writes: 1},
			Change: faults.Cost{Writes: 1},
		},
	})
}

// batteryObject returns the i-th Simple of a battery scenario: 17+i
// divided by 5, so that quotients and remainders differ between objects.
func batteryObject(ns string, i int) client.Object {
	return &simplev1.Simple{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("simple-%d", i)},
		Spec:       simplev1.SimpleSpec{Dividend: int64(17 + i), Divisor: 5},
	}
}

// batteryConverged checks that each Simple's status holds the quotient and
// remainder of its spec.
func batteryConverged(ctx context.Context, c client.Client, _ string, objs []client.Object) error {
	var errs []error
	for _, o := range objs {
		s := &simplev1.Simple{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), s); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := checkResults(s); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.Name, err))
		}
	}
	return errors.Join(errs...)
}

// checkResults reports whether s's status holds Divide's results for its
// spec.
func checkResults(s *simplev1.Simple) error {
	q, r, err := Divide(s.Spec.Dividend, s.Spec.Divisor)
	if err != nil {
		return fmt.Errorf("spec has no results: %w", err)
	}
	switch {
	case s.Status.Quotient == nil || s.Status.Remainder == nil:
		return fmt.Errorf("status has quotient %v and remainder %v, want %d and %d", s.Status.Quotient, s.Status.Remainder, q, r)
	case *s.Status.Quotient != q || *s.Status.Remainder != r:
		return fmt.Errorf("status has quotient %d and remainder %d, want %d and %d", *s.Status.Quotient, *s.Status.Remainder, q, r)
	}
	return nil
}
