package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bosunkit/bosun/cmd/bosun/internal/scaffold"
	"github.com/bosunkit/bosun/version"
)

// placeholderVersion is the version go.mod requires when a replace
// directive supplies the bosun module from a directory.
const placeholderVersion = "v0.0.0-00010101000000-000000000000"

func newInitCommand() *cobra.Command {
	var (
		p            scaffold.Project
		o            scaffold.InitOptions
		first        scaffold.API
		skipGenerate bool
	)
	cmd := &cobra.Command{
		Use:   "init [dir]",
		Short: "Start a new operator module in kubebuilder's layout",
		Long: `Writes a new Go module for an operator into dir (default: the current
directory, which must not hold a go.mod): cmd/main.go with the usual manager
flags and --dev, config/ with kustomize manifests (CRDs, least-privilege RBAC,
a hardened Deployment), config/samples, a Makefile and a README. With --kind
it adds a first kind as 'bosun create api' does. Then it runs go mod tidy,
controller-gen and go generate (the first time on a machine, go downloads
controller-gen). 'bosun dev' runs the operator on a local control plane.`,
		Example: `  bosun init --domain example.com --repo github.com/me/shop --kind Widget shop
  cd shop && bosun dev`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			abs, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			if p.Name == "" {
				p.Name = filepath.Base(abs)
			}
			if p.Repo == "" {
				return fmt.Errorf("%w: --repo is required: the Go module path, such as github.com/me/%s", scaffold.ErrInvalid, p.Name)
			}
			if o.BosunReplace != "" {
				if o.BosunReplace, err = filepath.Abs(o.BosunReplace); err != nil {
					return err
				}
				if o.BosunVersion == "" {
					o.BosunVersion = placeholderVersion
				}
			}
			if o.BosunVersion == "" {
				if v := version.Get().Bosun; strings.HasPrefix(v, "v") && !strings.Contains(v, "+") {
					o.BosunVersion = v
				}
			}
			if o.BosunVersion == "" {
				return fmt.Errorf("%w: this bosun was built from a checkout and has no released version: "+
					"pass --bosun-version, or --bosun-replace with the checkout's directory", scaffold.ErrInvalid)
			}
			if first.Kind == "" && (first.Group != "" || first.DSL || first.ShortName != "" || len(first.Owns) > 0) {
				return fmt.Errorf("%w: --group, --short-name, --owns and --dsl describe the first kind: give --kind too", scaffold.ErrInvalid)
			}
			if err := os.MkdirAll(abs, 0o755); err != nil {
				return err
			}
			if err := scaffold.Init(abs, p, o); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote the %s operator into %s\n", p.Name, abs)
			if first.Kind != "" {
				if first.Group == "" {
					first.Group = scaffold.DefaultGroup(p.Name)
				}
				if err := scaffold.CreateAPI(abs, first); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "added the kind %s (%s.%s/%s)\n", first.Kind, first.Group, p.Domain, first.Version)
			}
			if !skipGenerate {
				if err := scaffold.Generate(cmd.Context(), abs, cmd.ErrOrStderr()); err != nil {
					return err
				}
			}
			if first.Kind != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "next: cd %s && bosun dev\n", dir)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "next: cd %s && bosun create api --group %s --version v1 --kind <Kind> && bosun dev\n", dir, scaffold.DefaultGroup(p.Name))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&p.Repo, "repo", "", "the Go module path of the new module (required)")
	cmd.Flags().StringVar(&p.Domain, "domain", "example.com", "the domain of the operator's API groups")
	cmd.Flags().StringVar(&p.Name, "name", "", "the operator's name (default: the directory's name)")
	cmd.Flags().StringVar(&o.BosunVersion, "bosun-version", "", "the version of github.com/bosunkit/bosun to require (default: the one this bosun was built with)")
	cmd.Flags().StringVar(&o.BosunReplace, "bosun-replace", "", "use the bosun module in this directory (a checkout) through a replace directive")
	cmd.Flags().StringVar(&o.GoVersion, "go-version", "1.26.0", "the go directive of go.mod")
	cmd.Flags().StringVar(&first.Kind, "kind", "", "also add this first kind, as 'bosun create api' does")
	cmd.Flags().StringVar(&first.Group, "group", "", "the API group of --kind, before the domain (default: the operator's name without dashes)")
	cmd.Flags().StringVar(&first.Version, "version", "v1", "the API version of --kind")
	cmd.Flags().StringVar(&first.ShortName, "short-name", "", "the short name of --kind for kubectl (default: the first syllable of each word of the kind)")
	cmd.Flags().StringSliceVar(&first.Owns, "owns", nil, "the kinds of the children the controller of --kind keeps, as 'bosun create api --owns' (default ConfigMap)")
	cmd.Flags().BoolVar(&first.DSL, "dsl", false, "declare the controller of --kind in a .bosun document")
	cmd.Flags().BoolVar(&skipGenerate, "skip-generate", false, "only write the files; 'go mod tidy && make generate manifests' completes them")
	return cmd
}
