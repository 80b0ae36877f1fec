package operator_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/operator"
	"github.com/bosunkit/bosun/webhook"
)

var shared = bosuntest.Shared{Options: testapi.ControlPlaneOptions}

// runMainEnv, set to 1, makes the test binary run operator.Main with the
// widgets operator and its arguments, so that tests can run an operator
// process and signal it.
const runMainEnv = "OPERATOR_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		operator.Main(widgets("widgets", ""))
		os.Exit(0)
	}
	shared.Main(m)
}

// double sets a Widget's result to twice its value.
type double struct{}

func (double) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	req.Object.Status.Result = 2 * req.Object.Spec.Value
	return ctrl.Result{}, nil
}

// widgets is a small operator of Widgets in namespace ns.
func widgets(name, ns string) operator.Options {
	return operator.Options{
		Name:        name,
		AddToScheme: testapi.AddToScheme,
		CRDs: func() ([]*apiextensionsv1.CustomResourceDefinition, error) {
			crd, err := testapi.CRD()
			return []*apiextensionsv1.CustomResourceDefinition{crd}, err
		},
		Samples: func(namespace string) []client.Object {
			return []client.Object{&testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "sample"}, Spec: testapi.WidgetSpec{Value: 21}}}
		},
		Setup: func(mgr ctrl.Manager) error {
			r := &bosun.Reconciler[*testapi.Widget]{Name: name, Steps: []bosun.Step[*testapi.Widget]{double{}}}
			return bosun.ControllerManagedBy[*testapi.Widget](mgr).Named(name).Complete(r)
		},
		Manager: func(o *ctrl.Options) {
			if ns != "" {
				o.Cache.DefaultNamespaces = map[string]cache.Config{ns: {}}
			}
			o.Controller.SkipNameValidation = ptrTo(true)
		},
	}
}

// freeAddr returns a loopback address with a free port.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// useKubeconfig points ctrl.GetConfig at cp for the rest of the test.
func useKubeconfig(t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(path); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", path)
	// The --kubeconfig flag, when set, wins over KUBECONFIG.
	if f := flagKubeconfig(); f != "" {
		t.Fatalf("--kubeconfig is set to %q", f)
	}
}

func flagKubeconfig() string {
	if f := flagLookup(config.KubeconfigFlagName); f != nil {
		return f.Value.String()
	}
	return ""
}

// running is an operator started by start.
type running struct {
	cancel context.CancelFunc
	done   chan error
	out    *syncBuffer
}

// start runs opts with flags until the test ends or stop is called.
func start(t *testing.T, opts operator.Options, flags operator.Flags) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan error, 1), out: &syncBuffer{}}
	go func() { r.done <- operator.Run(ctx, opts, flags, r.out) }()
	t.Cleanup(func() { _ = r.stop(time.Minute) })
	return r
}

// stop cancels the operator's context, as SIGTERM does, and waits at most
// wait for Run to return.
func (r *running) stop(wait time.Duration) error {
	r.cancel()
	select {
	case err := <-r.done:
		r.done <- err
		return err
	case <-time.After(wait):
		return fmt.Errorf("operator still running %s after its context ended", wait)
	}
}

// TestRunProbesLeaderElectionAndShutdown runs an operator as a deployment
// would: with leader election and probes. /healthz answers, /readyz does
// once the caches have synced, the Lease names the leader, Widgets are
// reconciled, and cancelling the context (SIGTERM) stops it within the
// graceful shutdown timeout and releases the Lease for a standby.
func TestRunProbesLeaderElectionAndShutdown(t *testing.T) {
	cp := shared.ControlPlane(t)
	useKubeconfig(t, cp)
	ns := bosuntest.Namespace(t, cp.Client)

	flags := operator.DefaultFlags()
	flags.ProbeAddr = freeAddr(t)
	flags.LeaderElect = true
	flags.LeaderElectionID = "widgets-" + ns
	flags.LeaderElectionNamespace = ns
	flags.GracefulShutdownTimeout = 10 * time.Second
	r := start(t, widgets("widgets", ns), flags)

	for _, path := range []string{"/healthz", "/readyz"} {
		bosuntest.Eventually(t, func(ctx context.Context) error { return get200(ctx, "http://"+flags.ProbeAddr+path) })
	}
	lease := &coordinationv1.Lease{}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: flags.LeaderElectionID}, lease); err != nil {
			return err
		}
		if h := lease.Spec.HolderIdentity; h == nil || *h == "" {
			return errors.New("the Lease has no holder")
		}
		return nil
	})

	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Spec: testapi.WidgetSpec{Value: 4}}
	if err := cp.Client.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error { return ready(ctx, cp.Client, w, 8) })

	if err := r.stop(flags.GracefulShutdownTimeout + 5*time.Second); err != nil {
		t.Fatalf("Run after SIGTERM: %v", err)
	}
	if err := cp.Client.Get(t.Context(), client.ObjectKeyFromObject(lease), lease); err != nil {
		t.Fatal(err)
	}
	if h := lease.Spec.HolderIdentity; h != nil && *h != "" {
		t.Errorf("after a clean stop the Lease is still held by %q; want it released", *h)
	}
}

