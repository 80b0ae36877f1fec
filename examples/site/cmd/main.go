// Command site runs the site example operator: in a cluster from its
// Deployment (see ../config), against the cluster of a kubeconfig, or with
// --dev against an embedded control plane with its samples. Run it with
// --help for the flags; package operator describes them.
package main

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun/examples/site"
	"github.com/bosunkit/bosun/operator"
)

func main() {
	operator.Main(operator.Options{
		Name:        "site",
		AddToScheme: site.AddToScheme,
		CRDs:        site.CRDs,
		Prepare:     site.PrepareSamples,
		Samples:     site.Samples,
		Setup: func(mgr ctrl.Manager) error {
			return site.SetupWithManager(mgr)
		},
	})
}
