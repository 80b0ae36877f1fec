package bucketapi_test

import (
	"fmt"

	"github.com/bosunkit/bosun/managed/internal/bucketapi"
)

// CRD decodes the embedded manifest of the Bucket kind.
func ExampleCRD() {
	crd, err := bucketapi.CRD()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(crd.Name, crd.Spec.Versions[0].Name, crd.Spec.Versions[0].Subresources.Status != nil)
	// Output:
	// buckets.managed.test.bosun.dev v1 true
}
