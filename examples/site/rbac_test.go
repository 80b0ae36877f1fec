package site

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/bosuntest"
	sitev1 "github.com/bosunkit/bosun/examples/site/api/v1alpha1"
	"github.com/bosunkit/bosun/examples/site/config/rbac"
)

// TestGeneratedRole pins the rules controller-gen derives from the
// controller's markers: the children, read-only Secrets, Sites, their
// status and their finalizers (for the children's blockOwnerDeletion),
// namespaces and events for the engine, nothing else.
func TestGeneratedRole(t *testing.T) {
	role, err := rbac.ClusterRole()
	if err != nil {
		t.Fatal(err)
	}
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps", "services"}, Verbs: []string{"create", "delete", "get", "list", "patch", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"namespaces", "secrets"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		{APIGroups: []string{"site.bosun.dev"}, Resources: []string{"sites"}, Verbs: []string{"get", "list", "patch", "update", "watch"}},
		{APIGroups: []string{"site.bosun.dev"}, Resources: []string{"sites/finalizers"}, Verbs: []string{"update"}},
		{APIGroups: []string{"site.bosun.dev"}, Resources: []string{"sites/status"}, Verbs: []string{"get", "patch", "update"}},
	}
	if diff := cmp.Diff(want, role.Rules); diff != "" {
		t.Errorf("generated rules (-want +got):\n%s", diff)
	}
}

// TestRunsWithGeneratedRole runs the controller as a user that holds only
// the generated ClusterRole: a themed Site becomes Ready, follows a change
// of its theme and prunes a page, so the markers grant all it needs.
func TestRunsWithGeneratedRole(t *testing.T) {
	role, err := rbac.ClusterRole()
	if err != nil {
		t.Fatal(err)
	}
	const user = "site-controller-generated"
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
	bosuntest.RunManagerAs(t, cp, user, e.setup)

	const before, after = "h1 { color: red; }", "h1 { color: green; }"
	e.setTheme("theme", map[string]string{sitev1.ThemeKey: before})
	e.createSite("rbac", "RBAC", "theme", "index", "about")
	e.waitConditions("rbac", ready)
	e.waitPages("rbac", pagesOf("RBAC", before, "index", "about"))

	e.setTheme("theme", map[string]string{sitev1.ThemeKey: after})
	e.patchSite("rbac", func(s *sitev1.Site) { s.Spec.Pages = []string{"index"} })
	e.waitConditions("rbac", ready)
	e.waitPages("rbac", pagesOf("RBAC", after, "index"))
}
