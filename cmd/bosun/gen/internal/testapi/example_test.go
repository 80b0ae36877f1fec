package testapi_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/cmd/bosun/gen/internal/testapi"
)

// DeepCopy copies a Target, pointers included.
func ExampleTarget_DeepCopy() {
	suspend := true
	t := &testapi.Target{ObjectMeta: metav1.ObjectMeta{Name: "nightly"}, Spec: testapi.TargetSpec{Schedule: "@daily", Suspend: &suspend}}
	c := t.DeepCopy()
	*c.Spec.Suspend = false
	fmt.Println(c.Name, c.Spec.Schedule, *t.Spec.Suspend)
	// Output:
	// nightly @daily true
}
