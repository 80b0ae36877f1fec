package trust

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/examples/internal/rbaccheck"
	trustv1alpha1 "github.com/bosunkit/bosun/examples/trust/api/v1alpha1"
)

// TestGeneratedRole pins the rules controller-gen derives from the
// controller's markers: a ClusterRole for the target ConfigMaps, read-only
// Namespaces, Bundles, their status and finalizers (for the targets'
// blockOwnerDeletion), and events; a Role that reads the Secrets of the
// trust namespace only.
func TestGeneratedRole(t *testing.T) {
	cluster, ns := roles(t, rbaccheck.RoleFile)
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create", "delete", "get", "list", "patch", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		{APIGroups: []string{"trust.cert-manager.io"}, Resources: []string{"bundles"}, Verbs: []string{"get", "list", "patch", "update", "watch"}},
		{APIGroups: []string{"trust.cert-manager.io"}, Resources: []string{"bundles/finalizers"}, Verbs: []string{"update"}},
		{APIGroups: []string{"trust.cert-manager.io"}, Resources: []string{"bundles/status"}, Verbs: []string{"get", "patch", "update"}},
	}
	if diff := cmp.Diff(want, cluster.Rules); diff != "" {
		t.Errorf("generated cluster rules (-want +got):\n%s", diff)
	}
	wantNS := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}}}
	if diff := cmp.Diff(wantNS, ns.Rules); diff != "" || ns.Namespace != trustNamespace {
		t.Errorf("generated Role in %q, want %q; rules (-want +got):\n%s", ns.Namespace, trustNamespace, diff)
	}
}

// TestRoleIsDerived checks that the cluster-wide rules the reconciler
// derives from its steps (the engine's, the children step's and the
// sources step's reads) are exactly those of the generated ClusterRole,
// and, with Secret targets enabled, of it and config/rbac/secret-targets.
func TestRoleIsDerived(t *testing.T) {
	cluster, _ := roles(t, rbaccheck.RoleFile)
	derived, err := NewReconciler(Options{}).PolicyRules(testScheme(t))
	if err != nil {
		t.Fatal(err)
	}
	rbaccheck.Compare(t, cluster.Rules, derived)

	secretTargets := rbaccheck.Role(t, secretTargetsRoleFile)
	derived, err = NewReconciler(Options{SecretTargetsEnabled: true}).PolicyRules(testScheme(t))
	if err != nil {
		t.Fatal(err)
	}
	rbaccheck.Compare(t, slices.Concat(cluster.Rules, secretTargets.Rules), derived)
}

// secretTargetsRoleFile holds the ClusterRole Secret targets need.
const secretTargetsRoleFile = "config/rbac/secret-targets/role.yaml"

// TestRunsWithGeneratedRole runs the controller as a user that holds only
// the generated roles: a Bundle of a Secret source syncs into every
// namespace, and follows a change of its key. With Secret targets enabled
// and the secret-targets ClusterRole, its Secret targets are written.
func TestRunsWithGeneratedRole(t *testing.T) {
	for _, secretTargets := range []bool{false, true} {
		t.Run(fmt.Sprintf("secretTargets=%t", secretTargets), func(t *testing.T) {
			e := newEnv(t, false)
			cp := e.cp
			const user = "trust-controller"
			cluster, ns := roles(t, rbaccheck.RoleFile)
			bindRole(t, cp.Client, ns, user)
			rules := cluster.Rules
			if secretTargets {
				rules = slices.Concat(rules, rbaccheck.Role(t, secretTargetsRoleFile).Rules)
			}
			opts := Options{SecretTargetsEnabled: secretTargets}
			rbaccheck.RunAs(t, cp, user, rules, bosuntest.ManagerOptions{Configure: CacheOptions(withTrustNamespace(opts))}, e.setup(opts))

			a := newTestCert(t, "a", false, time.Time{})
			e.secret("corp-ca", map[string]string{"ca.crt": a.pem})
			target := trustv1alpha1.BundleTarget{ConfigMap: &trustv1alpha1.TargetTemplate{Key: "ca.pem"}}
			if secretTargets {
				target.Secret = &trustv1alpha1.TargetTemplate{Key: "ca.crt"}
			}
			e.bundle("rbac", trustv1alpha1.BundleSpec{
				Sources: []trustv1alpha1.BundleSource{{Secret: &trustv1alpha1.SourceObjectKeySelector{Name: "corp-ca", Key: "ca.crt"}}},
				Target:  target,
			})
			e.waitSynced("rbac", metav1.ConditionTrue, ReasonSynced)
			e.waitTargets("rbac", "ca.pem", bundleOf(t, a), e.allNamespaces()...)
			if secretTargets {
				e.waitSecretTargets("rbac", "ca.crt", bundleOf(t, a), e.allNamespaces()...)
			}
			e.patch("rbac", func(b *trustv1alpha1.Bundle) { b.Spec.Target.ConfigMap.Key = "other.pem" })
			e.waitTargets("rbac", "other.pem", bundleOf(t, a), e.allNamespaces()...)
		})
	}
}

// roles returns the ClusterRole and the Role of the trust namespace that
// controller-gen writes to path, in that order.
func roles(t *testing.T, path string) (*rbacv1.ClusterRole, *rbacv1.Role) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cluster *rbacv1.ClusterRole
	var ns *rbacv1.Role
	for doc := range strings.SplitSeq(string(data), "\n---\n") {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatalf("decoding %s: %v", path, err)
		}
		switch tm.Kind {
		case "ClusterRole":
			cluster = &rbacv1.ClusterRole{}
			err = yaml.UnmarshalStrict([]byte(doc), cluster)
		case "Role":
			ns = &rbacv1.Role{}
			err = yaml.UnmarshalStrict([]byte(doc), ns)
		default:
			err = fmt.Errorf("unexpected kind %q", tm.Kind)
		}
		if err != nil {
			t.Fatalf("decoding %s: %v", path, err)
		}
	}
	if cluster == nil || ns == nil {
		t.Fatalf("%s holds no ClusterRole or no Role", path)
	}
	return cluster, ns
}

// bindRole makes role, and binds it to user, for as long as the test runs.
func bindRole(t *testing.T, c client.Client, role *rbacv1.Role, user string) {
	t.Helper()
	role = role.DeepCopy()
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: role.Namespace, Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := c.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
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
