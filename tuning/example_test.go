package tuning_test

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun/tuning"
)

// A manager with a lean cache, as package operator makes it, and with
// the rest of bosun's tuning turned on.
func Example() {
	opts := ctrl.Options{}
	tuning.LeanCache(&opts.Cache)
	tuning.Enable(&opts)
	fmt.Println(opts.Cache.DefaultTransform != nil, opts.NewCache != nil, opts.NewClient != nil)
	// Output: true true true
}
