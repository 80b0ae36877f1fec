// Package rbac holds the ClusterRole of the Memcached controller, which
// controller-gen writes from the RBAC markers of package memcached; run
// `go generate ./examples/memcached/...` after changing them.
package rbac

//go:generate go run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0 rbac:roleName=manager-role paths=../.. output:rbac:artifacts:config=.
