package crd_test

import (
	"fmt"
	"io/fs"

	"github.com/bosunkit/bosun/examples/trust/config/crd"
)

// Manifests holds the Bundle's CRD, under trust-manager's file name.
func Example() {
	names, err := fs.Glob(crd.Manifests, "*.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range names {
		fmt.Println(name)
	}
	// Output:
	// trust.cert-manager.io_bundles.yaml
}
