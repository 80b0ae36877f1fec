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
document that go generate turns into Go.

For a kind the module has in another version, it adds a version: its
types, the same spec and status as the first version's, which becomes
the hub (stored, with the controller and webhooks), and the conversion
to and from it, with a round-trip test. No second controller. Then
'bosun create webhook --conversion' has the API server convert through
it.`,
		Example: `  bosun create api --group shop --version v1 --kind Order
  bosun create api --group cache --version v1alpha1 --kind Memcached --owns Deployment,Service
  bosun create api --group shop --version v1 --kind Queue --dsl
  bosun create api --group shop --version v2 --kind Order   # a second version of Order`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			abs, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			versions, err := scaffold.Versions(abs, a.Kind)
			if err != nil {
				return err
			}
			if err := scaffold.CreateAPI(abs, a); err != nil {
				return err
			}
			if len(versions) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "added the kind %s (%s, %s)\n", a.Kind, a.Group, a.Version)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "added the version %s of %s, which converts to and from its hub\n", a.Version, a.Kind)
			}
			if !skipGenerate {
				if err := scaffold.Generate(cmd.Context(), abs, cmd.ErrOrStderr()); err != nil {
					return err
				}
			}
			if len(versions) > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "next: bosun create webhook --group %s --kind %s --conversion, so that the API server converts through it\n", a.Group, a.Kind)
			}
			return nil
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
	create.AddCommand(api, newCreateWebhookCommand())
	return create
}

func newCreateWebhookCommand() *cobra.Command {
	var (
		w            scaffold.Webhook
		dir          string
		skipGenerate bool
	)
	cmd := &cobra.Command{
		Use:   "webhook",
		Short: "Add a kind's webhooks: defaulting, validation, conversion, their config and tests",
		Long: `Adds webhooks to a kind of the operator module, in
internal/controller/<kind>_webhook.go (Setup<Kind>WebhookWithManager,
registered in cmd/main.go, with package webhook of bosun) and a test of
each against a real API server in <kind>_webhook_test.go:

  --defaulting               a default for a field of the spec
  --programmatic-validation  a rule that refuses a field with a field error
  --conversion               the conversion between the kind's versions
                             (add a version with 'bosun create api' first)

The first webhook also writes config/webhook (the Service, and webhook.go,
which embeds the configurations for --dev and the tests),
config/certmanager (the serving certificate, from cert-manager) and the
patches of config/default. Run it again for a webhook the kind lacks: it
adds to the files. Webhooks go on the kind's hub version, to which the API
server converts the others. Prefer CEL (XValidation markers on the types)
for the rules it can say. Then it runs go mod tidy and controller-gen.`,
		Example: `  bosun create webhook --group shop --version v1 --kind Order --defaulting --programmatic-validation
  bosun create webhook --group shop --version v1 --kind Order --conversion`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			abs, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			if err := scaffold.CreateWebhook(abs, w); err != nil {
				return err
			}
			var what []string
			for _, c := range []struct {
				on   bool
				name string
			}{{w.Defaulting, "defaulting"}, {w.Validation, "validation"}, {w.Conversion, "conversion"}} {
				if c.on {
					what = append(what, c.name)
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "added the webhooks of %s: %s\n", w.Kind, strings.Join(what, ", "))
			if skipGenerate {
				return nil
			}
			return scaffold.Generate(cmd.Context(), abs, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&w.Group, "group", "", "the kind's API group, before the project's domain (default: the kind's)")
	cmd.Flags().StringVar(&w.Version, "version", "", "the kind's hub version, where its webhooks go (default: the kind's hub, its only version or the one with a Hub method)")
	cmd.Flags().StringVar(&w.Kind, "kind", "", "the kind, which the module has (required)")
	cmd.Flags().BoolVar(&w.Defaulting, "defaulting", false, "add a defaulting (mutating) webhook")
	cmd.Flags().BoolVar(&w.Validation, "programmatic-validation", false, "add a validating webhook")
	cmd.Flags().BoolVar(&w.Conversion, "conversion", false, "have the API server convert between the kind's versions through the conversion webhook")
	cmd.Flags().StringVar(&dir, "dir", ".", "the operator module")
	cmd.Flags().BoolVar(&skipGenerate, "skip-generate", false, "only write the files; 'go mod tidy && make generate manifests' completes them")
	return cmd
}
