package crd_test

import (
	"fmt"

	"github.com/bosunkit/bosun/cmd/bosun/gen/internal/testapi/crd"
)

// CRDs decodes the embedded manifest: one CRD, serving Target with its
// status subresource.
func ExampleCRDs() {
	crds, err := crd.CRDs()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range crds {
		v := c.Spec.Versions[0]
		fmt.Println(c.Name, c.Spec.Names.Kind, v.Name, v.Served, v.Subresources.Status != nil)
	}
	// Output:
	// targets.cronjob.bosun.dev Target v1 true true
}
