package v1alpha1_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	sitev1 "github.com/bosunkit/bosun/examples/site/api/v1alpha1"
)

// AddToScheme registers Site and SiteList under site.bosun.dev/v1alpha1.
func ExampleAddToScheme() {
	s := runtime.NewScheme()
	if err := sitev1.AddToScheme(s); err != nil {
		fmt.Println(err)
		return
	}
	for _, obj := range []runtime.Object{&sitev1.Site{}, &sitev1.SiteList{}} {
		gvks, _, err := s.ObjectKinds(obj)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(gvks[0])
	}
	// Output:
	// site.bosun.dev/v1alpha1, Kind=Site
	// site.bosun.dev/v1alpha1, Kind=SiteList
}
