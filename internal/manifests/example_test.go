package manifests_test

import (
	"fmt"
	"log"

	"github.com/bosunkit/bosun/internal/manifests"
)

// Build renders an example's whole deployment: its CRD, its RBAC, and the
// Deployment, in the namespace hello-system with every name prefixed
// hello-. Apply applies the same objects to a cluster, Namespaces and CRDs
// first.
func ExampleBuild() {
	_, objs, err := manifests.Build("../../examples/hello/config/default")
	if err != nil {
		log.Fatal(err)
	}
	for _, o := range objs {
		if ns := o.GetNamespace(); ns != "" {
			fmt.Printf("%s %s/%s\n", o.GetKind(), ns, o.GetName())
		} else {
			fmt.Printf("%s %s\n", o.GetKind(), o.GetName())
		}
	}
	// Output:
	// CustomResourceDefinition greetings.hello.bosun.dev
	// ServiceAccount hello-system/hello-controller-manager
	// ClusterRole hello-manager-role
	// ClusterRoleBinding hello-manager-rolebinding
	// Role hello-system/hello-leader-election-role
	// RoleBinding hello-system/hello-leader-election-rolebinding
	// ClusterRole hello-metrics-auth-role
	// ClusterRoleBinding hello-metrics-auth-rolebinding
	// ClusterRole hello-metrics-reader
	// Namespace hello-system
	// Deployment hello-system/hello-controller-manager
	// Service hello-system/hello-controller-manager-metrics
}
