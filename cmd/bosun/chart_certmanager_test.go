package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/operator/manifest"
)

// certManagerModule is cert-manager's Go module, pinned by hack/certmanager.
const certManagerModule = "github.com/cert-manager/cert-manager"

// The names the cronjob example's chart gives its webhook objects.
const (
	cronJobService    = "cronjob-webhook-service"
	cronJobSecret     = "webhook-server-cert"
	cronJobCert       = "cronjob-serving-cert"
	cronJobCRD        = "cronjobs.cronjob.bosun.dev"
	cronJobDeployment = "cronjob-controller-manager"
)

// TestChartWithCertManager installs the cronjob example's chart, with
// certManager.enabled, into a namespace other than its manifests', in a
// cluster where cert-manager itself runs: its certificate controllers and
// CA injector, built from its Go module by hack/certmanager, against CRDs
// from the same module. cert-manager issues the webhook server's
// Certificate into the Secret the manager's Deployment mounts at its
// --webhook-cert-path, and injects the Certificate's CA into both webhook
// configurations and the CRD's conversion. The operator, run beside the
// cluster as bosun dev runs it, serves its webhooks with the files of that
// Secret; the API server reaches it through the chart's webhook Service
// (routed to the operator by an EndpointSlice, since the Deployment's pods
// are simulated) and trusts it through the injected CA: a CronJob is
// defaulted, a bad schedule refused, and a CronJob read at v2 converted.
// Renewed (as cmctl renew does), the certificate is served, and trusted,
// without a restart.
func TestChartWithCertManager(t *testing.T) {
	certManager, crdDir := buildCertManager(t)
	operatorBin := filepath.Join(t.TempDir(), "cronjob")
	runIn(t, "../../examples", "go", "build", "-o", operatorBin, "./cronjob/cmd")

	dir := filepath.Join(t.TempDir(), "chart")
	if _, stderr, status := runMain(t, ".", "chart", "--dir", "../../examples/cronjob/config/default", "-o", dir); status != 0 {
		t.Fatalf("bosun chart: exit %d\n%s", status, stderr)
	}
	ch, err := loader.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	crds, err := manifest.DecodeCRDs(os.DirFS(crdDir))
	if err != nil {
		t.Fatal(err)
	}
	cp := bosuntest.Start(t, controlplane.Options{
		ControllerManager: true,
		CRDs:              crds,
		// Webhook Services are reached through their EndpointSlices, as
		// there is no kube-proxy to route their cluster IPs.
		APIServerFlags: map[string][]string{"enable-aggregator-routing": {"true"}},
	})
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	certManagerRunning := startProcess(t, "cert-manager", certManager, []string{"--kubeconfig", kubeconfig, "-v=2"})

	// Not the manifests' namespace (cronjob-system): the certificate's DNS
	// names, the Services the webhooks call and inject-ca-from follow the
	// release's.
	const ns, release = "jobs", "cronjob"
	_, install := helmInstall(t, kubeconfig, ns, release)
	// No replicas: the Deployment's pods would be simulated, and the
	// operator runs beside the cluster instead.
	vals := map[string]any{"replicas": 0, "certManager": map[string]any{"enabled": true}}
	if _, err := install.RunWithContext(t.Context(), ch, vals); err != nil {
		t.Fatalf("helm install: %v", err)
	}
	secretKey := client.ObjectKey{Namespace: ns, Name: cronJobSecret}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		certManagerRunning()
		return certificateIssued(ctx, cp.Client, ns)
	}, bosuntest.Timeout(2*time.Minute))
	checkManagerMountsSecret(t, cp.Client, ns)
	bosuntest.Eventually(t, func(ctx context.Context) error {
		certManagerRunning()
		return caInjected(ctx, cp.Client, secretKey)
	}, bosuntest.Timeout(2*time.Minute))

	// The operator serves its webhooks with the Secret's files, kept up to
	// date as the kubelet keeps a mounted Secret, on an address of this
	// machine the webhook Service is routed to.
	certDir := t.TempDir()
	mountSecret(t, cp.Client, secretKey, certDir)
	ip := hostIP(t)
	port := freePort(t)
	operatorRunning := startProcess(t, "cronjob operator", operatorBin, []string{
		"--webhook-cert-path=" + certDir, "--webhook-port=" + strconv.Itoa(port),
		"--metrics-bind-address=0", "--health-probe-bind-address=0",
	}, "KUBECONFIG="+kubeconfig)
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cronJobService + "-operator", Labels: map[string]string{
			discoveryv1.LabelServiceName: cronJobService,
			discoveryv1.LabelManagedBy:   "bosun-test",
		}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{ip.String()},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
		}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("webhook"), Port: ptr.To(int32(port)), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	if err := cp.Client.Create(t.Context(), slice); err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort(ip.String(), strconv.Itoa(port))
	bosuntest.Eventually(t, func(ctx context.Context) error {
		operatorRunning()
		return servesSecretCertificate(ctx, cp.Client, secretKey, addr)
	}, bosuntest.Timeout(2*time.Minute))

	// Through the API server: defaulting, validation and conversion.
	good := cronJobObject(ns, "every-minute", "*/1 * * * *")
	createThroughWebhooks(t, cp.Client, good)
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(good.GroupVersionKind())
	if err := cp.Client.Get(t.Context(), client.ObjectKeyFromObject(good), stored); err != nil {
		t.Fatal(err)
	}
	if p, _, _ := unstructured.NestedString(stored.Object, "spec", "concurrencyPolicy"); p != "Allow" {
		t.Errorf("the stored CronJob's concurrencyPolicy is %q, want the defaulting webhook's Allow", p)
	}
	err = cp.Client.Create(t.Context(), cronJobObject(ns, "never-valid", "not a schedule"))
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.schedule") {
		t.Errorf("creating a CronJob with a bad schedule: %v, want the validating webhook's refusal on spec.schedule", err)
	}
	v2 := &unstructured.Unstructured{}
	v2.SetAPIVersion("cronjob.bosun.dev/v2")
	v2.SetKind("CronJob")
	if err := cp.Client.Get(t.Context(), client.ObjectKeyFromObject(good), v2); err != nil {
		t.Fatalf("reading the CronJob at v2, through the conversion webhook: %v", err)
	}
	if m, _, _ := unstructured.NestedString(v2.Object, "spec", "schedule", "minute"); m != "*/1" {
		t.Errorf("the CronJob at v2 has spec.schedule.minute %q, want */1", m)
	}

	// Renewed, the new certificate is injected, served by the same
	// process and trusted by the API server.
	renewCertificate(t, cp.Client, secretKey)
	bosuntest.Eventually(t, func(ctx context.Context) error {
		certManagerRunning()
		operatorRunning()
		if err := caInjected(ctx, cp.Client, secretKey); err != nil {
			return err
		}
		return servesSecretCertificate(ctx, cp.Client, secretKey, addr)
	}, bosuntest.Timeout(2*time.Minute))
	createThroughWebhooks(t, cp.Client, cronJobObject(ns, "after-renewal", "*/5 * * * *"))
}

