// Command rwexternal runs the rwexternal example operator: in a cluster from its
// Deployment (see ../config), against the cluster of a kubeconfig, or with
// --dev against an embedded control plane with its samples. Run it with
// --help for the flags; package operator describes them.
package main

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun/examples/rwexternal"
	"github.com/bosunkit/bosun/operator"
)

func main() { operator.Main(options()) }

// options describe the operator to operator.Main, and to its tests.
func options() operator.Options {
	return operator.Options{
		Name:        "rwexternal",
		AddToScheme: rwexternal.AddToScheme,
		CRDs:        rwexternal.CRDs,
		Prepare:     rwexternal.PrepareSamples,
		Samples:     rwexternal.Samples,
		Setup: func(mgr ctrl.Manager) error {
			return rwexternal.SetupWithManager(mgr)
		},
	}
}
