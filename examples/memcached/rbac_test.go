package memcached

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// TestRunsWithGeneratedRole runs the controller as a user that holds only
// the generated ClusterRole: a Memcached becomes Ready with its pods
// listed and follows a change of its size, so the markers grant all it
// needs.
func TestRunsWithGeneratedRole(t *testing.T) {
	role, err := rbac.ClusterRole()
	if err != nil {
		t.Fatal(err)
	}
	const user = "memcached-controller-generated"
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

	e.create("rbac", 1)
	e.waitReady("rbac", 1, cachev1.DefaultImage)
	e.patch("rbac", func(m *cachev1.Memcached) { m.Spec.Size = 2 })
	e.waitReady("rbac", 2, cachev1.DefaultImage)
}