// certificateIssued reports whether the chart's Certificate in namespace ns
// is Ready and its Secret holds a CA, a certificate and a key.
func certificateIssued(ctx context.Context, c client.Client, ns string) error {
	cert := certificateObject()
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: cronJobCert}, cert); err != nil {
		return err
	}
	conds, _, _ := unstructured.NestedSlice(cert.Object, "status", "conditions")
	ready := false
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" && m["status"] == "True" {
			ready = true
		}
	}
	if !ready {
		return fmt.Errorf("Certificate %s is not Ready: %v", cronJobCert, conds)
	}
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: cronJobSecret}, secret); err != nil {
		return err
	}
	for _, key := range []string{"ca.crt", corev1.TLSCertKey, corev1.TLSPrivateKeyKey} {
		if len(secret.Data[key]) == 0 {
			return fmt.Errorf("Secret %s has no %s", cronJobSecret, key)
		}
	}
	return nil
}

// certificateObject is an empty cert-manager Certificate.
func certificateObject() *unstructured.Unstructured {
	cert := &unstructured.Unstructured{}
	cert.SetAPIVersion("cert-manager.io/v1")
	cert.SetKind("Certificate")
	return cert
}

// checkManagerMountsSecret checks that the manager's Deployment in ns
// mounts the Certificate's Secret at the directory of its
// --webhook-cert-path, and that the webhook Service's ports target ports
// of its container: what the operator run beside the cluster stands in for.
func checkManagerMountsSecret(t *testing.T, c client.Client, ns string) {
	t.Helper()
	dep := &appsv1.Deployment{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: cronJobDeployment}, dep); err != nil {
		t.Fatal(err)
	}
	cert := certificateObject()
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: cronJobCert}, cert); err != nil {
		t.Fatal(err)
	}
	secretName, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName")
	manager := dep.Spec.Template.Spec.Containers[0]
	var certPath string
	for _, arg := range manager.Args {
		if v, ok := strings.CutPrefix(arg, "--webhook-cert-path="); ok {
			certPath = v
		}
	}
	mounted := false
	for _, v := range dep.Spec.Template.Spec.Volumes {
		for _, m := range manager.VolumeMounts {
			if v.Secret != nil && v.Secret.SecretName == secretName && m.Name == v.Name && m.MountPath == certPath {
				mounted = true
			}
		}
	}
	if certPath == "" || !mounted {
		t.Errorf("the manager's Deployment does not mount the Certificate's Secret %s at --webhook-cert-path %q: volumes %v, mounts %v",
			secretName, certPath, dep.Spec.Template.Spec.Volumes, manager.VolumeMounts)
	}
	svc := &corev1.Service{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: cronJobService}, svc); err != nil {
		t.Fatal(err)
	}
	for _, sp := range svc.Spec.Ports {
		found := false
		for _, p := range manager.Ports {
			if sp.TargetPort.StrVal == p.Name && p.Name != "" || sp.TargetPort.StrVal == "" && sp.TargetPort.IntVal == p.ContainerPort {
				found = true
			}
		}
		if !found {
			t.Errorf("the webhook Service's port %s targets %s, which no port of the manager's container is: %v", sp.Name, sp.TargetPort.String(), manager.Ports)
		}
	}
}

