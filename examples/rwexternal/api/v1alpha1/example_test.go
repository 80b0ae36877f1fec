package v1alpha1_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rwv1 "github.com/bosunkit/bosun/examples/rwexternal/api/v1alpha1"
)

// The output Secret is named by spec.outputSecret, or after the RWExternal.
func ExampleRWExternal_OutputSecretName() {
	plain := &rwv1.RWExternal{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Spec: rwv1.RWExternalSpec{InputSecret: "app-credentials"}}
	named := plain.DeepCopy()
	named.Spec.OutputSecret = "app-fingerprints"
	fmt.Println(plain.OutputSecretName())
	fmt.Println(named.OutputSecretName())
	// Output:
	// app-output
	// app-fingerprints
}
