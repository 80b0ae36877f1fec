package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/bosunkit/bosun/cmd/bosun/internal/image"
)

func newImageCommand() *cobra.Command {
	var o image.Options
	cmd := &cobra.Command{
		Use:   "image",
		Short: "Build an operator's container image into a tarball, with no daemon or registry",
		Long: `Builds the Go main package --main for linux as a static binary and writes
an image holding it at /manager, run as user 65532, to the tarball --output,
tagged --tag, with no daemon or registry. The image holds nothing else, unless
--base names an image tarball to build on. It is reproducible: its time is
SOURCE_DATE_EPOCH, else the Unix epoch, so the same sources give the same
digest. Load it with 'docker load -i' or 'kind load image-archive', or push it
with 'crane push'.`,
		Example: `  bosun image --main ./examples/hello/cmd --tag hello:dev --output bin/images/hello.tar
  bosun image --main ./cmd --tag registry.example.com/shop:v1 -o bin/shop.tar --arch arm64 \
    --source https://github.com/me/shop --version v1 --base bin/certs.tar`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			digest, err := image.Build(cmd.Context(), o)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s %s\n", o.Output, o.Tag, digest)
			return nil
		},
	}
	cmd.Flags().StringVar(&o.Main, "main", "./cmd", "the Go main package of the operator")
	cmd.Flags().StringVar(&o.Tag, "tag", "", "the image's name and tag, such as shop:dev (required)")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "the tarball to write (required)")
	cmd.Flags().StringVar(&o.Arch, "arch", "", "the CPU architecture (default: this machine's)")
	cmd.Flags().StringVar(&o.Source, "source", "", "the org.opencontainers.image.source label (where the sources are)")
	cmd.Flags().StringVar(&o.Version, "version", "", "the org.opencontainers.image.version label")
	cmd.Flags().StringToStringVar(&o.Labels, "label", nil, "more labels, key=value (repeatable)")
	cmd.Flags().StringVar(&o.Base, "base", "", "an image tarball to build on (default: none, the image holds /manager only)")
	return cmd
}
