package v1alpha1_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	pgv1 "github.com/bosunkit/bosun/examples/postgres/api/v1alpha1"
)

// AddToScheme registers Role, Database and their lists under
// postgres.bosun.dev/v1alpha1.
func ExampleAddToScheme() {
	s := runtime.NewScheme()
	if err := pgv1.AddToScheme(s); err != nil {
		fmt.Println(err)
		return
	}
	for _, obj := range []runtime.Object{&pgv1.Role{}, &pgv1.Database{}} {
		gvks, _, err := s.ObjectKinds(obj)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(gvks[0])
	}
	// Output:
	// postgres.bosun.dev/v1alpha1, Kind=Role
	// postgres.bosun.dev/v1alpha1, Kind=Database
}
