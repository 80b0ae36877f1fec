package postgres

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// TestRoleIsDerived checks that the rules the two reconcilers derive from
// their steps (bosun.Reconciler.PolicyRules: the engine's, the managed
// step's connection Secret and the reference to the owner Role) are
// exactly those the markers make controller-gen write.
func TestRoleIsDerived(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(data, &role); err != nil {
		t.Fatal(err)
	}
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	roles, err := NewRoleReconciler(Options{}).PolicyRules(s)
	if err != nil {
		t.Fatal(err)
	}
	databases, err := NewDatabaseReconciler(Options{}).PolicyRules(s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(triples(role.Rules), triples(append(roles, databases...))); diff != "" {
		t.Errorf("derived rules against the generated role (-generated +derived):\n%s", diff)
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