// TestRunSecureMetrics: with --metrics-secure (the default) the metrics
// endpoint is HTTPS, refuses a token the API server does not accept and
// serves a ServiceAccount that RBAC allows to get /metrics.
func TestRunSecureMetrics(t *testing.T) {
	cp := shared.ControlPlane(t)
	useKubeconfig(t, cp)
	ns := bosuntest.Namespace(t, cp.Client)
	flags := operator.DefaultFlags()
	flags.ProbeAddr = "0"
	flags.MetricsAddr = freeAddr(t)
	start(t, widgets("metrics", ns), flags)

	token := metricsReaderToken(t, cp, ns)
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a test server's self-signed certificate
	scrape := func(ctx context.Context, token string) (int, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+flags.MetricsAddr+"/metrics", nil)
		if err != nil {
			return 0, "", err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := insecure.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		code, body, err := scrape(ctx, token)
		if err != nil {
			return err
		}
		if code != http.StatusOK || !strings.Contains(body, "controller_runtime_") {
			return fmt.Errorf("GET /metrics as an allowed ServiceAccount: %d %.200s", code, body)
		}
		return nil
	})
	code, body, err := scrape(t.Context(), "not-a-token")
	if err != nil {
		t.Fatal(err)
	}
	if code == http.StatusOK || strings.Contains(body, "controller_runtime_") {
		t.Errorf("GET /metrics with a bad token: %d %.200s; want it refused", code, body)
	}
}

// metricsReaderToken returns a token of a ServiceAccount in ns that a
// ClusterRole allows to get /metrics.
func metricsReaderToken(t *testing.T, cp *controlplane.ControlPlane, ns string) string {
	t.Helper()
	ctx := t.Context()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "scraper"}}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader-" + ns},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader-" + ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa.Name}},
	}
	for _, o := range []client.Object{sa, role, binding} {
		if err := cp.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = cp.Client.Delete(context.Background(), binding)
		_ = cp.Client.Delete(context.Background(), role)
	})
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a ServiceAccount token: %v", err)
	}
	return tr.Status.Token
}

// TestRunDev runs an operator with --dev: it starts its own control plane,
// installs the CRDs, writes a kubeconfig that reaches it, creates the
// samples, reconciles them, and stops the control plane when it ends.
func TestRunDev(t *testing.T) {
	flags := operator.DefaultFlags()
	flags.Dev = true
	flags.ProbeAddr = "0"
	flags.DevKubeconfig = filepath.Join(t.TempDir(), "dev", "kubeconfig")
	r := start(t, widgets("dev", ""), flags)

	c := devClient(t, flags)
	sample := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "sample"}}
	bosuntest.Eventually(t, func(ctx context.Context) error { return ready(ctx, c, sample, 42) })
	// --dev-workloads is on by default: the workload controllers and two
	// simulated nodes run.
	nodes := &corev1.NodeList{}
	if err := c.List(t.Context(), nodes); err != nil {
		t.Fatal(err)
	}
	running, err := controlplane.RunningControllers(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 2 || !slices.Contains(running, "deployment-controller") {
		t.Errorf("--dev runs %d nodes and the controllers %v; want 2 and the workload controllers", len(nodes.Items), running)
	}
	if err := r.stop(time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kubeconfig: ", "created sample", "stopping the control plane", "2 simulated nodes"} {
		if !strings.Contains(r.out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, r.out.String())
		}
	}
}

// TestRunVersion prints the build information and starts nothing.
func TestRunVersion(t *testing.T) {
	flags := operator.DefaultFlags()
	flags.Version = true
	var out bytes.Buffer
	if err := operator.Run(t.Context(), widgets("v", ""), flags, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "module:") {
		t.Errorf("--version printed %q; want the build information", out.String())
	}
}

