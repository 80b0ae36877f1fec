package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

func newDevCommand() *cobra.Command {
	workloads := true
	cmd := &cobra.Command{
		Use:   "dev [dir] [-- operator flags]",
		Short: "Run an operator module on an embedded control plane until Ctrl-C",
		Long: `Builds the operator of the module in dir (default: the current directory)
as a development build (-tags bosundev, which compiles cmd/dev.go and with it
the embedded control plane a release build leaves out) and runs it with
--dev: kube-apiserver and etcd start on this machine, with
kube-controller-manager (garbage collection, Deployments, Jobs and the other
workload controllers), kube-scheduler and 2 simulated nodes on which pods
become Running and Ready (all built from Go modules on first use, which says
what it builds and how long it takes); its CRDs and samples are installed, a
kubeconfig is written for kubectl (bin/dev.kubeconfig) and printed, and it
runs until Ctrl-C, which stops the control plane too. --workloads=false
starts only kube-apiserver and etcd. Flags after -- go to the operator.`,
		Example: `  bosun dev
  bosun dev --workloads=false
  bosun dev -- --zap-log-level=debug --debug-page`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			n := cmd.ArgsLenAtDash()
			if n < 0 {
				n = len(args)
			}
			if n > 1 {
				return fmt.Errorf("bosun dev takes one directory; put the operator's flags after --: bosun dev %s -- %s", args[0], args[1])
			}
			if n == 1 {
				dir = args[0]
			}
			args = args[n:]
			dir, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			if _, err := os.Stat(filepath.Join(dir, "cmd", "main.go")); err != nil {
				return fmt.Errorf("%s has no cmd/main.go: run bosun dev in an operator module that bosun init started", dir)
			}
			if err := checkDevFile(dir); err != nil {
				return err
			}
			// Built first, then run, so that signals reach the operator
			// itself rather than go run; beside the release build of make
			// build (bin/manager), not over it.
			manager := filepath.Join(dir, "bin", "manager-dev")
			build := exec.CommandContext(cmd.Context(), "go", "build", "-tags", "bosundev", "-o", manager, "./cmd")
			build.Dir = dir
			build.Stdout, build.Stderr = cmd.ErrOrStderr(), cmd.ErrOrStderr()
			if err := build.Run(); err != nil {
				return fmt.Errorf("building the operator in %s: %w", dir, err)
			}
			run := exec.Command(manager, append([]string{"--dev", fmt.Sprintf("--dev-workloads=%t", workloads)}, args...)...)
			run.Dir = dir
			run.Stdin, run.Stdout, run.Stderr = os.Stdin, cmd.OutOrStdout(), cmd.ErrOrStderr()
			// Ctrl-C and SIGTERM go on to the operator, which stops its
			// control plane; this process waits for it to exit.
			sig := make(chan os.Signal, 2)
			signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
			defer signal.Stop(sig)
			if err := run.Start(); err != nil {
				return fmt.Errorf("starting %s: %w", manager, err)
			}
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				for {
					select {
					case s := <-sig:
						_ = run.Process.Signal(s)
					case <-stop:
						return
					}
				}
			}()
			err = run.Wait()
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				return fmt.Errorf("the operator exited: %w", err)
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&workloads, "workloads", workloads,
		"run kube-controller-manager, kube-scheduler and simulated nodes besides kube-apiserver and etcd, so that the operator's pods run")
	return cmd
}

// devImport is the package a development build links for --dev.
const devImport = `"github.com/bosunkit/bosun/operator/dev"`

// checkDevFile returns an error that says what to add when no Go file of
// dir's cmd/ imports package operator/dev: a project that an older bosun
// init made builds no control plane, and --dev would refuse to start.
func checkDevFile(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "cmd", "*.go"))
	if err != nil {
		return err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if strings.Contains(string(data), devImport) {
			return nil
		}
	}
	return fmt.Errorf("%s: no file links the control plane of --dev into a development build; add cmd/dev.go:\n\n"+
		"//go:build bosundev\n\npackage main\n\nimport _ %s", filepath.Join(dir, "cmd"), devImport)
}
