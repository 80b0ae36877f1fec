package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/examples/trust"
	trustv1alpha1 "github.com/bosunkit/bosun/examples/trust/api/v1alpha1"
	"github.com/bosunkit/bosun/examples/trust/config/webhook"
	"github.com/bosunkit/bosun/examples/trust/internal/trustmanager"
)

// chartArgs are the arguments trust-manager's chart (v0.25.0) gives its
// container with the chart's default values, and with its Secret targets,
// expired-certificate filter and default CA package turned on.
var chartArgs = []string{
	"--log-format=text",
	"--log-level=1",
	"--metrics-port=9402",
	"--readiness-probe-port=6060",
	"--readiness-probe-path=/readyz",
	"--leader-elect=true",
	"--leader-election-lease-duration=15s",
	"--leader-election-renew-deadline=10s",
	"--trust-namespace=cert-manager",
	"--webhook-host=0.0.0.0",
	"--webhook-port=6443",
	"--webhook-certificate-dir=/tls",
	"--default-package-location=/packages/cert-manager-package-debian.json",
	"--secret-targets-enabled=true",
	"--filter-expired-certificates=true",
}

// TestRunsInTrustManagersPlace runs the command with the arguments of
// trust-manager's chart, on an API server with trust-manager's CRD and
// the chart's validating webhook configuration, as a Deployment of the
// chart would run it. Only what a pod has and a test has not is changed,
// by arguments after the chart's, which win: the kubeconfig, the ports
// (free ones), the files (the webhook's certificate and the CA package),
// and leader election, which needs the pod's namespace. The webhook
// refuses what trust-manager's refuses, the readiness probe answers at
// its path, metrics are served over HTTP, a Bundle of the default CAs
// reaches a ConfigMap and a Secret in every namespace, and the command
// stops cleanly.
func TestRunsInTrustManagersPlace(t *testing.T) {
	scheme := controlplane.NewScheme()
	if err := trust.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	hooks, err := webhook.Configurations()
	if err != nil {
		t.Fatal(err)
	}
	cp := bosuntest.Start(t, controlplane.Options{Scheme: scheme, CRDs: []*apiextensionsv1.CustomResourceDefinition{trustmanager.CRD(t)}, Webhooks: hooks})
	if err := cp.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cert-manager"}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	ca := newCA(t)
	pkg := filepath.Join(dir, "package.json")
	data, err := json.Marshal(map[string]string{"name": "test-package", "version": "1", "bundle": ca})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pkg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	metrics, probe := freePort(t), freePort(t)
	args := append(append([]string{}, chartArgs...),
		"--kubeconfig="+kubeconfig,
		"--leader-elect=false",
		"--metrics-port="+strconv.Itoa(metrics),
		"--readiness-probe-port="+strconv.Itoa(probe),
		"--webhook-host="+cp.WebhookServer.Host,
		"--webhook-port="+strconv.Itoa(cp.WebhookServer.Port),
		"--webhook-certificate-dir="+cp.WebhookServer.CertDir,
		"--default-package-location="+pkg,
	)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var stderr bytes.Buffer
	go func() { done <- run(ctx, args, io.Discard, &stderr) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(time.Minute):
		}
	})

	bosuntest.Eventually(t, func(ctx context.Context) error {
		return get200(ctx, fmt.Sprintf("http://127.0.0.1:%d/readyz", probe), "")
	})
	invalid := &trustv1alpha1.Bundle{ObjectMeta: metav1.ObjectMeta{Name: "invalid"}, Spec: trustv1alpha1.BundleSpec{
		Sources: []trustv1alpha1.BundleSource{{ConfigMap: &trustv1alpha1.SourceObjectKeySelector{Name: "ca"}}},
		Target:  trustv1alpha1.BundleTarget{ConfigMap: &trustv1alpha1.TargetTemplate{Key: "ca.pem"}},
	}}
	if err := cp.Client.Create(t.Context(), invalid); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "exactly one of key and includeAllKeys") {
		t.Errorf("a Bundle trust-manager's webhook refuses: %v, want it refused", err)
	}

	b := &trustv1alpha1.Bundle{ObjectMeta: metav1.ObjectMeta{Name: "defaults"}, Spec: trustv1alpha1.BundleSpec{
		Sources: []trustv1alpha1.BundleSource{{UseDefaultCAs: new(true)}},
		Target:  trustv1alpha1.BundleTarget{ConfigMap: &trustv1alpha1.TargetTemplate{Key: "ca.pem"}, Secret: &trustv1alpha1.TargetTemplate{Key: "ca.crt"}},
	}}
	if err := cp.Client.Create(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
			return err
		}
		if c := conditions.Find(b.Status.Conditions, trustv1alpha1.ConditionSynced); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("not synced: %v", c)
		}
		namespaces := &corev1.NamespaceList{}
		if err := cp.Client.List(ctx, namespaces); err != nil {
			return err
		}
		for _, ns := range namespaces.Items {
			cm, s := &corev1.ConfigMap{}, &corev1.Secret{}
			key := client.ObjectKey{Namespace: ns.Name, Name: b.Name}
			if err := cp.Client.Get(ctx, key, cm); err != nil {
				return err
			}
			if err := cp.Client.Get(ctx, key, s); err != nil {
				return err
			}
			// A bundle ends with its last certificate's END line.
			if want := strings.TrimSpace(ca); cm.Data["ca.pem"] != want || string(s.Data["ca.crt"]) != want {
				return fmt.Errorf("the targets in %s do not hold the default CA: %q, %q", ns.Name, cm.Data["ca.pem"], s.Data["ca.crt"])
			}
		}
		return nil
	})
	bosuntest.Eventually(t, func(ctx context.Context) error {
		return get200(ctx, fmt.Sprintf("http://127.0.0.1:%d/metrics", metrics), `controller_runtime_reconcile_total{controller="trust"`)
	})

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("the command exited %d after its context ended, want 0; it wrote:\n%s", code, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("the command still runs a minute after its context ended")
	}
}

// get200 fails unless url answers 200 with a body that contains want.
func get200(ctx context.Context, url, want string) error {
	body, err := fetch(ctx, url)
	if err != nil {
		return err
	}
	if !bytes.Contains(body, []byte(want)) {
		return fmt.Errorf("%s does not hold %q", url, want)
	}
	return nil
}

// fetch returns the body of url, which must answer 200.
func fetch(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return body, nil
}

// freePort returns a free TCP port of the loopback interface.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		t.Fatalf("%s is not a TCP address", l.Addr())
	}
	return addr.Port
}

// newCA returns the PEM of a new self-signed CA certificate.
func newCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// runMainEnv, set to 1, makes the test binary run the command with its
// arguments instead of the tests, so that a test can run the operator as
// a process of its own.
const runMainEnv = "TRUST_CMD_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}