// ready checks that w is Ready with result want.
func ready(ctx context.Context, c client.Client, w *testapi.Widget, want int64) error {
	if err := c.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
		return err
	}
	if !meta.IsStatusConditionTrue(w.Status.Conditions, conditions.TypeReady) || w.Status.Result != want {
		return fmt.Errorf("widget %s: result %d, conditions %v; want Ready with %d", w.Name, w.Status.Result, w.Status.Conditions, want)
	}
	return nil
}

// get200 GETs url and wants 200 OK.
func get200(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestMainDevSecondSignal runs an operator process with --dev and sends it
// SIGINT twice, as an impatient Ctrl-C does: the process exits at once and
// still stops its control plane, whose processes run in groups of their
// own that the signals do not reach.
func TestMainDevSecondSignal(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	out := &syncBuffer{}
	cmd := exec.Command(exe, "--dev", "--dev-kubeconfig", kubeconfig, "--health-probe-bind-address", "0", "--graceful-shutdown-timeout", "1m")
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	bosuntest.Eventually(t, func(context.Context) error {
		if !strings.Contains(out.String(), "created sample") {
			return errors.New("no sample created yet")
		}
		return nil
	}, bosuntest.Timeout(5*time.Minute))
	cfg, err := clientConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme(t)})
	if err != nil {
		t.Fatal(err)
	}

	for range 2 {
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-waited:
		t.Logf("operator process exited: %v", err)
	case <-time.After(time.Minute):
		t.Fatalf("the process still runs a minute after two signals:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "stopping the control plane") {
		t.Errorf("output lacks %q:\n%s", "stopping the control plane", out.String())
	}
	// The API server is gone.
	var ns corev1.NamespaceList
	if err := c.List(t.Context(), &ns); err == nil {
		t.Errorf("the control plane still answers after the process exited")
	}
}

// withWebhooks adds to opts a Widget webhook that defaults spec.mode to
// fast and refuses a negative divisor, and its configurations.
func withWebhooks(opts operator.Options) operator.Options {
	setup := opts.Setup
	opts.Setup = func(mgr ctrl.Manager) error {
		if err := setup(mgr); err != nil {
			return err
		}
		return (&webhook.Kind[*testapi.Widget]{
			Default: func(_ context.Context, w *testapi.Widget) error {
				if w.Spec.Mode == "" {
					w.Spec.Mode = "fast"
				}
				return nil
			},
			Validate: func(_ context.Context, _, w *testapi.Widget) (webhook.Warnings, field.ErrorList) {
				if w.Spec.Divisor < 0 {
					return nil, field.ErrorList{field.Invalid(field.NewPath("spec", "divisor"), w.Spec.Divisor, "must not be negative")}
				}
				return nil, nil
			},
		}).SetupWithManager(mgr)
	}
	opts.Webhooks = func() ([]client.Object, error) { return testapi.WidgetWebhooks(), nil }
	return opts
}

// admitted checks that c's API server calls the webhooks of withWebhooks:
// a new Widget is defaulted and a negative divisor refused.
func admitted(t *testing.T, c client.Client, ns string) {
	t.Helper()
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "admitted"}}
	if err := c.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	if w.Spec.Mode != "fast" {
		t.Errorf("spec.mode = %q after create, want the default fast", w.Spec.Mode)
	}
	bad := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "refused"}, Spec: testapi.WidgetSpec{Divisor: -1}}
	if err := c.Create(t.Context(), bad); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.divisor") {
		t.Errorf("create with a negative divisor: %v, want 422 naming spec.divisor", err)
	}
}

// TestRunDevServesWebhooks runs an operator with webhooks under --dev: the
// configurations are installed and trusted with no step from the user, the
// sample is defaulted on its way in, and bad input is refused.
func TestRunDevServesWebhooks(t *testing.T) {
	flags := operator.DefaultFlags()
	flags.Dev, flags.DevWorkloads = true, false
	flags.ProbeAddr = "0"
	flags.DevKubeconfig = filepath.Join(t.TempDir(), "dev", "kubeconfig")
	start(t, withWebhooks(widgets("devhooks", "")), flags)

	c := devClient(t, flags)
	sample := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "sample"}}
	bosuntest.Eventually(t, func(ctx context.Context) error { return ready(ctx, c, sample, 42) })
	if sample.Spec.Mode != "fast" {
		t.Errorf("the sample's spec.mode is %q, want fast from the defaulting webhook", sample.Spec.Mode)
	}
	admitted(t, c, "default")
}

