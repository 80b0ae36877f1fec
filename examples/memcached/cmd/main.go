// Command memcached runs the memcached example operator: in a cluster from
// its Deployment (see ../config), against the cluster of a kubeconfig, or
// with --dev against an embedded control plane with its samples. Its
// sample becomes Ready only where pods run. Run it with --help for the
// flags; package operator describes them.
package main

import (
	"github.com/bosunkit/bosun/examples/memcached"
	"github.com/bosunkit/bosun/operator"
)

func main() { operator.Main(options()) }

// options describe the operator to operator.Main, and to its tests.
func options() operator.Options {
	return operator.Options{
		Name:        "memcached",
		AddToScheme: memcached.AddToScheme,
		CRDs:        memcached.CRDs,
		Samples:     memcached.Samples,
		Setup:       memcached.SetupWithManager,
		// Cache only the pods of Memcacheds, not every pod of the cluster.
		Manager: memcached.LimitPodCache,
	}
}
