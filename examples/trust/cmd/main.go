// Command trust runs the Bundle controller of package trust in place of
// trust-manager: it takes trust-manager's flags, with their names,
// defaults and meaning, so that trust-manager's Deployment runs it with
// its arguments unchanged (see docs/EXAMPLES.md, "trust-manager's
// Bundle"). It serves the validating webhook at trust-manager's path,
// metrics over plain HTTP and the readiness probe on their ports, and
// elects a leader on trust-manager's Lease, so that it and trust-manager
// never run at once.
//
// Besides them, --dev runs it against an embedded control plane with a
// sample Bundle (in a development build, -tags bosundev), --plan prints
// what one pass over every Bundle would change, and --version prints the
// build.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun/operator"
)

func main() {
	os.Exit(run(ctrl.SetupSignalHandler(), os.Args[1:], os.Stdout, os.Stderr))
}

// run parses args and runs the operator until ctx ends; it returns the
// exit status: 0 after a clean stop or --help, 1 after an error, 2 for
// bad flags.
func run(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := pflag.NewFlagSet("trust", pflag.ContinueOnError)
	fs.SetOutput(errOut)
	cl := bindFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return 2
	}
	opts, flags, err := cl.operator()
	if err != nil {
		fmt.Fprintln(errOut, err)
		return 2
	}
	if err := operator.Run(ctx, opts, flags, out); err != nil {
		fmt.Fprintln(errOut, err)
		if errors.Is(err, operator.ErrFlags) {
			return 2
		}
		return 1
	}
	return 0
}
