package version_test

import (
	"fmt"
	"runtime/debug"

	"github.com/bosunkit/bosun/version"
)

// An operator's --version flag prints what it was built from; here from
// build information written out by hand.
func Example() {
	info := version.FromBuildInfo(&debug.BuildInfo{
		GoVersion: "go1.26.0",
		Main:      debug.Module{Path: "example.com/shop", Version: "v1.2.3"},
		Deps: []*debug.Module{
			{Path: "github.com/bosunkit/bosun", Version: "v0.4.0"},
			{Path: "sigs.k8s.io/controller-runtime", Version: "v0.25.2"},
		},
	})
	fmt.Print(info.Lines())
	// Output:
	// module:             example.com/shop
	// version:            v1.2.3
	// go:                 go1.26.0
	// bosun:              v0.4.0
	// controller-runtime: v0.25.2
}
