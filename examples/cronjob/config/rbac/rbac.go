// Package rbac holds the ClusterRole of the cronjob operator. controller-gen
// writes it from the RBAC markers `bosun gen` puts into
// zz_generated.cronjob.go: for what the document's states read, what its
// actions' writes clauses say they write, the CronJob and its status, and
// what the engine needs. The controller has no markers of its own; the
// storage version migration's (migration.go) grant get and patch of the
// CronJob CRD alone.
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
// (cronjob-manager-role once config/default has prefixed it).
func ClusterRole() (*rbacv1.ClusterRole, error) {
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(manifest, &role); err != nil {
		return nil, fmt.Errorf("decoding role.yaml: %w", err)
	}
	return &role, nil
}
