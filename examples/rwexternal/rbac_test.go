package rwexternal

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/unit"
	"github.com/bosunkit/bosun/examples/internal/rbaccheck"
	rwv1 "github.com/bosunkit/bosun/examples/rwexternal/api/v1alpha1"
)

// TestRoleIsDerived checks that the rules the reconciler derives
// (bosun.Reconciler.PolicyRules: the engine's, and the Secrets readInput
// reads and writeOutput reads and writes) are exactly those the markers
// make controller-gen write.
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
// TestRoleIsDerived): an RWExternal claims its finalizer, writes its
// output and becomes Ready, follows a change of its input, and on deletion
// removes its output and lets go.
func TestRunsWithGeneratedRole(t *testing.T) {
	cp := shared.ControlPlane(t)
	rbaccheck.RunAs(t, cp, "rwexternal-controller-generated", rbaccheck.Role(t, rbaccheck.RoleFile).Rules,
		bosuntest.ManagerOptions{}, SetupWithManager)
	e := newEnv(t, cp)
	e.setInput("creds", creds)
	e.create("rbac", "creds", nil)
	rw := e.waitConditions("rbac", converged)
	if !controllerutil.ContainsFinalizer(rw, Finalizer) {
		t.Errorf("finalizers = %v, want %s", rw.Finalizers, Finalizer)
	}
	e.waitOutput("rbac-output", "rbac", creds)

	e.setInput("creds", rotated)
	e.waitOutput("rbac-output", "rbac", rotated)
	e.waitConditions("rbac", converged)

	if err := e.c.Delete(t.Context(), rw); err != nil {
		t.Fatalf("delete rwexternal: %v", err)
	}
	e.waitGone(&rwv1.RWExternal{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "rbac"}})
	if err := e.missing("rbac-output"); err != nil {
		t.Error(err)
	}
}
