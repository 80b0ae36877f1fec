package rbaccheck_test

import (
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/bosunkit/bosun/examples/internal/rbaccheck"
)

// The rules controller-gen writes and those a reconciler derives are split
// differently; their triples show that they grant the same.
func ExampleTriples() {
	generated := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}, Verbs: []string{"get", "list", "watch"}},
	}
	derived := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"watch", "list", "get"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
	}
	fmt.Println(rbaccheck.Triples(generated))
	fmt.Println(rbaccheck.Triples(derived))
	// Output:
	// [/configmaps get /configmaps list /configmaps watch /secrets get /secrets list /secrets watch]
	// [/configmaps get /configmaps list /configmaps watch /secrets get /secrets list /secrets watch]
}
