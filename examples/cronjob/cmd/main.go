// Command cronjob runs the cronjob example operator: in a cluster from its
// Deployment (see ../config), against the cluster of a kubeconfig, or with
// --dev against an embedded control plane with its samples. Run it with
// --help for the flags; package operator describes them.
package main

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun/examples/cronjob"
	"github.com/bosunkit/bosun/operator"
)

func main() {
	operator.Main(operator.Options{
		Name:        "cronjob",
		AddToScheme: cronjob.AddToScheme,
		CRDs:        cronjob.CRDs,
		Samples:     cronjob.Samples,
		Setup: func(mgr ctrl.Manager) error {
			return cronjob.SetupWithManager(mgr, cronjob.Options{})
		},
	})
}
