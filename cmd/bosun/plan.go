package main

import (
	"errors"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"
)

// newPlanCommand runs the operator of the module in the working directory
// with --plan. It is `go run` and nothing more: the plan must come from the
// version about to be rolled out, which is the code checked out here, and
// operator.Run does the whole plan, so the command adds only the flag.
func newPlanCommand() *cobra.Command {
	var pkg, file string
	cmd := &cobra.Command{
		Use:   "plan [-f FILE] [-- operator flags]",
		Short: "Report what the operator checked out here would change in a cluster, changing nothing",
		Long: `Runs the operator's main package (--pkg, default ./cmd) with go run and
--plan, passing it the flags after --, such as --kubeconfig:

  bosun plan -- --kubeconfig ~/.kube/config

which is the same as

  go run ./cmd --plan --kubeconfig ~/.kube/config

Under --plan every write goes to the API server as a dry run and no external
resource is created, updated, deleted or given new credentials; once every
object of the operator's kinds has had a pass, the operator prints, per
object, the children it would create, the fields it would change, what it
would delete and the external calls it would make, and exits: 0 when every
pass succeeded, 1 otherwise. The values of Secrets, and of the fields the
operator marks sensitive, are printed as "(sensitive value)". Run it with the new version checked out, against
the cluster the old one manages, before rolling the new one out. The
operator needs the read permissions of its deployment in that cluster, and
dry-run writes are authorised as real ones.

With -f FILE, the plan is of a proposed edit instead: FILE holds objects of
the operator's kinds as the edit would leave them (YAML or JSON, a List
among them; - reads the standard input), and only their passes are planned,
each reading its object as the API server would store it applied with
kubectl apply --server-side (a dry run, so that defaults and validation
apply), without applying it:

  kubectl get database orders -o yaml > orders.yaml   # then edit it
  bosun plan -f orders.yaml -- --kubeconfig ~/.kube/config

Installed as kubectl-bosun on the PATH, this is also kubectl bosun plan -f.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			flags := []string{"run", pkg, "--plan"}
			if file != "" {
				if file != "-" {
					abs, err := filepath.Abs(file)
					if err != nil {
						return err
					}
					file = abs
				}
				flags = append(flags, "--plan-edit="+file)
			}
			run := exec.CommandContext(cmd.Context(), "go", append(flags, args...)...)
			run.Stdin, run.Stdout, run.Stderr = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			err := run.Run()
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				// The operator has said why.
				return errReported
			}
			return err
		},
	}
	cmd.Flags().StringVar(&pkg, "pkg", "./cmd", "the operator's main package")
	cmd.Flags().StringVarP(&file, "filename", "f", "", "plan a proposed edit: the objects of this file as edited (- for the standard input), not applied")
	return cmd
}
