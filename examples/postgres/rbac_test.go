package postgres

import (
	"testing"

	"github.com/bosunkit/bosun/bosuntest/unit"
	"github.com/bosunkit/bosun/examples/internal/rbaccheck"
)

// TestRoleIsDerived checks that the rules the two reconcilers derive from
// their steps (bosun.Reconciler.PolicyRules: the engine's, the managed
// step's connection Secret and the reference to the owner Role) are
// exactly those the markers make controller-gen write.
func TestRoleIsDerived(t *testing.T) {
	s := unit.Scheme(t, AddToScheme)
	roles, err := NewRoleReconciler(Options{}).PolicyRules(s)
	if err != nil {
		t.Fatal(err)
	}
	databases, err := NewDatabaseReconciler(Options{}).PolicyRules(s)
	if err != nil {
		t.Fatal(err)
	}
	rbaccheck.Compare(t, rbaccheck.Role(t, rbaccheck.RoleFile).Rules, append(roles, databases...))
}
