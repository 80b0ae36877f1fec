// Package rbac holds the ClusterRole of the simple example's controller,
// which controller-gen writes from the RBAC markers of its package.
package rbac

import (
	_ "embed"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

//go:generate go run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0 rbac:roleName=simple-controller paths=../.. output:rbac:artifacts:config=.

//go:embed role.yaml
var manifest []byte

// ClusterRole returns the generated ClusterRole, named simple-controller.
func ClusterRole() (*rbacv1.ClusterRole, error) {
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(manifest, &role); err != nil {
		return nil, fmt.Errorf("decoding role.yaml: %w", err)
	}
	return &role, nil
}
