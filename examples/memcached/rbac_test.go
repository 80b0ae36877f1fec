package memcached

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/bosunkit/bosun/bosuntest"
	cachev1 "github.com/bosunkit/bosun/examples/memcached/api/v1alpha1"
	"github.com/bosunkit/bosun/examples/memcached/config/rbac"
)

// TestGeneratedRole pins the rules controller-gen derives from the
// controller's markers: the children, read-only pods, Memcacheds, their
// status and their finalizers (for the children's blockOwnerDeletion),
// namespaces and events for the engine, nothing else.
func TestGeneratedRole(t *testing.T) {
	role, err := rbac.ClusterRole()
	if err != nil {
		t.Fatal(err)
	}
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

// triples returns rules as sorted, unique "group/resource verb" lines.
func triples(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out = append(out, g+"/"+res+" "+v)
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestRoleIsDerived checks that the rules the reconciler derives from its
// steps (bosun.Reconciler.PolicyRules: the engine's, the children step's
// and reportPods's declared reads of pods) are exactly those the markers
// make controller-gen write: neither grants what the other does not.
func TestRoleIsDerived(t *testing.T) {
	role, err := rbac.ClusterRole()
	if err != nil {
		t.Fatal(err)
	}
	derived, err := NewReconciler().PolicyRules(testScheme(t))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(triples(role.Rules), triples(derived)); diff != "" {
		t.Errorf("derived rules against the generated role (-generated +derived):\n%s", diff)
	}
}

// TestRunsWithGeneratedRole runs the controller as a user that holds only
// the generated ClusterRole, and as one that holds only the rules the
// reconciler derives: a Memcached becomes Ready with its pods listed and
// follows a change of its size, so each grants all it needs.
func TestRunsWithGeneratedRole(t *testing.T) {
	generated, err := rbac.ClusterRole()
	if err != nil {
		t.Fatal(err)
	}
	derived, err := NewReconciler().PolicyRules(testScheme(t))
	if err != nil {
		t.Fatal(err)
	}
	for name, rules := range map[string][]rbacv1.PolicyRule{"generated": generated.Rules, "derived": derived} {
		t.Run(name, func(t *testing.T) { runAs(t, "memcached-controller-"+name, rules) })
	}
}

// runAs runs the controller as user, bound to a ClusterRole of rules,
// through a Memcached's creation and a change of its size.
func runAs(t *testing.T, user string, rules []rbacv1.PolicyRule) {
	t.Helper()
	role := &rbacv1.ClusterRole{Rules: rules}
	cp := shared.ControlPlane(t)
	ctx := t.Context()
	bound := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: role.Rules}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if err := cp.Client.Create(ctx, bound); err != nil {
		t.Fatalf("creating cluster role: %v", err)
	}
	if err := cp.Client.Create(ctx, binding); err != nil {
		t.Fatalf("creating cluster role binding: %v", err)
	}
	t.Cleanup(func() {
		// t.Context() is done by now.
		_ = cp.Client.Delete(context.Background(), binding)
		_ = cp.Client.Delete(context.Background(), bound)
	})
	e := newEnv(t, cp)
	e.mgr = bosuntest.RunManagerWith(t, cp, bosuntest.ManagerOptions{User: user, Configure: LimitPodCache}, e.setup)

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
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}
