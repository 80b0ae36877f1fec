package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/bosunkit/bosun/cmd/bosun/internal/scaffold"
)

func newCreateCommand() *cobra.Command {
	create := &cobra.Command{
		Use:   "create",
		Short: "Add to an operator module that bosun init started",
		Args:  cobra.NoArgs,
	}
	var (
		a            scaffold.API
		dir          string
		skipGenerate bool
	)
	api := &cobra.Command{
		Use:   "api",
		Short: "Add a kind: its types, CRD, sample, controller and tests",
		Long: `Adds a kind to the operator module: api/<version>/ with its types, a
sample in config/samples, and in internal/controller a reconciler with one
step, a unit test and an envtest test (with --dsl, the reconciler's states
and actions are declared in a .bosun document that go generate turns into
Go); registers it in cmd/main.go and the kustomizations; then runs go mod
tidy, controller-gen (deep copies, CRD, role) and go generate.`,
		Example: `  bosun create api --group shop --version v1 --kind Order
  bosun create api --group shop --version v1 --kind Queue --dsl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			abs, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			if err := scaffold.CreateAPI(abs, a); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "added the kind %s (%s, %s)\n", a.Kind, a.Group, a.Version)
			if skipGenerate {
				return nil
			}
			return scaffold.Generate(cmd.Context(), abs, cmd.ErrOrStderr())
		},
	}
	api.Flags().StringVar(&a.Group, "group", "", "the API group, before the project's domain (required)")
	api.Flags().StringVar(&a.Version, "version", "v1", "the API version")
	api.Flags().StringVar(&a.Kind, "kind", "", "the kind, in CamelCase (required)")
	api.Flags().StringVar(&a.ShortName, "short-name", "", "the kind's short name for kubectl (default: its first letter and consonants)")
	api.Flags().BoolVar(&a.DSL, "dsl", false, "declare the reconciler's states and actions in a .bosun document")
	api.Flags().StringVar(&dir, "dir", ".", "the operator module")
	api.Flags().BoolVar(&skipGenerate, "skip-generate", false, "only write the files; 'go mod tidy && make generate manifests' completes them")
	create.AddCommand(api)
	return create
}