// caInjected reports whether the CA of the Secret at key is in the bundles
// of both webhook configurations and of the CRD's conversion. A bundle may
// hold other CAs too: after a renewal the injector keeps the earlier one
// beside the new.
func caInjected(ctx context.Context, c client.Client, key client.ObjectKey) error {
	secret := &corev1.Secret{}
	if err := c.Get(ctx, key, secret); err != nil {
		return err
	}
	ca := secret.Data["ca.crt"]
	var problems []string
	mutating := &admissionregistrationv1.MutatingWebhookConfigurationList{}
	validating := &admissionregistrationv1.ValidatingWebhookConfigurationList{}
	if err := c.List(ctx, mutating); err != nil {
		return err
	}
	if err := c.List(ctx, validating); err != nil {
		return err
	}
	if len(mutating.Items) != 1 || len(validating.Items) != 1 {
		return fmt.Errorf("%d mutating and %d validating webhook configurations, want 1 and 1", len(mutating.Items), len(validating.Items))
	}
	for _, w := range mutating.Items[0].Webhooks {
		if !bundleHolds(w.ClientConfig.CABundle, ca) {
			problems = append(problems, "mutating webhook "+w.Name)
		}
	}
	for _, w := range validating.Items[0].Webhooks {
		if !bundleHolds(w.ClientConfig.CABundle, ca) {
			problems = append(problems, "validating webhook "+w.Name)
		}
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: cronJobCRD}, crd); err != nil {
		return err
	}
	if conv := crd.Spec.Conversion; conv == nil || conv.Webhook == nil || conv.Webhook.ClientConfig == nil || !bundleHolds(conv.Webhook.ClientConfig.CABundle, ca) {
		problems = append(problems, "the conversion of "+cronJobCRD)
	}
	if len(problems) > 0 {
		return fmt.Errorf("the Certificate's CA is not yet in: %s", strings.Join(problems, ", "))
	}
	return nil
}

