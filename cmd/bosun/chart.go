package main

import (
	"github.com/spf13/cobra"

	"github.com/bosunkit/bosun/cmd/bosun/internal/chart"
	"github.com/bosunkit/bosun/internal/manifests"
)

func newChartCommand() *cobra.Command {
	var dir, out string
	var opts chart.Options
	cmd := &cobra.Command{
		Use:   "chart [--dir DIR] [-o DIR]",
		Short: "Write a Helm chart of a kustomize directory, such as config/default",
		Long: `Renders the kustomization in --dir (default: config/default), as bosun
manifests does, and writes a Helm chart of its objects into --output
(default: bin/chart). The chart installs into the release's namespace
(helm install --create-namespace), and its values set the manager's image,
replicas and resources, leader election, metrics, whether cert-manager
issues the webhook certificate and injects its CA, and whether the CRDs
are installed and kept on uninstall. With its default values it renders
the objects of the kustomization (docs/DEPLOY.md).`,
		Example: `  bosun chart
  bosun chart --dir examples/cronjob/config/default -o bin/charts/cronjob --version 1.2.0
  helm install shop bin/chart --namespace shop-system --create-namespace --set replicas=1`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := dirArgument(cmd, args, &dir); err != nil {
				return err
			}
			_, objs, err := manifests.Build(dir)
			if err != nil {
				return err
			}
			return chart.Write(out, objs, opts)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "config/default", "the kustomize directory to render")
	cmd.Flags().StringVarP(&out, "output", "o", "bin/chart", "the directory to write the chart into")
	cmd.Flags().StringVar(&opts.Name, "name", "", "the chart's name (default: the last element of the manager image's repository)")
	cmd.Flags().StringVar(&opts.Version, "version", "", "the chart's version (default: 0.1.0)")
	cmd.Flags().StringVar(&opts.AppVersion, "app-version", "", "the operator's version, and the image tag when values set none (default: the manager image's tag)")
	return cmd
}
