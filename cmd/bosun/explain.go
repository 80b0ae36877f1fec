package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/bosunkit/bosun/cmd/bosun/internal/explain"
)

// The exit statuses of `bosun explain`: 0 when the object is Ready,
// statusNotReady when it is not (and for any error, as every command of
// bosun), statusUsage for a command line it cannot run.
const (
	statusNotReady = 1
	statusUsage    = 2
)

// explainTimeout bounds each request to the API server.
const explainTimeout = 30 * time.Second

func newExplainCommand() *cobra.Command { return explainCommand(os.Exit) }

// explainCommand returns `bosun explain`, which ends the process through
// exit with statusUsage on a usage error.
func explainCommand(exit func(code int)) *cobra.Command {
	var namespace, kubeconfig, debugURL string
	cmd := &cobra.Command{
		Use:   "explain KIND/NAME [-n NAMESPACE] [--kubeconfig PATH] [--debug-url URL]",
		Short: "Say why an object that a bosun operator reconciles is not Ready",
		// The command says what went wrong itself (see explainUsageError), also
		// when it runs on its own, as in tests.
		SilenceUsage:  true,
		SilenceErrors: true,
		Long: `Reads an object and what bears on it from the cluster, and says in a few
lines why it is not Ready, printing only what applies:

  - the verdict: Ready's status, reason, message and age, whether the status
    describes the current generation, Reconciling and Stalled if present,
    and the build of the operator that last reconciled the object
    (bosun.dev/reconciled-by), when the operator records one;
  - the failing conditions (False or Unknown), worst first;
  - a deletion under way: since when, its finalizers, DeletionBlocked and the
    annotation that releases the finalizer on purpose;
  - the reconcile policy in force and where it comes from (the object, its
    Namespace, or the default);
  - the children that are not ready (objects it controls, found by the label
    bosun.dev/owner in the workload kinds and the kinds its conditions
    name), with a summary of a workload's pods;
  - the external resource of a managed step: its name, Synced and Available;
  - the latest events about the object, warnings first, then newest first;
  - with --debug-url, the object's last passes from the operator's debug page
    (served on its metrics address with --debug-page): why each ran, how it
    ended, and the step that failed with its error.

KIND is as kubectl takes it: a kind, a plural, a short name, any of them
followed by .group. Only the kubeconfig, discovery and the API server's
generic endpoints are used, so any cluster that serves the operator's CRDs
will do. Over https, the debug page gets the kubeconfig's bearer token, as
the metrics server's authentication wants, and the certificate of a
loopback address (a port-forward) is not verified. The token goes to that
host only: a redirect to another host or to http is refused.

Exit status: 0 when the object is Ready (True, for its current generation),
1 when it is not or when it cannot be read, 2 on a usage error.`,
		Example: `  bosun explain simple/div -n demo
  bosun explain memcacheds.cache.example.bosun.dev/cache -n shop --kubeconfig bin/dev.kubeconfig
  bosun explain mc cache -n shop --debug-url http://127.0.0.1:8080
  until bosun explain mc/cache -n shop >/dev/null; do sleep 5; done`,
		Args: func(cmd *cobra.Command, args []string) error {
			if _, _, err := explainArgs(args); err != nil {
				return explainUsageError(cmd, exit, err)
			}
			if debugURL != "" {
				if _, err := explain.DebugPageURL(debugURL); err != nil {
					return explainUsageError(cmd, exit, fmt.Errorf("--debug-url: %w", err))
				}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, name, _ := explainArgs(args)
			cfg, ns, err := explainKubeconfig(kubeconfig, namespace)
			if err != nil {
				return err
			}
			cfg.WarningHandler = rest.NewWarningWriter(cmd.ErrOrStderr(), rest.WarningWriterOptions{Deduplicate: true})
			report, err := explain.Gather(cmd.Context(), kind, name, ns, explain.Options{Config: cfg, DebugURL: debugURL})
			if err != nil {
				return err
			}
			if err := report.Write(cmd.OutOrStdout(), time.Now()); err != nil {
				return err
			}
			if !report.IsReady() {
				// Said on stdout; main exits with statusNotReady.
				return errReported
			}
			return nil
		},
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return explainUsageError(c, exit, err) })
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "the object's namespace (default: the kubeconfig context's, else default)")
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "the kubeconfig to use (default: $KUBECONFIG, else ~/.kube/config)")
	cmd.Flags().StringVar(&debugURL, "debug-url", "", "the operator's metrics address serving the debug page, such as https://localhost:8443")
	return cmd
}

// explainArgs returns the kind and the name that args give, as KIND/NAME
// or as KIND NAME.
func explainArgs(args []string) (kind, name string, err error) {
	switch len(args) {
	case 1:
		kind, name, _ = strings.Cut(args[0], "/")
	case 2:
		kind, name = args[0], args[1]
		if strings.Contains(kind, "/") {
			return "", "", errors.New("give the object as KIND/NAME or as KIND NAME, not both")
		}
	default:
		return "", "", errors.New("give one object, as KIND/NAME")
	}
	if kind == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("%q is not KIND/NAME", strings.Join(args, " "))
	}
	return kind, name, nil
}

// explainUsageError reports err as a usage error and ends the process with
// statusUsage. When exit returns (in tests), it returns errReported.
func explainUsageError(cmd *cobra.Command, exit func(int), err error) error {
	fmt.Fprintf(cmd.ErrOrStderr(), "bosun %s: %v\nRun 'bosun %s --help' for usage.\n", cmd.Name(), err, cmd.Name())
	exit(statusUsage)
	return errReported
}

// explainKubeconfig returns the configuration of the API server and the
// namespace to use, as kubectl finds them: the file given, else
// $KUBECONFIG, else ~/.kube/config; the namespace given, else the current
// context's, else default.
func explainKubeconfig(path, namespace string) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	overrides := &clientcmd.ConfigOverrides{}
	overrides.Context.Namespace = namespace
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("reading the kubeconfig: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("reading the kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	if cfg.Timeout == 0 {
		cfg.Timeout = explainTimeout
	}
	return cfg, ns, nil
}