// bundleHolds reports whether the PEM bundle holds every certificate of
// the PEM ca.
func bundleHolds(bundle, ca []byte) bool {
	held := map[string]bool{}
	for rest := bundle; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		held[string(block.Bytes)] = true
	}
	n := 0
	for rest := ca; ; n++ {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		if !held[string(block.Bytes)] {
			return false
		}
	}
	return n > 0
}

// servesSecretCertificate reports whether the webhook server at addr
// serves the certificate of the Secret at key, verified for the webhook
// Service's DNS name by the CA injected into the validating webhook
// configuration.
func servesSecretCertificate(ctx context.Context, c client.Client, key client.ObjectKey, addr string) error {
	validating := &admissionregistrationv1.ValidatingWebhookConfigurationList{}
	if err := c.List(ctx, validating); err != nil {
		return err
	}
	roots := x509.NewCertPool()
	if len(validating.Items) != 1 || !roots.AppendCertsFromPEM(validating.Items[0].Webhooks[0].ClientConfig.CABundle) {
		return errors.New("the validating webhook configuration has no CA")
	}
	serverName := cronJobService + "." + key.Namespace + ".svc"
	d := tls.Dialer{Config: &tls.Config{RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS12}}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("the operator's webhook server, verified as %s by the injected CA: %w", serverName, err)
	}
	served := conn.(*tls.Conn).ConnectionState().PeerCertificates[0].Raw
	_ = conn.Close()
	secret := &corev1.Secret{}
	if err := c.Get(ctx, key, secret); err != nil {
		return err
	}
	issued, err := firstCertificate(secret.Data[corev1.TLSCertKey])
	if err != nil {
		return err
	}
	if !bytes.Equal(served, issued) {
		return errors.New("the webhook server serves another certificate than the Secret's")
	}
	return nil
}

// renewCertificate asks cert-manager to issue the chart's Certificate
// again, as cmctl renew does (the Issuing condition set to True), and
// returns once the Secret at key holds another certificate.
func renewCertificate(t *testing.T, c client.Client, key client.ObjectKey) {
	t.Helper()
	before := &corev1.Secret{}
	if err := c.Get(t.Context(), key, before); err != nil {
		t.Fatal(err)
	}
	cert := certificateObject()
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: key.Namespace, Name: cronJobCert}, cert); err != nil {
		t.Fatal(err)
	}
	conds, _, _ := unstructured.NestedSlice(cert.Object, "status", "conditions")
	conds = append(conds, map[string]any{
		"type": "Issuing", "status": "True", "reason": "ManuallyTriggered",
		"message": "renewed by the test", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
	})
	if err := unstructured.SetNestedSlice(cert.Object, conds, "status", "conditions"); err != nil {
		t.Fatal(err)
	}
	if err := c.Status().Update(t.Context(), cert); err != nil {
		t.Fatalf("renewing the Certificate: %v", err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		after := &corev1.Secret{}
		if err := c.Get(ctx, key, after); err != nil {
			return err
		}
		if bytes.Equal(after.Data[corev1.TLSCertKey], before.Data[corev1.TLSCertKey]) {
			return errors.New("the Secret still holds the certificate from before the renewal")
		}
		return nil
	}, bosuntest.Timeout(2*time.Minute))
}

// cronJobObject is a suspended CronJob of the cronjob example's v1.
func cronJobObject(ns, name, schedule string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cronjob.bosun.dev/v1",
		"kind":       "CronJob",
		"metadata":   map[string]any{"namespace": ns, "name": name},
		"spec": map[string]any{
			"schedule": schedule,
			"suspend":  true,
			"jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"restartPolicy": "Never",
				"containers":    []any{map[string]any{"name": "date", "image": "busybox:1.37"}},
			}}}},
		},
	}}
}

// createThroughWebhooks creates obj, trying again until the API server can
// call the webhooks: they fail closed.
func createThroughWebhooks(t *testing.T, c client.Client, obj *unstructured.Unstructured) {
	t.Helper()
	bosuntest.Eventually(t, func(ctx context.Context) error {
		err := c.Create(ctx, obj.DeepCopy())
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}, bosuntest.Timeout(2*time.Minute))
}

