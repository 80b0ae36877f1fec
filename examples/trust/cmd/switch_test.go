package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/children"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/examples/trust"
	trustv1alpha1 "github.com/bosunkit/bosun/examples/trust/api/v1alpha1"
	"github.com/bosunkit/bosun/examples/trust/internal/trustmanager"
)

// TestTakesOverFromTrustManager runs trust-manager itself (built from its
// module at the pinned version) on an API server with its CRD, until a
// Bundle with ConfigMap and Secret targets is synced, stops it, and runs
// the port in its place with the same arguments, as a Deployment whose
// image changed would. The port takes the targets over: each is written
// twice (once to join its set, with its labels and field manager; once to
// give up trust-manager's fields), holds the same bundle, and the Bundle
// is Ready; passes after that write nothing.
func TestTakesOverFromTrustManager(t *testing.T) {
	bin := trustmanager.Binary(t)
	scheme := controlplane.NewScheme()
	if err := trust.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cp := bosuntest.Start(t, controlplane.Options{Scheme: scheme, CRDs: []*apiextensionsv1.CustomResourceDefinition{trustmanager.CRD(t)}})
	for _, ns := range []string{"cert-manager", "team-a", "team-b"} {
		if err := cp.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	ca := newCA(t)
	if err := cp.Client.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "cert-manager", Name: "corp-ca"}, Data: map[string]string{"ca.crt": ca}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	metrics, probe, hooks := freePort(t), freePort(t), freePort(t)
	args := []string{
		"--kubeconfig=" + kubeconfig, "--leader-elect=false", "--secret-targets-enabled=true",
		"--metrics-port=" + strconv.Itoa(metrics), "--readiness-probe-port=" + strconv.Itoa(probe),
		"--webhook-host=127.0.0.1", "--webhook-port=" + strconv.Itoa(hooks), "--webhook-certificate-dir=" + cp.WebhookServer.CertDir,
	}
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", probe)

	// trust-manager syncs the Bundle.
	stopTM := startProcess(t, exec.Command(bin, args...), filepath.Join(dir, "trust-manager.log"))
	bosuntest.Eventually(t, func(ctx context.Context) error { return get200(ctx, readyz, "") })
	b := &trustv1alpha1.Bundle{ObjectMeta: metav1.ObjectMeta{Name: "corp"}, Spec: trustv1alpha1.BundleSpec{
		Sources: []trustv1alpha1.BundleSource{{ConfigMap: &trustv1alpha1.SourceObjectKeySelector{Name: "corp-ca", Key: "ca.crt"}}},
		Target: trustv1alpha1.BundleTarget{
			ConfigMap:         &trustv1alpha1.TargetTemplate{Key: "ca.pem"},
			Secret:            &trustv1alpha1.TargetTemplate{Key: "ca.crt"},
			AdditionalFormats: &trustv1alpha1.AdditionalFormats{JKS: &trustv1alpha1.JKS{KeySelector: trustv1alpha1.KeySelector{Key: "ca.jks"}}},
		},
	}}
	if err := cp.Client.Create(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	nsList := &corev1.NamespaceList{}
	if err := cp.Client.List(t.Context(), nsList); err != nil {
		t.Fatal(err)
	}
	var namespaces []string
	for _, ns := range nsList.Items {
		namespaces = append(namespaces, ns.Name)
	}
	waitTargets(t, cp.Client, b.Name, strings.TrimSpace(ca), namespaces, "")
	stopTM()

	// The port takes over; every write to a target from here is counted.
	wc, err := client.NewWithWatch(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	changes := countChanges(t, wc, b.Name)
	// The port, as a process of its own: this test binary running main.
	port := exec.Command(os.Args[0], args...)
	port.Env = append(os.Environ(), runMainEnv+"=1")
	startProcess(t, port, filepath.Join(dir, "port.log"))
	bosuntest.Eventually(t, func(ctx context.Context) error { return get200(ctx, readyz, "") })
	waitTargets(t, cp.Client, b.Name, strings.TrimSpace(ca), namespaces, trust.ControllerName)
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
			return err
		}
		if c := conditions.Find(b.Status.Conditions, "Ready"); c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != b.Generation {
			return fmt.Errorf("not Ready: %v", c)
		}
		return nil
	})

	// Two more passes, brought by touching the Bundle, write nothing.
	passes := func(ctx context.Context) (float64, error) {
		var n float64
		err := scrape(ctx, fmt.Sprintf("http://127.0.0.1:%d/metrics", metrics), `controller_runtime_reconcile_total{controller="trust",result="success"}`, &n)
		return n, err
	}
	for i := range 2 {
		before, err := passes(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		patch := client.RawPatch(client.Merge.Type(), fmt.Appendf(nil, `{"metadata":{"annotations":{"test/touch":"%d"}}}`, i))
		if err := cp.Client.Patch(t.Context(), b, patch); err != nil {
			t.Fatal(err)
		}
		bosuntest.Eventually(t, func(ctx context.Context) error {
			n, err := passes(ctx)
			if err == nil && n <= before {
				err = fmt.Errorf("%v passes, waiting for one more than %v", n, before)
			}
			return err
		})
	}
	got := changes()
	for _, ns := range namespaces {
		for _, kind := range []string{"ConfigMap", "Secret"} {
			key := kind + " " + ns
			if got[key] != 2 {
				t.Errorf("%s/%s was written %d times by the port, want twice", key, b.Name, got[key])
			}
			delete(got, key)
		}
	}
	if len(got) > 0 {
		t.Errorf("writes to other targets: %v", got)
	}
}

