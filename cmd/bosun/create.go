package main

import (
	"fmt"
	"path/filepath"
	"strings"

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
sample in config/samples, and in internal/controller a reconciler, a unit
test and an envtest test; registers it in cmd/main.go and the
kustomizations; then runs go mod tidy, controller-gen (deep copies, CRD,
role) and go generate.

The reconciler keeps the kind's children, built from its spec, through a
children step: applied with server-side apply, put back when changed by
hand, owned by the object so that they are deleted with it. --owns names
their kinds, one child of each (default ConfigMap), among

  ` + strings.Join(scaffold.Ownable(), ", ") + `

with at most one workload (Deployment, StatefulSet, DaemonSet, Job). A
kind owning a Deployment or StatefulSet has spec.size and spec.image, and
reports status.readyReplicas; it is Ready when spec.size replicas are.

With --dsl, the reconciler's states and actions are declared in a .bosun
document that go generate turns into Go.`,
		Example: `  bosun create api --group shop --version v1 --kind Order
  bosun create api --group cache --version v1alpha1 --kind Memcached --owns Deployment,Service
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
	api.Flags().StringVar(&a.ShortName, "short-name", "", "the kind's short name for kubectl (default: the first syllable of each word of the kind, such as memc for Memcached)")
	api.Flags().StringSliceVar(&a.Owns, "owns", nil, "the kinds of the children the controller keeps, repeated or comma-separated: "+strings.Join(scaffold.Ownable(), ", ")+" (default ConfigMap; not with --dsl)")
	api.Flags().BoolVar(&a.DSL, "dsl", false, "declare the reconciler's states and actions in a .bosun document")
	api.Flags().StringVar(&dir, "dir", ".", "the operator module")
	api.Flags().BoolVar(&skipGenerate, "skip-generate", false, "only write the files; 'go mod tidy && make generate manifests' completes them")
	create.AddCommand(api)
	return create
}
