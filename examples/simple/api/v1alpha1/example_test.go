package v1alpha1_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	simplev1 "github.com/bosunkit/bosun/examples/simple/api/v1alpha1"
)

// AddToScheme registers Simple and SimpleList under simple.bosun.dev/v1alpha1.
func ExampleAddToScheme() {
	s := runtime.NewScheme()
	if err := simplev1.AddToScheme(s); err != nil {
		fmt.Println(err)
		return
	}
	for _, obj := range []runtime.Object{&simplev1.Simple{}, &simplev1.SimpleList{}} {
		gvks, _, err := s.ObjectKinds(obj)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(gvks[0])
	}
	// Output:
	// simple.bosun.dev/v1alpha1, Kind=Simple
	// simple.bosun.dev/v1alpha1, Kind=SimpleList
}
