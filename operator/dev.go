package operator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/bosunkit/bosun/internal/devhook"
)

// devNamespace is the namespace --dev creates the samples in ("default", as
// the package doc says).
const devNamespace = "default"

// devNodes is how many simulated nodes --dev runs with --dev-workloads.
const devNodes = 2

// devEnv is the embedded control plane of --dev.
type devEnv struct {
	cp   *devhook.Cluster
	once sync.Once
}

// errNoDev is --dev's answer in a binary that does not link package
// operator/dev.
var errNoDev = errors.New(`this build has no embedded control plane: only a development build has one, ` +
	`built with -tags bosundev and a file of package main that imports github.com/bosunkit/bosun/operator/dev behind that tag ` +
	`(bosun init writes it as cmd/dev.go; bosun dev and go run -tags bosundev ./cmd --dev build so)`)

// startDev starts the control plane with start (devhook.Start, nil in a
// binary without package operator/dev), installs the operator's CRDs and
// writes the kubeconfig.
func startDev(ctx context.Context, start func(context.Context, devhook.Request) (*devhook.Cluster, error), opts Options, flags Flags, scheme *runtime.Scheme, out io.Writer) (*devEnv, error) {
	if start == nil {
		return nil, fmt.Errorf("operator %q: --dev: %w", opts.Name, errNoDev)
	}
	req := devhook.Request{Scheme: scheme, Progress: os.Stderr}
	what := "kube-apiserver and etcd"
	if flags.DevWorkloads {
		req.Workloads, req.Nodes = true, devNodes
		what = fmt.Sprintf("kube-apiserver, etcd, kube-controller-manager, kube-scheduler and %d simulated nodes", devNodes)
	}
	if opts.CRDs != nil {
		crds, err := opts.CRDs()
		if err != nil {
			return nil, fmt.Errorf("operator %q: --dev: reading the CRDs: %w", opts.Name, err)
		}
		req.CRDs = crds
	}
	if opts.Webhooks != nil {
		hooks, err := opts.Webhooks()
		if err != nil {
			return nil, fmt.Errorf("operator %q: --dev: reading the webhook configurations: %w", opts.Name, err)
		}
		req.Webhooks = hooks
	}
	fmt.Fprintf(out, "starting an embedded control plane: %s\n", what)
	cp, err := start(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("operator %q: --dev: %w", opts.Name, err)
	}
	d := &devEnv{cp: cp}
	path, err := filepath.Abs(flags.DevKubeconfig)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(path), 0o755)
	}
	if err == nil {
		err = cp.WriteKubeconfig(path)
	}
	if err != nil {
		d.stop(out)
		return nil, fmt.Errorf("operator %q: --dev: writing the kubeconfig: %w", opts.Name, err)
	}
	fmt.Fprintf(out, "control plane ready; kubeconfig: %s\n  kubectl --kubeconfig %s get bosun -A\n", path, path)
	return d, nil
}

// samplesRunnable creates the samples once the manager runs, so that the
// controllers see them arrive, and, when the operator has webhooks, once
// its webhook server answers, so that they are defaulted and validated.
func (d *devEnv) samplesRunnable(opts Options, out io.Writer, mgr manager.Manager) manager.Runnable {
	return manager.RunnableFunc(func(ctx context.Context) error {
		if opts.Webhooks != nil {
			if err := waitServing(ctx, mgr.GetWebhookServer().StartedChecker()); err != nil {
				return fmt.Errorf("operator %q: --dev: waiting for the webhook server: %w", opts.Name, err)
			}
		}
		if opts.Prepare != nil {
			if err := opts.Prepare(ctx, d.cp.Client, devNamespace); err != nil {
				return fmt.Errorf("operator %q: --dev: preparing the samples: %w", opts.Name, err)
			}
		}
		if opts.Samples == nil {
			return nil
		}
		for _, o := range opts.Samples(devNamespace) {
			err := d.cp.Client.Create(ctx, o)
			switch {
			case apierrors.IsAlreadyExists(err):
			case err != nil:
				return fmt.Errorf("operator %q: --dev: creating sample %s: %w", opts.Name, o.GetName(), err)
			default:
				kind := o.GetObjectKind().GroupVersionKind().Kind
				if gvk, err := apiutil.GVKForObject(o, d.cp.Client.Scheme()); err == nil {
					kind = gvk.Kind
				}
				fmt.Fprintf(out, "created sample %s %s/%s\n", kind, o.GetNamespace(), o.GetName())
			}
		}
		return nil
	})
}

// stop stops the control plane, once.
func (d *devEnv) stop(out io.Writer) {
	d.once.Do(func() {
		fmt.Fprintln(out, "stopping the control plane")
		if err := d.cp.Stop(); err != nil {
			fmt.Fprintf(out, "stopping the control plane: %v\n", err)
		}
	})
}

// waitServing polls check, a webhook server's StartedChecker, until it
// passes or ctx ends.
func waitServing(ctx context.Context, check healthz.Checker) error {
	var last error
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		last = check(nil)
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("%w (last check: %w)", err, last)
	}
	return nil
}
