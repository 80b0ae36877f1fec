package v1_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
)

// AddToScheme registers CronJob and CronJobList under cronjob.bosun.dev/v1.
func ExampleAddToScheme() {
	s := runtime.NewScheme()
	if err := cronjobv1.AddToScheme(s); err != nil {
		fmt.Println(err)
		return
	}
	for _, obj := range []runtime.Object{&cronjobv1.CronJob{}, &cronjobv1.CronJobList{}} {
		gvks, _, err := s.ObjectKinds(obj)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(gvks[0])
	}
	// Output:
	// cronjob.bosun.dev/v1, Kind=CronJob
	// cronjob.bosun.dev/v1, Kind=CronJobList
}
