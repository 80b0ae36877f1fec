package trust

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/examples/internal/rbaccheck"
	trustv1alpha1 "github.com/bosunkit/bosun/examples/trust/api/v1alpha1"
)

// TestGeneratedRole pins the rules controller-gen derives from the
// controller's markers: the target ConfigMaps, read-only Secrets and
// Namespaces, Bundles, their status and finalizers (for the targets'
// blockOwnerDeletion), and events.
func TestGeneratedRole(t *testing.T) {
	role := rbaccheck.Role(t, rbaccheck.RoleFile)
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create", "delete", "get", "list", "patch", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"namespaces", "secrets"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		{APIGroups: []string{"trust.cert-manager.io"}, Resources: []string{"bundles"}, Verbs: []string{"get", "list", "patch", "update", "watch"}},
		{APIGroups: []string{"trust.cert-manager.io"}, Resources: []string{"bundles/finalizers"}, Verbs: []string{"update"}},
		{APIGroups: []string{"trust.cert-manager.io"}, Resources: []string{"bundles/status"}, Verbs: []string{"get", "patch", "update"}},
	}
	if diff := cmp.Diff(want, role.Rules); diff != "" {
		t.Errorf("generated rules (-want +got):\n%s", diff)
	}
}

// TestRoleIsDerived checks that the rules the reconciler derives from its
// steps (the engine's, the children step's and the sources step's reads)
// are exactly those the markers make controller-gen write.
func TestRoleIsDerived(t *testing.T) {
	derived, err := NewReconciler(Options{}).PolicyRules(testScheme(t))
	if err != nil {
		t.Fatal(err)
	}
	rbaccheck.Compare(t, rbaccheck.Role(t, rbaccheck.RoleFile).Rules, derived)
}

// TestRunsWithGeneratedRole runs the controller as a user that holds only
// the generated ClusterRole: a Bundle of a Secret source syncs into every
// namespace, and follows a change of its key.
func TestRunsWithGeneratedRole(t *testing.T) {
	cpOpts, err := controlplane.OptionsFor(AddToScheme, CRDs)()
	if err != nil {
		t.Fatal(err)
	}
	cp := bosuntest.Start(t, cpOpts)
	e := &env{t: t, cp: cp, c: cp.Client, writes: &bosuntest.WriteCounter{}, passes: &passLog{}}
	e.namespace(trustNamespace, nil)
	rbaccheck.RunAs(t, cp, "trust-controller", rbaccheck.Role(t, rbaccheck.RoleFile).Rules,
		bosuntest.ManagerOptions{Configure: LimitSecretCache(trustNamespace)}, e.setup(Options{}))

	a := newTestCert(t, "a", false, time.Time{})
	e.secret("corp-ca", map[string]string{"ca.crt": a.pem})
	e.bundle("rbac", trustv1alpha1.BundleSpec{
		Sources: []trustv1alpha1.BundleSource{{Secret: &trustv1alpha1.SourceObjectKeySelector{Name: "corp-ca", Key: "ca.crt"}}},
		Target:  trustv1alpha1.BundleTarget{ConfigMap: &trustv1alpha1.TargetTemplate{Key: "ca.pem"}},
	})
	e.waitSynced("rbac", metav1.ConditionTrue, ReasonSynced)
	e.waitTargets("rbac", "ca.pem", bundleOf(t, a), e.allNamespaces()...)
	e.patch("rbac", func(b *trustv1alpha1.Bundle) { b.Spec.Target.ConfigMap.Key = "other.pem" })
	e.waitTargets("rbac", "other.pem", bundleOf(t, a), e.allNamespaces()...)
}

// testScheme returns a scheme of the built-in kinds and the Bundle API.
func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}
