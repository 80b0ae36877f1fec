package operator_test

import (
	"flag"
	"fmt"

	"github.com/bosunkit/bosun/operator"
)

// The flags of an operator binary, parsed from a command line as Main
// parses the process's, and the manager options they choose.
func ExampleFlags() {
	flags := operator.DefaultFlags()
	fs := flag.NewFlagSet("shop", flag.ContinueOnError)
	flags.Bind(fs)
	if err := fs.Parse([]string{"--leader-elect", "--metrics-bind-address=:8443"}); err != nil {
		panic(err)
	}
	opts := flags.ManagerOptions("shop")
	fmt.Println(opts.LeaderElection, opts.LeaderElectionID, opts.Metrics.BindAddress, opts.Metrics.SecureServing, opts.HealthProbeBindAddress)
	// Output: true shop.bosun.dev :8443 true :8081
}
