package v1alpha1_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	cachev1 "github.com/bosunkit/bosun/examples/memcached/api/v1alpha1"
)

// AddToScheme registers Memcached and MemcachedList under
// cache.example.bosun.dev/v1alpha1.
func ExampleAddToScheme() {
	s := runtime.NewScheme()
	if err := cachev1.AddToScheme(s); err != nil {
		fmt.Println(err)
		return
	}
	for _, obj := range []runtime.Object{&cachev1.Memcached{}, &cachev1.MemcachedList{}} {
		gvks, _, err := s.ObjectKinds(obj)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(gvks[0])
	}
	// Output:
	// cache.example.bosun.dev/v1alpha1, Kind=Memcached
	// cache.example.bosun.dev/v1alpha1, Kind=MemcachedList
}
