// Command dev measures what `bosun dev` costs from the command to the
// first sample Ready: it builds an operator's main package once, then runs
// it with --dev again and again, alternating a bare control plane
// (--dev-workloads=false: kube-apiserver and etcd) with the fuller one
// (the default: kube-controller-manager, kube-scheduler and simulated
// nodes as well), and times each run from the start of the process to the
// first object of its CRDs whose Ready condition is True. Then it times
// controlplane.Start alone, bare and fuller, to its return. It prints each
// run, the median of each kind and their difference. The binaries of the
// control plane must be built before (make controlplane); their first
// build is not part of the figure.
//
//	go run ./bench/dev                                   # the hello example, 5 rounds
//	go run ./bench/dev -main ./examples/memcached/cmd    # an operator whose samples need pods
//
// `make bench-dev` runs it. No test asserts a timing.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/bosunkit/bosun/controlplane"
)

func main() {
	mainPkg := flag.String("main", "./examples/hello/cmd", "the operator's main package")
	rounds := flag.Int("rounds", 5, "runs of each kind")
	timeout := flag.Duration("timeout", 3*time.Minute, "how long one run may take to a Ready sample")
	flag.Parse()
	// controller-runtime's client logs through this global logger.
	ctrllog.SetLogger(logr.Discard())
	if err := run(context.Background(), os.Stdout, *mainPkg, *rounds, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "bench/dev:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, mainPkg string, rounds int, timeout time.Duration) error {
	if _, err := controlplane.Binaries(ctx, controlplane.Options{Progress: os.Stderr, ControllerManager: true, Nodes: 1}); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "bosun-bench-dev-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "manager")
	build := exec.CommandContext(ctx, "go", "build", "-tags", "bosundev", "-o", bin, mainPkg)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building %s: %w", mainPkg, err)
	}
	fmt.Fprintf(out, "bosun dev of %s, from the command to the first sample Ready, %d rounds\n", mainPkg, rounds)
	times := map[bool][]time.Duration{}
	for i := range rounds {
		for _, workloads := range []bool{false, true} {
			d, err := once(ctx, bin, dir, workloads, timeout)
			if err != nil {
				return fmt.Errorf("round %d, workloads %t: %w", i+1, workloads, err)
			}
			times[workloads] = append(times[workloads], d)
			fmt.Fprintf(out, "  round %d  %-32s %6.2fs\n", i+1, label(workloads), d.Seconds())
		}
	}
	report(out, times)

	fmt.Fprintf(out, "controlplane.Start alone, to its return, %d rounds\n", rounds)
	starts := map[bool][]time.Duration{}
	for i := range rounds {
		for _, workloads := range []bool{false, true} {
			opts := controlplane.Options{}
			if workloads {
				opts.ControllerManager, opts.Nodes = true, 2
			}
			begin := time.Now()
			cp, err := controlplane.Start(ctx, opts)
			if err != nil {
				return err
			}
			d := time.Since(begin)
			if err := cp.Stop(); err != nil {
				return err
			}
			starts[workloads] = append(starts[workloads], d)
			fmt.Fprintf(out, "  round %d  %-32s %6.2fs\n", i+1, label(workloads), d.Seconds())
		}
	}
	report(out, starts)
	return nil
}

// report prints the median of each kind of run and their difference.
func report(out io.Writer, times map[bool][]time.Duration) {
	bare, full := median(times[false]), median(times[true])
	fmt.Fprintf(out, "median  %-32s %6.2fs\n", label(false), bare.Seconds())
	fmt.Fprintf(out, "median  %-32s %6.2fs\n", label(true), full.Seconds())
	fmt.Fprintf(out, "the workloads add %.2fs (ratio %.2f)\n", (full - bare).Seconds(), full.Seconds()/bare.Seconds())
}

func label(workloads bool) string {
	if workloads {
		return "with workloads and 2 nodes"
	}
	return "bare (--dev-workloads=false)"
}

// once runs bin --dev and returns how long it took to a Ready sample.
func once(ctx context.Context, bin, dir string, workloads bool, timeout time.Duration) (time.Duration, error) {
	kubeconfig := filepath.Join(dir, "dev.kubeconfig")
	_ = os.Remove(kubeconfig)
	cmd := exec.Command(bin, "--dev", fmt.Sprintf("--dev-workloads=%t", workloads), "--dev-kubeconfig="+kubeconfig,
		"--metrics-bind-address=0", "--health-probe-bind-address=0")
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var c client.Client
	err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if c == nil {
			cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
			if err != nil {
				return false, nil // not written yet
			}
			if c, err = client.New(cfg, client.Options{Scheme: controlplane.NewScheme()}); err != nil {
				return false, err
			}
		}
		return anyReady(ctx, c)
	})
	if err != nil {
		return 0, fmt.Errorf("no sample Ready: %w", err)
	}
	return time.Since(start), nil
}

// anyReady reports whether an object of one of the CRDs c serves has a
// Ready condition that is True.
func anyReady(ctx context.Context, c client.Client) (bool, error) {
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := c.List(ctx, crds); err != nil {
		return false, nil // the API server may still be coming up
	}
	for _, crd := range crds.Items {
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.ListKind})
			if err := c.List(ctx, list); err != nil {
				continue
			}
			for _, o := range list.Items {
				conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
				for _, cond := range conds {
					m, _ := cond.(map[string]any)
					if m["type"] == "Ready" && m["status"] == "True" {
						return true, nil
					}
				}
			}
			break
		}
	}
	return false, nil
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
