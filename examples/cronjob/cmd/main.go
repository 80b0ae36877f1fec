// Command cronjob runs the cronjob example operator: in a cluster from its
// Deployment (see ../config), against the cluster of a kubeconfig, or with
// --dev against an embedded control plane with its samples, its webhook
// configurations installed and pointed at its webhook server. Run it with
// --help for the flags; package operator describes them.
package main

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun/examples/cronjob"
	"github.com/bosunkit/bosun/operator"
)

func main() { operator.Main(options()) }

// options describe the operator to operator.Main, and to its tests.
func options() operator.Options {
	return operator.Options{
		Name:        "cronjob",
		AddToScheme: cronjob.AddToScheme,
		CRDs:        cronjob.CRDs,
		Webhooks:    cronjob.Webhooks,
		Samples:     cronjob.Samples,
		Setup: func(mgr ctrl.Manager) error {
			if err := cronjob.SetupWithManager(mgr, cronjob.Options{}); err != nil {
				return err
			}
			if err := cronjob.SetupWebhookWithManager(mgr); err != nil {
				return err
			}
			return cronjob.SetupMigrationWithManager(mgr)
		},
	}
}
