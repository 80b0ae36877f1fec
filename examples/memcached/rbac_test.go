package memcached

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/examples/internal/rbaccheck"
	cachev1 "github.com/bosunkit/bosun/examples/memcached/api/v1alpha1"
)

// TestGeneratedRole pins the rules controller-gen derives from the
// controller's markers: the children, read-only pods, Memcacheds, their
// status and their finalizers (for the children's blockOwnerDeletion),
// namespaces and events for the engine, nothing else.
func TestGeneratedRole(t *testing.T) {
	role := rbaccheck.Role(t, rbaccheck.RoleFile)
	rw := []string{"create", "delete", "get", "list", "patch", "watch"}
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"namespaces", "pods"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: rw},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: rw},
		{APIGroups: []string{"cache.example.bosun.dev"}, Resources: []string{"memcacheds"}, Verbs: []string{"get", "list", "patch", "update", "watch"}},
		{APIGroups: []string{"cache.example.bosun.dev"}, Resources: []string{"memcacheds/finalizers"}, Verbs: []string{"update"}},
		{APIGroups: []string{"cache.example.bosun.dev"}, Resources: []string{"memcacheds/status"}, Verbs: []string{"get", "patch", "update"}},
		{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	}
	if diff := cmp.Diff(want, role.Rules); diff != "" {
		t.Errorf("generated rules (-want +got):\n%s", diff)
	}
}

// TestRoleIsDerived checks that the rules the reconciler derives from its
// steps (bosun.Reconciler.PolicyRules: the engine's, the children step's
// and reportPods's declared reads of pods) are exactly those the markers
// make controller-gen write: neither grants what the other does not.
func TestRoleIsDerived(t *testing.T) {
	derived, err := NewReconciler().PolicyRules(testScheme(t))
	if err != nil {
		t.Fatal(err)
	}
	rbaccheck.Compare(t, rbaccheck.Role(t, rbaccheck.RoleFile).Rules, derived)
}

// TestRunsWithGeneratedRole runs the controller as a user that holds only
// the generated ClusterRole, and as one that holds only the rules the
// reconciler derives: a Memcached becomes Ready with its pods listed and
// follows a change of its size, so each grants all it needs.
func TestRunsWithGeneratedRole(t *testing.T) {
	generated := rbaccheck.Role(t, rbaccheck.RoleFile)
	derived, err := NewReconciler().PolicyRules(testScheme(t))
	if err != nil {
		t.Fatal(err)
	}
	for name, rules := range map[string][]rbacv1.PolicyRule{"generated": generated.Rules, "derived": derived} {
		t.Run(name, func(t *testing.T) { runAs(t, "memcached-controller-"+name, rules) })
	}
}

// runAs runs the controller as user, a user that holds rules and nothing
// else, through a Memcached's creation and a change of its size.
func runAs(t *testing.T, user string, rules []rbacv1.PolicyRule) {
	t.Helper()
	cp := shared.ControlPlane(t)
	e := newEnv(t, cp)
	e.mgr = rbaccheck.RunAs(t, cp, user, rules, bosuntest.ManagerOptions{Configure: LimitPodCache}, e.setup)

	name := "rbac-" + user[len("memcached-controller-"):]
	e.create(name, 1)
	e.waitReady(name, 1, cachev1.DefaultImage)
	e.patch(name, func(m *cachev1.Memcached) { m.Spec.Size = 2 })
	e.waitReady(name, 2, cachev1.DefaultImage)
}

// testScheme returns a scheme of the built-in kinds and the Memcached API.
func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}
