// Package rbac holds the ClusterRole of the Memcached controller, which
// controller-gen writes from the RBAC markers of package memcached; run
// `go generate ./examples/memcached/...` after changing them.
package rbac

import (
	_ "embed"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

//go:generate go run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0 rbac:roleName=manager-role paths=../.. output:rbac:artifacts:config=.

//go:embed role.yaml
var manifest []byte

// ClusterRole returns the generated ClusterRole, named manager-role
// (memcached-manager-role once config/default has prefixed it).
func ClusterRole() (*rbacv1.ClusterRole, error) {
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(manifest, &role); err != nil {
		return nil, fmt.Errorf("decoding role.yaml: %w", err)
	}
	return &role, nil
}