// buildCertManager builds the command of hack/certmanager and returns its
// path and the directory of cert-manager's CRDs in the same module. The
// first build compiles cert-manager (about 3 minutes on 2 cores); later
// ones reuse Go's build cache.
func buildCertManager(t *testing.T) (bin, crdDir string) {
	t.Helper()
	mod := filepath.Join("..", "..", "hack", "certmanager")
	bin = filepath.Join(t.TempDir(), "certmanager")
	env := []string{"GOWORK=off", "GOFLAGS=-mod=readonly", "CGO_ENABLED=0"}
	runCmd(t, mod, env, "go", "build", "-o", bin, ".")
	var m struct{ Dir string }
	if out := runCmd(t, mod, env, "go", "mod", "download", "-json", certManagerModule); json.Unmarshal([]byte(out), &m) != nil || m.Dir == "" {
		t.Fatalf("go mod download -json %s printed no directory:\n%s", certManagerModule, out)
	}
	return bin, filepath.Join(m.Dir, "deploy", "crds")
}

// runCmd runs name with args in dir, with env added to the test's
// environment, and returns its standard output; a failure ends the test
// with what it printed.
func runCmd(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, stderr.Bytes())
	}
	t.Logf("%s %s: %s", name, strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return string(out)
}

// startProcess starts bin with args, and env added to the test's
// environment, until the test ends. Its output goes to a file, printed if
// the test fails. The function it returns ends the test if the process has
// exited.
func startProcess(t *testing.T, what, bin string, args []string, env ...string) (running func()) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), filepath.Base(bin)+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", what, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		var status error
		select {
		case status = <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			status = <-exited
		}
		_ = logFile.Close()
		if t.Failed() {
			out, _ := os.ReadFile(logPath)
			t.Logf("%s's output (exit: %v):\n%s", what, status, tail(out, 60))
		}
	})
	return func() {
		t.Helper()
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("%s exited: %v", what, err)
		default:
		}
	}
}

// mountSecret keeps the files tls.crt and tls.key in dir equal to those of
// the Secret at key until the test ends, as the kubelet keeps a Secret
// mounted into a pod: a certificate cert-manager issues again reaches the
// webhook server, which watches the files. Each file is replaced whole.
func mountSecret(t *testing.T, c client.Client, key client.ObjectKey, dir string) {
	t.Helper()
	write := func(ctx context.Context, last map[string][]byte) error {
		secret := &corev1.Secret{}
		if err := c.Get(ctx, key, secret); err != nil {
			return err
		}
		for _, name := range []string{corev1.TLSPrivateKeyKey, corev1.TLSCertKey} {
			data := secret.Data[name]
			if bytes.Equal(data, last[name]) {
				continue
			}
			tmp := filepath.Join(dir, "."+name+".tmp")
			if err := os.WriteFile(tmp, data, 0o600); err != nil {
				return err
			}
			if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
				return err
			}
			last[name] = data
		}
		return nil
	}
	last := map[string][]byte{}
	if err := write(t.Context(), last); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		// A failed write is tried again at the next tick.
		wait.UntilWithContext(ctx, func(ctx context.Context) { _ = write(ctx, last) }, 250*time.Millisecond)
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// tail is the last n lines of out.
func tail(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// hostIP is an IPv4 address of this machine that an EndpointSlice may
// hold: neither loopback nor link-local. A machine without one fails the
// test: the API server could not reach the operator.
func hostIP(t *testing.T) net.IP {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		if ip := n.IP.To4(); ip != nil && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() {
			return ip
		}
	}
	t.Fatalf("this machine has no IPv4 address but loopback and link-local ones (%v): the API server cannot reach a webhook server through an EndpointSlice", addrs)
	return nil
}

// freePort is a TCP port free on every address at the time of the call.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// firstCertificate is the DER bytes of the first certificate of a PEM
// chain.
func firstCertificate(chain []byte) ([]byte, error) {
	block, _ := pem.Decode(chain)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("the Secret's tls.crt does not start with a certificate")
	}
	return block.Bytes, nil
}
