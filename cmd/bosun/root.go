package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/bosunkit/bosun/cmd/bosun/internal/demo"
	"github.com/bosunkit/bosun/controlplane"
)

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "bosun",
		Short:         "Tools for operators written with the bosun framework",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newGenCommand(), newCheckCommand(), newFmtCommand(), newDemoCommand(), newControlPlaneCommand(), newVersionCommand(), newGraphCommand(), newInitCommand(), newCreateCommand(), newDevCommand(), newManifestsCommand(), newChartCommand(), newImageCommand())
	root.AddCommand(newExplainCommand())
	root.AddCommand(newPlanCommand())
	root.AddCommand(newCanaryCommand())
	return root
}

// asKubectlPlugin names root "kubectl bosun" in its help when the binary
// runs as argv0 kubectl-bosun, kubectl's plugin of that name (any
// kubectl-* name does): kubectl bosun plan -f edited.yaml.
func asKubectlPlugin(root *cobra.Command, argv0 string) {
	if strings.HasPrefix(filepath.Base(argv0), "kubectl-") {
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl bosun"}
	}
}

func newDemoCommand() *cobra.Command {
	var (
		once      bool
		timeout   time.Duration
		verbose   bool
		workloads bool
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the example operators on an embedded control plane",
		Long: `Starts kube-apiserver and etcd, with kube-controller-manager (garbage
collection and the workload controllers), kube-scheduler and 2 simulated
nodes unless --workloads=false (all built from Go modules on first use),
installs the example CRDs, runs every example controller in one manager,
creates sample objects and reports their progress until each is Ready. Then
it prints what exists and a kubeconfig for kubectl, and keeps running until
Ctrl-C.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger := logr.Discard()
			if verbose {
				logger = zap.New(zap.WriteTo(cmd.ErrOrStderr()))
			}
			// controller-runtime's packages log through this global logger.
			ctrl.SetLogger(logger)
			return demo.Run(cmd.Context(), demo.Options{
				Examples:    examples(),
				Once:        once,
				Timeout:     timeout,
				Out:         cmd.OutOrStdout(),
				Logger:      logger,
				NoWorkloads: !workloads,
			})
		},
	}
	cmd.Flags().BoolVar(&once, "once", false, "exit 0 as soon as every sample is Ready (non-zero after --timeout)")
	cmd.Flags().DurationVar(&timeout, "timeout", demo.DefaultTimeout, "with --once, how long to wait for every sample to be Ready")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print the controllers' logs to stderr")
	cmd.Flags().BoolVar(&workloads, "workloads", true,
		"run kube-controller-manager, kube-scheduler and simulated nodes besides kube-apiserver and etcd, so that the examples' pods run")
	return cmd
}

func newControlPlaneCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "controlplane",
		Short: "Build the control plane's binaries if needed and print their directory",
		Long: fmt.Sprintf(`Builds kube-apiserver, kube-controller-manager and kube-scheduler %s, etcd
%s and kwok %s from Go modules into the user cache on first use (5 to 10
minutes for kube-apiserver and etcd on 2 cores, a few minutes for each of
the others), then prints the directory that holds them, suitable for
KUBEBUILDER_ASSETS. When KUBEBUILDER_ASSETS is set, checks it and prints it,
building into the cache only the other binaries it lacks.`,
			controlplane.KubernetesVersion, controlplane.EtcdVersion, controlplane.KwokVersion),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := controlplane.Binaries(cmd.Context(), controlplane.Options{Progress: cmd.ErrOrStderr(), ControllerManager: true, Nodes: 1})
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), dir)
			return nil
		},
	}
}
