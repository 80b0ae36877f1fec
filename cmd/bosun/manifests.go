package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/bosunkit/bosun/internal/manifests"
)

func newManifestsCommand() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "manifests [dir]",
		Short: "Render a kustomize directory, such as an example's config/default",
		Long: `Renders the kustomization in dir (default: config/default) as
'kubectl kustomize' does, in process, and prints the YAML, or writes it to
--output. Apply it with 'kubectl apply --server-side -f'.`,
		Example: `  bosun manifests examples/cronjob/config/default
  bosun manifests -o bin/manifests/cronjob.yaml examples/cronjob/config/default`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "config/default"
			if len(args) == 1 {
				dir = args[0]
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
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the YAML to this file instead of stdout")
	return cmd
}
