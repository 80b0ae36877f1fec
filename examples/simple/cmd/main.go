// Command simple runs the simple example operator: in a cluster from its
// Deployment (see ../config), against the cluster of a kubeconfig, or with
// --dev against an embedded control plane with its samples. Run it with
// --help for the flags; package operator describes them.
package main

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun/examples/simple"
	"github.com/bosunkit/bosun/operator"
)

func main() { operator.Main(options()) }

// options describe the operator to operator.Main, and to its tests.
func options() operator.Options {
	return operator.Options{
		Name:        "simple",
		AddToScheme: simple.AddToScheme,
		CRDs:        simple.CRDs,
		Samples:     simple.Samples,
		Setup: func(mgr ctrl.Manager) error {
			return simple.SetupWithManager(mgr)
		},
	}
}
