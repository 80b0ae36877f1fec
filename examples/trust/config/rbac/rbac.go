// Package rbac holds the ClusterRole of the Bundle controller, which
// controller-gen writes from the RBAC markers of package trust; run
// `go generate ./examples/trust/...` after changing them.
package rbac

//go:generate go run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0 rbac:roleName=manager-role paths=../.. output:rbac:artifacts:config=.
