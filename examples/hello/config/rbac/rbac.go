// Package rbac holds the ClusterRole of the hello example's controller,
// role.yaml, which controller-gen writes from the RBAC markers of its
// package; config/default deploys it with the rest of this directory.
package rbac

//go:generate go run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0 rbac:roleName=manager-role paths=../.. output:rbac:artifacts:config=.
