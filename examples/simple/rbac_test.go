package simple

import (
	"context"
	"fmt"
	"math"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/unit"
	"github.com/bosunkit/bosun/examples/internal/rbaccheck"
	simplev1 "github.com/bosunkit/bosun/examples/simple/api/v1alpha1"
)

// TestRoleIsDerived checks that the rules the reconciler derives
// (bosun.Reconciler.PolicyRules: the engine's alone, since no step reads
// or writes another kind) are exactly those the markers make
// controller-gen write.
func TestRoleIsDerived(t *testing.T) {
	s := unit.Scheme(t, AddToScheme)
	derived, err := NewReconciler().PolicyRules(s)
	if err != nil {
		t.Fatal(err)
	}
	rbaccheck.Compare(t, rbaccheck.Role(t, rbaccheck.RoleFile).Rules, derived)
}

// TestRunsWithGeneratedRole runs the controller as a user that holds only
// the generated ClusterRole, which grants what the derived rules do (see
// TestRoleIsDerived): a Simple becomes Ready, follows changes of its spec
// through a zero divisor and an overflow (whose terminal error the engine
// records as an event) and back, and goes when deleted.
func TestRunsWithGeneratedRole(t *testing.T) {
	cp := shared.ControlPlane(t)
	rbaccheck.RunAs(t, cp, "simple-controller-generated", rbaccheck.Role(t, rbaccheck.RoleFile).Rules,
		bosuntest.ManagerOptions{}, SetupWithManager)
	ctx := t.Context()
	ns := bosuntest.Namespace(t, cp.Client)
	key := createSimple(t, cp.Client, ns, "rbac", 17, 5)
	waitStatus(t, cp.Client, key, readyTrue, divisorOK)

	set := func(dividend, divisor int64) {
		t.Helper()
		s := &simplev1.Simple{}
		if err := cp.Client.Get(ctx, key, s); err != nil {
			t.Fatal(err)
		}
		base := s.DeepCopy()
		s.Spec.Dividend, s.Spec.Divisor = dividend, divisor
		if err := cp.Client.Patch(ctx, s, client.MergeFrom(base)); err != nil {
			t.Fatalf("patch simple: %v", err)
		}
	}
	set(17, 0)
	waitStatus(t, cp.Client, key, condition{metav1.ConditionFalse, simplev1.ReasonZeroDivisor}, zeroDivisor)
	set(math.MinInt64, -1)
	waitStatus(t, cp.Client, key, condition{metav1.ConditionFalse, ReasonOverflow}, divisorOK)
	set(17, 3)
	waitStatus(t, cp.Client, key, readyTrue, divisorOK)

	if err := cp.Client.Delete(ctx, &simplev1.Simple{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name}}); err != nil {
		t.Fatalf("delete simple: %v", err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := cp.Client.Get(ctx, key, &simplev1.Simple{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("get simple: %w, want NotFound", err)
		}
		return nil
	})
}
