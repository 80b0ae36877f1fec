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

	"github.com/bosunkit/bosun/cmd/bosun/internal/scaffold"
	"github.com/bosunkit/bosun/version"
)

// placeholderVersion is required, with a replace directive, when the
// bosun module comes from a directory.
const placeholderVersion = "v0.0.0-00010101000000-000000000000"

func newInitCommand() *cobra.Command {
	var (
		p        scaffold.Project
		o        scaffold.InitOptions
		first    scaffold.API
		skipTidy bool
	)
	cmd := &cobra.Command{
		Use:   "init [dir]",
		Short: "Start a new operator module in kubebuilder's layout",
		Long: `Writes a new Go module for an operator into dir (default: the current
directory): cmd/main.go with the usual manager flags and --dev, config/ with
kustomize manifests (CRDs, least-privilege RBAC, a hardened Deployment),
config/samples, a Makefile and a README. Then add kinds with
'bosun create api' and run the operator with 'bosun dev'.`,
		Example: `  bosun init --domain example.com --repo github.com/me/shop --kind Shop shop && cd shop && bosun dev
  bosun create api --group shop --version v1 --kind Order    # another kind`,
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
				if v := version.Get().Version; strings.HasPrefix(v, "v") && !strings.Contains(v, "+") {
					o.BosunVersion = v
				}
			}
			if o.BosunVersion == "" {
				return fmt.Errorf("%w: this bosun was built from a checkout and has no released version: "+
					"pass --bosun-version, or --bosun-replace with the checkout's directory", scaffold.ErrInvalid)
			}
			if o.GoVersion == "" {
				o.GoVersion = "1.26.0"
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
					first.Group = strings.ReplaceAll(p.Name, "-", "")
				}
				if err := scaffold.CreateAPI(abs, first); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "added the kind %s (%s, %s)\n", first.Kind, first.Group, first.Version)
			}
			if !skipTidy {
				if err := goModTidy(cmd, abs); err != nil {
					return err
				}
			}
			if first.Kind != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "next: cd %s && bosun dev\n", dir)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "next: cd %s && bosun create api --group %s --version v1 --kind <Kind> && bosun dev\n", dir, p.Name)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&p.Repo, "repo", "", "the Go module path of the new module (required)")
	cmd.Flags().StringVar(&p.Domain, "domain", "example.com", "the domain of the operator's API groups")
	cmd.Flags().StringVar(&p.Name, "name", "", "the operator's name (default: the directory's name)")
	cmd.Flags().StringVar(&o.BosunVersion, "bosun-version", "", "the version of github.com/bosunkit/bosun to require (default: this binary's)")
	cmd.Flags().StringVar(&o.BosunReplace, "bosun-replace", "", "use the bosun module in this directory (a checkout) through a replace directive")
	cmd.Flags().StringVar(&o.GoVersion, "go-version", "", "the go directive of go.mod (default 1.26.0)")
	cmd.Flags().StringVar(&first.Kind, "kind", "", "also create this first kind, as 'bosun create api' does")
	cmd.Flags().StringVar(&first.Group, "group", "", "the API group of --kind (default: the operator's name)")
	cmd.Flags().StringVar(&first.Version, "version", "v1", "the API version of --kind")
	cmd.Flags().BoolVar(&skipTidy, "skip-tidy", false, "do not run 'go mod tidy' afterwards")
	return cmd
}

func newCreateCommand() *cobra.Command {
	create := &cobra.Command{Use: "create", Short: "Add to an operator module that bosun init started"}
	var (
		a        scaffold.API
		dir      string
		skipTidy bool
	)
	api := &cobra.Command{
		Use:   "api",
		Short: "Add a kind: its types, CRD, sample, controller and tests",
		Long: `Adds a kind to the operator module: api/<version>/ types and deepcopy,
its CRD in config/crd, a sample in config/samples, and in internal/controller
a reconciler with one step, a unit test and an envtest test; and registers
it in cmd/main.go, the kustomizations and the RBAC role.`,
		Example: `  bosun create api --group shop --version v1 --kind Shop`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := scaffold.CreateAPI(dir, a); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "added the kind %s (%s, %s)\n", a.Kind, a.Group, a.Version)
			if !skipTidy {
				return goModTidy(cmd, dir)
			}
			return nil
		},
	}
	api.Flags().StringVar(&a.Group, "group", "", "the API group, before the domain (required)")
	api.Flags().StringVar(&a.Version, "version", "v1", "the API version")
	api.Flags().StringVar(&a.Kind, "kind", "", "the kind, in CamelCase (required)")
	api.Flags().StringVar(&dir, "dir", ".", "the operator module")
	api.Flags().BoolVar(&skipTidy, "skip-tidy", false, "do not run 'go mod tidy' afterwards")
	create.AddCommand(api)
	return create
}

func newDevCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "dev [dir] [-- operator flags]",
		Short: "Run an operator module on an embedded control plane until Ctrl-C",
		Long: `Runs the operator of the module in dir (default: the current directory)
with --dev: kube-apiserver and etcd start on this machine (built from Go
modules on first use), its CRDs and samples are installed, a kubeconfig is
written for kubectl (bin/dev.kubeconfig), and it runs until Ctrl-C. Flags
after -- go to the operator.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if n := cmd.ArgsLenAtDash(); (n < 0 && len(args) > 0) || n > 0 {
				dir = args[0]
				args = args[1:]
			}
			dir, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			if _, err := os.Stat(filepath.Join(dir, "cmd", "main.go")); err != nil {
				return fmt.Errorf("%s has no cmd/main.go: run bosun dev in an operator module that bosun init started", dir)
			}
			// Built first, then run, so that signals reach the operator
			// itself.
			build := exec.Command("go", "build", "-o", filepath.Join("bin", "manager"), "./cmd")
			build.Dir = dir
			build.Stdout, build.Stderr = cmd.ErrOrStderr(), cmd.ErrOrStderr()
			if err := build.Run(); err != nil {
				return fmt.Errorf("building the operator in %s: %w", dir, err)
			}
			run := exec.Command(filepath.Join(dir, "bin", "manager"), append([]string{"--dev"}, args...)...)
			run.Dir = dir
			run.Stdin, run.Stdout, run.Stderr = os.Stdin, cmd.OutOrStdout(), cmd.ErrOrStderr()
			// Ctrl-C reaches the operator, which stops its control plane;
			// this process waits for it.
			sig := make(chan os.Signal, 2)
			signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
			defer signal.Stop(sig)
			if err := run.Start(); err != nil {
				return err
			}
			go func() {
				for s := range sig {
					if run.Process != nil {
						_ = run.Process.Signal(s)
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
}

// goModTidy runs go mod tidy in dir.
func goModTidy(cmd *cobra.Command, dir string) error {
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir = dir
	tidy.Stdout, tidy.Stderr = cmd.ErrOrStderr(), cmd.ErrOrStderr()
	if err := tidy.Run(); err != nil {
		return fmt.Errorf("go mod tidy in %s: %w", dir, err)
	}
	return nil
}
