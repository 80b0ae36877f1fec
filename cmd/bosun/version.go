package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/bosunkit/bosun/version"
)

func newVersionCommand() *cobra.Command {
	var short bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the bosun version, commit and the Go and controller-runtime versions",
		Long: `Prints what this bosun binary was built from, read from the build
information Go stamps into it: the module version ("(devel)" when built in a
checkout), the commit and its time, the Go release and controller-runtime.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info := version.Get()
			if short {
				fmt.Fprintln(cmd.OutOrStdout(), info.String())
				return nil
			}
			fmt.Fprint(cmd.OutOrStdout(), info.Lines())
			return nil
		},
	}
	cmd.Flags().BoolVar(&short, "short", false, "print everything on one line")
	return cmd
}
