package v1alpha1_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	hellov1 "github.com/bosunkit/bosun/examples/hello/api/v1alpha1"
)

// AddToScheme registers Greeting and GreetingList under hello.bosun.dev/v1alpha1.
func ExampleAddToScheme() {
	s := runtime.NewScheme()
	if err := hellov1.AddToScheme(s); err != nil {
		fmt.Println(err)
		return
	}
	gvks, _, err := s.ObjectKinds(&hellov1.Greeting{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(gvks[0])
	// Output:
	// hello.bosun.dev/v1alpha1, Kind=Greeting
}
