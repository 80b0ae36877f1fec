package trust_test

import (
	"fmt"

	"github.com/bosunkit/bosun/examples/trust"
	trustv1alpha1 "github.com/bosunkit/bosun/examples/trust/api/v1alpha1"
)

// Samples are what `bosun demo` creates: a Bundle of the CA that
// PrepareSamples puts in the trust namespace, written into every
// namespace.
func ExampleSamples() {
	for _, obj := range trust.Samples("") {
		b := obj.(*trustv1alpha1.Bundle)
		fmt.Println(b.Name, b.Spec.Sources[0].ConfigMap.Name, b.Spec.Sources[0].ConfigMap.Key, "->", b.Spec.Target.ConfigMap.Key)
	}
	// Output:
	// trust-demo demo-ca ca.crt -> ca-bundle.pem
}
