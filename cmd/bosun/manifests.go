package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/bosunkit/bosun/internal/manifests"
)

func newManifestsCommand() *cobra.Command {
	var dir, out string
	cmd := &cobra.Command{
		Use:   "manifests [--dir DIR] [-o FILE]",
		Short: "Render a kustomize directory, such as an example's config/default",
		Long: `Renders the kustomization in --dir (default: config/default) as
'kubectl kustomize' does, in process, and prints the YAML, or writes it to
--output. Apply it with 'kubectl apply --server-side -f'. The directory may
also be given as the only argument.`,
		Example: `  bosun manifests --dir examples/hello/config/default
  bosun manifests --dir examples/cronjob/config/default -o bin/manifests/cronjob.yaml
  bosun manifests --dir config/default | kubectl apply --server-side -f -`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := dirArgument(cmd, args, &dir); err != nil {
				return err
			}
			yaml, _, err := manifests.Build(dir)
			if err != nil {
				return err
			}
			if out == "" {
				_, err := cmd.OutOrStdout().Write(yaml)
				return err
			}
			if err := os.WriteFile(out, yaml, 0o644); err != nil {
				return fmt.Errorf("writing %s: %w", out, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "config/default", "the kustomize directory to render")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the YAML to this file instead of stdout")
	return cmd
}

// dirArgument sets dir to the command's only argument, which stands for
// its --dir flag; giving both is an error.
func dirArgument(cmd *cobra.Command, args []string, dir *string) error {
	if len(args) == 0 {
		return nil
	}
	if cmd.Flags().Changed("dir") {
		return errors.New("give the directory either as --dir or as an argument, not both")
	}
	*dir = args[0]
	return nil
}
