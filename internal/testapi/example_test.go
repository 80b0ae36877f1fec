package testapi_test

import (
	"fmt"

	"github.com/bosunkit/bosun/internal/testapi"
)

// CRD decodes the embedded manifest of the Widget kind.
func ExampleCRD() {
	crd, err := testapi.CRD()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(crd.Name, crd.Spec.Versions[0].Name, crd.Spec.Versions[0].Subresources.Status != nil)
	// Output:
	// widgets.test.bosun.dev v1 true
}