// startProcess starts cmd with its output in the file log, and returns
// what stops it (SIGTERM, then a kill after 30 seconds), which also runs
// when the test ends; the log is printed if the test failed.
func startProcess(t *testing.T, cmd *exec.Cmd, log string) func() {
	t.Helper()
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); f.Close(); close(done) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
			if t.Failed() {
				data, _ := os.ReadFile(log)
				t.Logf("%s wrote:\n%s", filepath.Base(log), data)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// waitTargets waits until a ConfigMap and a Secret of the Bundle name in
// each of namespaces hold bundle, and, when set is not empty, carry the
// label of the children set set.
func waitTargets(t *testing.T, c client.Client, name, bundle string, namespaces []string, set string) {
	t.Helper()
	bosuntest.Eventually(t, func(ctx context.Context) error {
		for _, ns := range namespaces {
			cm, s := &corev1.ConfigMap{}, &corev1.Secret{}
			key := client.ObjectKey{Namespace: ns, Name: name}
			if err := c.Get(ctx, key, cm); err != nil {
				return err
			}
			if err := c.Get(ctx, key, s); err != nil {
				return err
			}
			if cm.Data["ca.pem"] != bundle || string(s.Data["ca.crt"]) != bundle || len(cm.BinaryData["ca.jks"]) == 0 || len(s.Data["ca.jks"]) == 0 {
				return fmt.Errorf("the targets in %s do not hold the bundle and its JKS", ns)
			}
			if set != "" && (cm.Labels[children.LabelSet] != set || s.Labels[children.LabelSet] != set) {
				return fmt.Errorf("the targets in %s are not in set %s yet", ns, set)
			}
		}
		return nil
	}, bosuntest.Timeout(2*time.Minute))
}

// countChanges watches the targets of the Bundle name from now on and
// returns a function that reports how many times each was modified, by
// "Kind namespace".
func countChanges(t *testing.T, c client.WithWatch, name string) func() map[string]int {
	t.Helper()
	var mu sync.Mutex
	counts := map[string]int{}
	for kind, list := range map[string]client.ObjectList{"ConfigMap": &corev1.ConfigMapList{}, "Secret": &corev1.SecretList{}} {
		w, err := c.Watch(t.Context(), list, client.MatchingLabels{trustv1alpha1.LabelBundle: name})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		go func() {
			for ev := range w.ResultChan() {
				obj, ok := ev.Object.(client.Object)
				if !ok || ev.Type != watch.Modified {
					continue
				}
				mu.Lock()
				counts[kind+" "+obj.GetNamespace()]++
				mu.Unlock()
			}
		}()
	}
	return func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := make(map[string]int, len(counts))
		for k, v := range counts {
			out[k] = v
		}
		return out
	}
}

// scrape reads the value of the metric sample named exactly by sample
// from the Prometheus text at url into v.
func scrape(ctx context.Context, url, sample string, v *float64) error {
	body, err := fetch(ctx, url)
	if err != nil {
		return err
	}
	for line := range strings.SplitSeq(string(body), "\n") {
		if rest, ok := strings.CutPrefix(line, sample+" "); ok {
			*v, err = strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return err
		}
	}
	return fmt.Errorf("%s does not hold %s", url, sample)
}
