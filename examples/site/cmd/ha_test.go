package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/examples/site"
	sitev1 "github.com/bosunkit/bosun/examples/site/api/v1alpha1"
)

// Leader election timing of the test's replicas: short, so that the test
// is quick, with kubebuilder's proportions.
const (
	leaseDuration = 4 * time.Second
	renewDeadline = 3 * time.Second
	retryPeriod   = 500 * time.Millisecond
)

// replica is one process of the site operator.
type replica struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
}

// leads reports whether the replica has logged that it acquired the Lease.
func (r *replica) leads() bool {
	return strings.Contains(r.stderr.String(), "Successfully acquired lease")
}

// TestHighAvailability builds the site operator's binary and runs two
// replicas of it with leader election against one control plane. It makes
// Sites, kills the leader with SIGKILL while it is working through them,
// and checks that the standby takes over within the lease duration (plus
// the retry period it polls at), that every Site converges, and that no
// child was made twice.
func TestHighAvailability(t *testing.T) {
	cp := bosuntest.Start(t, mustOptions(t))
	bin := filepath.Join(t.TempDir(), "site")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	ns := bosuntest.Namespace(t, cp.Client)
	if err := site.PrepareSamples(t.Context(), cp.Client, ns); err != nil {
		t.Fatal(err)
	}

	start := func() *replica {
		return startReplica(t, bin, kubeconfig, "--leader-election-namespace", ns, "--leader-election-id", "site-ha")
	}
	a, b := start(), start()
	var leader, standby *replica
	bosuntest.Eventually(t, func(context.Context) error {
		switch {
		case a.leads() && b.leads():
			return errors.New("both replicas acquired the Lease")
		case a.leads():
			leader, standby = a, b
		case b.leads():
			leader, standby = b, a
		default:
			return errors.New("no replica leads yet")
		}
		return nil
	}, bosuntest.Timeout(2*time.Minute))

	// Work for the leader: Sites, each with a ConfigMap and a Service.
	const n = 30
	var sites []*sitev1.Site
	for i := range n {
		s := &sitev1.Site{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("site-%d", i)},
			Spec:       sitev1.SiteSpec{Title: fmt.Sprintf("Site %d", i), Pages: []string{"index"}},
		}
		if err := cp.Client.Create(t.Context(), s); err != nil {
			t.Fatal(err)
		}
		sites = append(sites, s)
	}
	// Kill it in the middle: once it has made some children, not all.
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if made := countChildren(ctx, t, cp, ns); made == 0 {
			return errors.New("the leader has made no child yet")
		}
		return nil
	}, bosuntest.Interval(10*time.Millisecond))
	if err := leader.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	_ = leader.cmd.Wait()
	bosuntest.Eventually(t, func(context.Context) error {
		if !standby.leads() {
			return errors.New("the standby has not acquired the Lease")
		}
		return nil
	}, bosuntest.Interval(20*time.Millisecond))
	takeover := time.Since(killed)
	t.Logf("takeover %s after the kill (lease duration %s)", takeover.Round(time.Millisecond), leaseDuration)
	// The standby takes the Lease once it has seen no renewal for the lease
	// duration, at its next try (every retry period, with jitter); on a
	// loaded machine its API calls add to that. Twice the lease duration
	// is far beyond that and still far below anything a user would wait.
	if limit := 2 * leaseDuration; takeover > limit {
		t.Errorf("the standby took over %s after the leader died; want within %s", takeover, limit)
	}
	// Before it led, the standby reconciled nothing.
	before, _, _ := strings.Cut(standby.stderr.String(), "Successfully acquired lease")
	if strings.Contains(before, `"Site":{`) {
		t.Errorf("the standby logged work on Sites before it acquired the Lease:\n%s", tail(before, 2000))
	}

	bosuntest.Eventually(t, func(ctx context.Context) error {
		var errs []error
		for _, s := range sites {
			got := &sitev1.Site{}
			if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(s), got); err != nil {
				return err
			}
			if !meta.IsStatusConditionTrue(got.Status.Conditions, "Ready") || got.Status.ObservedGeneration != got.Generation {
				errs = append(errs, fmt.Errorf("%s not Ready: %v", got.Name, got.Status.Conditions))
			}
		}
		return errors.Join(errs...)
	}, bosuntest.Timeout(2*time.Minute))
	if got, want := countChildren(t.Context(), t, cp, ns), 2*n; got != want {
		t.Errorf("%d children (ConfigMaps and Services) for %d Sites; want %d, one of each per Site", got, n, want)
	}
	var lease coordinationv1.Lease
	if err := cp.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "site-ha"}, &lease); err != nil {
		t.Fatal(err)
	}
	if tr := lease.Spec.LeaseTransitions; tr == nil || *tr < 1 {
		t.Errorf("lease transitions %v; want at least 1", tr)
	}
}

// startReplica runs a replica of the site operator, the binary bin,
// against the cluster of kubeconfig with leader election on the test's
// timings and the flags args; the test's end stops it, and shows its
// stderr if the test failed.
func startReplica(t *testing.T, bin, kubeconfig string, args ...string) *replica {
	t.Helper()
	r := &replica{stderr: &lockedBuffer{}}
	r.cmd = exec.Command(bin, append([]string{
		"--kubeconfig", kubeconfig, "--leader-elect",
		"--leader-election-lease-duration", leaseDuration.String(),
		"--leader-election-renew-deadline", renewDeadline.String(),
		"--leader-election-retry-period", retryPeriod.String(),
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0",
	}, args...)...)
	r.cmd.Stderr = r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		_ = r.cmd.Wait()
		if t.Failed() {
			t.Logf("replica %d %v stderr (last 3000 bytes):\n%s", r.cmd.Process.Pid, args, tail(r.stderr.String(), 3000))
		}
	})
	return r
}

// countChildren counts the ConfigMaps and Services in ns that a Site
// controls.
func countChildren(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, ns string) int {
	t.Helper()
	var cms corev1.ConfigMapList
	var svcs corev1.ServiceList
	if err := cp.Client.List(ctx, &cms, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if err := cp.Client.List(ctx, &svcs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, o := range cms.Items {
		if c := metav1.GetControllerOf(&o); c != nil && c.Kind == "Site" {
			n++
		}
	}
	for _, o := range svcs.Items {
		if c := metav1.GetControllerOf(&o); c != nil && c.Kind == "Site" {
			n++
		}
	}
	return n
}

func mustOptions(t *testing.T) controlplane.Options {
	t.Helper()
	opts, err := controlplane.OptionsFor(site.AddToScheme, site.CRDs)()
	if err != nil {
		t.Fatal(err)
	}
	opts.Output = nil
	return opts
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// lockedBuffer is a bytes.Buffer that a process writes and a test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
