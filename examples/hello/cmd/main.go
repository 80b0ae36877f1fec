// Command hello runs the hello example operator: in a cluster from its
// Deployment (see ../config), against the cluster of a kubeconfig, or with
// --dev against an embedded control plane with its samples. Run it with
// --help for the flags; package operator describes them.
package main

import (
	"github.com/bosunkit/bosun/examples/hello"
	"github.com/bosunkit/bosun/operator"
)

func main() { operator.Main(options()) }

// options describe the operator to operator.Main, and to its tests.
func options() operator.Options {
	return operator.Options{
		Name:        "hello",
		AddToScheme: hello.AddToScheme,
		CRDs:        hello.CRDs,
		Samples:     hello.Samples,
		Setup:       hello.SetupWithManager,
	}
}
