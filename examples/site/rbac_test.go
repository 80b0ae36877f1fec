package site

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/oracle"
	"github.com/bosunkit/bosun/bosuntest/unit"
	"github.com/bosunkit/bosun/examples/internal/rbaccheck"
	sitev1 "github.com/bosunkit/bosun/examples/site/api/v1alpha1"
)

// TestGeneratedRole pins the rules controller-gen derives from the
// controller's markers: the children, read-only Secrets, Sites, their
// status and their finalizers (for the children's blockOwnerDeletion),
// namespaces and events for the engine, nothing else.
func TestGeneratedRole(t *testing.T) {
	role := rbaccheck.Role(t, rbaccheck.RoleFile)
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

// TestRoleIsDerived checks that the rules the reconciler derives from its
// step (bosun.Reconciler.PolicyRules: the engine's, the children step's,
// and the theme Secrets themedChildren declares) are exactly those the
// markers make controller-gen write.
func TestRoleIsDerived(t *testing.T) {
	derived, err := NewReconciler().PolicyRules(unit.Scheme(t, AddToScheme))
	if err != nil {
		t.Fatal(err)
	}
	rbaccheck.Compare(t, rbaccheck.Role(t, rbaccheck.RoleFile).Rules, derived)
}

// TestRunsWithGeneratedRole runs the controller as a user that holds only
// the generated ClusterRole, which grants what the derived rules do (see
// TestRoleIsDerived): a themed Site becomes Ready, follows a change of its
// theme and prunes a page, and once deleted goes with its children (which
// the garbage collector removes), so the markers grant all it needs.
func TestRunsWithGeneratedRole(t *testing.T) {
	cp := shared.ControlPlane(t)
	e := newEnv(t, cp)
	e.mgr = rbaccheck.RunAs(t, cp, "site-controller-generated", rbaccheck.Role(t, rbaccheck.RoleFile).Rules,
		bosuntest.ManagerOptions{}, e.setup)

	const before, after = "h1 { color: red; }", "h1 { color: green; }"
	e.setTheme("theme", map[string]string{sitev1.ThemeKey: before})
	e.createSite("rbac", "RBAC", "theme", "index", "about")
	e.waitConditions("rbac", ready)
	e.waitPages("rbac", pagesOf("RBAC", before, "index", "about"))

	e.setTheme("theme", map[string]string{sitev1.ThemeKey: after})
	e.patchSite("rbac", func(s *sitev1.Site) { s.Spec.Pages = []string{"index"} })
	s := e.waitConditions("rbac", ready)
	e.waitPages("rbac", pagesOf("RBAC", after, "index"))

	if err := e.c.Delete(t.Context(), s); err != nil {
		t.Fatalf("delete site: %v", err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(s), &sitev1.Site{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("get site: %w, want NotFound", err)
		}
		return oracle.NoOrphans(ctx, e.c, e.ns, oracle.UIDs([]client.Object{s}), &corev1.ConfigMapList{}, &corev1.ServiceList{})
	})
}