// TestRunWebhookFlags runs an operator as deployed: the webhook server
// listens on --webhook-port with the certificate in --webhook-cert-path,
// which the cluster's configurations trust, and /readyz waits for it.
func TestRunWebhookFlags(t *testing.T) {
	opts, err := testapi.ControlPlaneOptions()
	if err != nil {
		t.Fatal(err)
	}
	opts.Webhooks = testapi.WidgetWebhooks()
	cp := bosuntest.Start(t, opts)
	useKubeconfig(t, cp)
	ns := bosuntest.Namespace(t, cp.Client)

	flags := operator.DefaultFlags()
	flags.ProbeAddr = freeAddr(t)
	flags.WebhookPort = cp.WebhookServer.Port
	flags.WebhookCertPath = cp.WebhookServer.CertDir
	start(t, withWebhooks(widgets("hooks", ns)), flags)
	bosuntest.Eventually(t, func(ctx context.Context) error {
		return get200(ctx, "http://"+flags.ProbeAddr+"/readyz/webhooks")
	})
	admitted(t, cp.Client, ns)
}

// devClient waits for the kubeconfig --dev writes and returns a client of
// its control plane.
func devClient(t *testing.T, flags operator.Flags) client.Client {
	t.Helper()
	var c client.Client
	bosuntest.Eventually(t, func(context.Context) error {
		if _, err := os.Stat(flags.DevKubeconfig); err != nil {
			return err
		}
		cfg, err := clientConfig(flags.DevKubeconfig)
		if err != nil {
			return err
		}
		c, err = client.New(cfg, client.Options{Scheme: scheme(t)})
		return err
	}, bosuntest.Timeout(5*time.Minute))
	return c
}

// TestRunConfig: Options.Config finds the cluster in place of
// --kubeconfig and KUBECONFIG, which point nowhere here; its error is
// Run's.
func TestRunConfig(t *testing.T) {
	cp := shared.ControlPlane(t)
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "missing"))
	ns := bosuntest.Namespace(t, cp.Client)

	refused := errors.New("no cluster for this test")
	opts := widgets("widgets-config", ns)
	opts.Config = func() (*rest.Config, error) { return nil, refused }
	flags := operator.DefaultFlags()
	flags.ProbeAddr = freeAddr(t)
	if err := operator.Run(t.Context(), opts, flags, io.Discard); !errors.Is(err, refused) {
		t.Fatalf("Run with a Config that fails: %v, want its error", err)
	}

	opts.Config = func() (*rest.Config, error) { return rest.CopyConfig(cp.Config), nil }
	start(t, opts, flags)
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Spec: testapi.WidgetSpec{Value: 3}}
	if err := cp.Client.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error { return ready(ctx, cp.Client, w, 6) })
}

// TestAllowMassDeletionFlag runs an operator with --allow-mass-deletion:
// the manager its Setup is given carries the switch, which every bosun
// reconciler on it reads (bosun.TestMassDeletionHeldWhileTheCRDIsDeleted
// shows what it lets go on); without the flag it is off.
func TestAllowMassDeletionFlag(t *testing.T) {
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	for _, args := range [][]string{nil, {"--allow-mass-deletion"}} {
		fs := flag.NewFlagSet("operator", flag.ContinueOnError)
		flags := operator.DefaultFlags()
		flags.Bind(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		flags.ProbeAddr, flags.MetricsAddr = freeAddr(t), "0"
		opts := widgets("widgets-mass", ns)
		opts.Config = func() (*rest.Config, error) { return rest.CopyConfig(cp.Config), nil }
		seen := make(chan bool, 1)
		setup := opts.Setup
		opts.Setup = func(mgr ctrl.Manager) error {
			seen <- bosun.ObservationOf(mgr).AllowMassDeletion
			return setup(mgr)
		}
		r := start(t, opts, flags)
		select {
		case got := <-seen:
			if want := len(args) > 0; got != want {
				t.Errorf("flags %v: Observation.AllowMassDeletion %v, want %v", args, got, want)
			}
		case err := <-r.done:
			t.Fatalf("flags %v: the operator stopped before its setup: %v", args, err)
		}
		if err := r.stop(time.Minute); err != nil {
			t.Fatal(err)
		}
	}
}
