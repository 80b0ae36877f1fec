package operator

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/bosunkit/bosun/tuning"
)

// Defaults of the flags, as in kubebuilder's scaffold where it has them;
// the fields of Flags state them.
const (
	defaultMetricsAddr             = "0"
	defaultProbeAddr               = ":8081"
	defaultGracefulShutdownTimeout = 30 * time.Second
	defaultLeaseDuration           = 15 * time.Second
	defaultRenewDeadline           = 10 * time.Second
	defaultRetryPeriod             = 2 * time.Second
	defaultDevKubeconfig           = "bin/dev.kubeconfig"
	defaultWebhookPort             = 9443
	defaultWebhookCertName         = "tls.crt"
	defaultWebhookCertKey          = "tls.key"
)

// Flags are the settings of an operator process that its command line
// chooses. Bind registers them; ManagerOptions turns them into a
// manager's options.
type Flags struct {
	// MetricsAddr is the address of the metrics endpoint; DefaultFlags
	// gives "0", which turns it off.
	MetricsAddr string
	// SecureMetrics serves metrics over HTTPS behind Kubernetes
	// authentication and authorization; true in DefaultFlags.
	SecureMetrics bool
	// EnableHTTP2 allows HTTP/2 on the metrics and webhook servers; false by
	// default.
	EnableHTTP2 bool
	// ProbeAddr is the address of /healthz and /readyz; DefaultFlags
	// gives ":8081".
	ProbeAddr string
	// LeaderElect elects a leader, so that only one replica reconciles.
	LeaderElect bool
	// LeaderElectionID names the Lease ("<Name>.bosun.dev" when empty).
	LeaderElectionID string
	// LeaderElectionNamespace is the Lease's namespace (the operator's
	// own when empty).
	LeaderElectionNamespace string
	// LeaseDuration, RenewDeadline and RetryPeriod time the leader
	// election; DefaultFlags gives 15s, 10s and 2s.
	LeaseDuration time.Duration
	// RenewDeadline: see LeaseDuration.
	RenewDeadline time.Duration
	// RetryPeriod: see LeaseDuration.
	RetryPeriod time.Duration
	// GracefulShutdownTimeout is how long runnables may take to stop
	// after SIGTERM; DefaultFlags gives 30s.
	GracefulShutdownTimeout time.Duration
	// WebhookPort is the port the webhook server listens on; DefaultFlags
	// gives 9443. The server runs only when the operator registers a
	// webhook.
	WebhookPort int
	// WebhookCertPath is the directory holding the webhook server's
	// certificate and key (a mounted Secret); empty means
	// controller-runtime's default, <temp dir>/k8s-webhook-server/serving-certs.
	// The server reloads them when they change, so a rotated certificate
	// needs no restart.
	WebhookCertPath string
	// WebhookCertName and WebhookCertKey name the certificate and key files
	// in WebhookCertPath; DefaultFlags gives tls.crt and tls.key, the keys
	// of a kubernetes.io/tls Secret.
	WebhookCertName string
	// WebhookCertKey: see WebhookCertName.
	WebhookCertKey string
	// Version prints the build information and exits.
	Version bool
	// Dev runs the operator against an embedded control plane, writing
	// its kubeconfig to DevKubeconfig.
	Dev bool
	// DevKubeconfig is where Dev writes its kubeconfig; DefaultFlags
	// gives "bin/dev.kubeconfig".
	DevKubeconfig string
	// DevWorkloads makes Dev's control plane a cluster that runs pods:
	// kube-controller-manager with its workload controllers and garbage
	// collector, and devNodes simulated nodes (see package controlplane).
	// DefaultFlags gives true.
	DevWorkloads bool
	// Plan runs the operator once over the cluster without changing it:
	// every write goes to the API server with dryRun=All, the managed
	// steps' external creates, updates, deletes and credential repairs
	// are recorded, not made, and once every object of the operator's
	// kinds has had a pass, Run prints what each would change and
	// returns. Leader election, metrics, probes and the webhook server
	// are off.
	Plan bool
	// PlanEdit, with Plan, is a file of objects of the operator's kinds as
	// a proposed edit would leave them (YAML or JSON, one or more
	// documents, a List among them): the plan is of their passes alone,
	// each reading its object as the API server would store the edit
	// applied as kubectl apply --server-side applies it (a dry run, its
	// defaults and validation applied), and the report says what the edit
	// changes before what its pass would. The edit is not applied. "-"
	// reads the objects from the standard input.
	PlanEdit string
	// Role prints the ClusterRole that the operator's bosun reconcilers
	// derive from their steps (bosun.Reconciler.PolicyRules), named
	// manager-role and laid out as controller-gen writes
	// config/rbac/role.yaml, and returns without connecting to a cluster.
	Role bool
	// DebugPage serves the debug page of package debugpage on the metrics
	// server, under /debug/bosun/.
	DebugPage bool
	// Tuning turns on bosun's tuning beneath controller-runtime and
	// client-go (tuning.Enable): off, the operator runs on their plumbing
	// as they come, with a lean cache (tuning.LeanCache).
	Tuning bool
	// AllowMassDeletion turns the mass-deletion breaker of every bosun
	// reconciler of the operator off (bosun.Observation.AllowMassDeletion):
	// the cleanups it holds go on. For a mass deletion that is meant.
	AllowMassDeletion bool
	// Zap are the logger's flags (--zap-log-level and the others).
	Zap zap.Options
}

// DefaultFlags returns the flags' defaults.
func DefaultFlags() Flags {
	return Flags{
		MetricsAddr:             defaultMetricsAddr,
		SecureMetrics:           true,
		ProbeAddr:               defaultProbeAddr,
		LeaseDuration:           defaultLeaseDuration,
		RenewDeadline:           defaultRenewDeadline,
		RetryPeriod:             defaultRetryPeriod,
		GracefulShutdownTimeout: defaultGracefulShutdownTimeout,
		DevKubeconfig:           defaultDevKubeconfig,
		DevWorkloads:            true,
		WebhookPort:             defaultWebhookPort,
		WebhookCertName:         defaultWebhookCertName,
		WebhookCertKey:          defaultWebhookCertKey,
	}
}

// Bind registers the flags on fs, with f's values as their defaults.
func (f *Flags) Bind(fs *flag.FlagSet) {
	fs.StringVar(&f.MetricsAddr, "metrics-bind-address", f.MetricsAddr,
		`The address the metrics endpoint binds to, such as ":8443" (HTTPS) or ":8080" (HTTP with --metrics-secure=false). "0" turns it off.`)
	fs.BoolVar(&f.SecureMetrics, "metrics-secure", f.SecureMetrics,
		"Serve metrics over HTTPS, to callers the Kubernetes API authenticates and authorizes for the /metrics URL.")
	fs.BoolVar(&f.EnableHTTP2, "enable-http2", f.EnableHTTP2,
		"Allow HTTP/2 on the metrics and webhook servers; off by default against HTTP/2 stream resets (CVE-2023-44487).")
	fs.StringVar(&f.ProbeAddr, "health-probe-bind-address", f.ProbeAddr,
		`The address /healthz and /readyz bind to. "0" turns them off.`)
	fs.BoolVar(&f.LeaderElect, "leader-elect", f.LeaderElect,
		"Elect a leader through a Lease, so that of several replicas only one reconciles.")
	fs.StringVar(&f.LeaderElectionID, "leader-election-id", f.LeaderElectionID,
		"The name of the Lease; empty means <operator name>.bosun.dev.")
	fs.StringVar(&f.LeaderElectionNamespace, "leader-election-namespace", f.LeaderElectionNamespace,
		"The namespace of the Lease; empty means the namespace the operator runs in.")
	fs.DurationVar(&f.LeaseDuration, "leader-election-lease-duration", f.LeaseDuration,
		"How long a standby waits after the leader's last renewal before it takes over.")
	fs.DurationVar(&f.RenewDeadline, "leader-election-renew-deadline", f.RenewDeadline,
		"How long the leader keeps trying to renew before it gives up leading.")
	fs.DurationVar(&f.RetryPeriod, "leader-election-retry-period", f.RetryPeriod,
		"How often candidates try to acquire or renew the Lease.")
	fs.DurationVar(&f.GracefulShutdownTimeout, "graceful-shutdown-timeout", f.GracefulShutdownTimeout,
		"How long controllers and servers may take to stop after SIGTERM before the process exits anyway.")
	fs.IntVar(&f.WebhookPort, "webhook-port", f.WebhookPort,
		"The port the webhook server listens on, when the operator has webhooks.")
	fs.StringVar(&f.WebhookCertPath, "webhook-cert-path", f.WebhookCertPath,
		"The directory of the webhook server's certificate and key, such as a mounted Secret; empty means controller-runtime's default. Rotated files are reloaded.")
	fs.StringVar(&f.WebhookCertName, "webhook-cert-name", f.WebhookCertName, "The webhook certificate's file name in --webhook-cert-path.")
	fs.StringVar(&f.WebhookCertKey, "webhook-cert-key", f.WebhookCertKey, "The webhook key's file name in --webhook-cert-path.")
	fs.BoolVar(&f.Version, "version", f.Version, "Print what the binary was built from and exit.")
	fs.BoolVar(&f.Dev, "dev", f.Dev,
		"Start an embedded control plane, install the CRDs and samples, write a kubeconfig and run against it until Ctrl-C. "+
			"Only a development build has the control plane: one built with -tags bosundev and a file importing github.com/bosunkit/bosun/operator/dev (cmd/dev.go), as bosun dev builds.")
	fs.StringVar(&f.DevKubeconfig, "dev-kubeconfig", f.DevKubeconfig, "Where --dev writes the kubeconfig of its control plane.")
	fs.BoolVar(&f.DevWorkloads, "dev-workloads", f.DevWorkloads,
		"With --dev, also run kube-controller-manager (garbage collection, Deployments, Jobs and the other workload controllers), "+
			"kube-scheduler and 2 simulated nodes, so that pods run and become Ready; false starts only kube-apiserver and etcd.")
	fs.BoolVar(&f.Plan, "plan", f.Plan,
		"Run one pass over every object of the operator's kinds with every write sent as a dry run and no external resource changed, print what each object's pass would change, and exit.")
	fs.StringVar(&f.PlanEdit, "plan-edit", f.PlanEdit,
		"With --plan, plan the passes of the objects in this file (YAML or JSON; - for the standard input) as applying it with kubectl apply --server-side would leave them, without applying it.")
	fs.BoolVar(&f.Role, "role", f.Role,
		"Print the least-privilege ClusterRole the controllers' steps declare (as config/rbac/role.yaml) and exit, without connecting to a cluster.")
	fs.BoolVar(&f.DebugPage, "debug-page", f.DebugPage,
		"Serve a page of the reconcilers and their recent passes at /debug/bosun/ on the metrics server, behind the same protection as /metrics.")
	fs.BoolVar(&f.Tuning, "tuning", f.Tuning,
		"Turn on bosun's tuning beneath controller-runtime and client-go: answers trimmed on the wire, workers that start before the informers have listed, lazy log keys (docs/TUNING.md).")
	fs.BoolVar(&f.AllowMassDeletion, "allow-mass-deletion", f.AllowMassDeletion,
		"Let every cleanup go on that the mass-deletion breaker holds (objects deleted together with their CRD, their namespace, or past the breaker's count): for a mass deletion that is meant (docs/OPERATIONS.md).")
	f.Zap.BindFlags(fs)
}

// Validate reports flags that cannot work together.
func (f *Flags) Validate() error {
	switch {
	case f.LeaseDuration <= f.RenewDeadline:
		return fmt.Errorf("--leader-election-lease-duration (%s) must be longer than --leader-election-renew-deadline (%s)", f.LeaseDuration, f.RenewDeadline)
	case f.RenewDeadline <= f.RetryPeriod:
		return fmt.Errorf("--leader-election-renew-deadline (%s) must be longer than --leader-election-retry-period (%s)", f.RenewDeadline, f.RetryPeriod)
	case f.RetryPeriod <= 0:
		return fmt.Errorf("--leader-election-retry-period (%s) must be positive", f.RetryPeriod)
	case f.GracefulShutdownTimeout < 0:
		return fmt.Errorf("--graceful-shutdown-timeout (%s) must not be negative", f.GracefulShutdownTimeout)
	case f.WebhookPort <= 0 || f.WebhookPort > 65535:
		return fmt.Errorf("--webhook-port (%d) must be a port number, 1 to 65535", f.WebhookPort)
	case f.PlanEdit != "" && !f.Plan:
		return errors.New("--plan-edit plans an edit: it needs --plan")
	case f.Plan && f.Dev:
		return errors.New("--plan reports on a cluster that exists: it cannot run with --dev")
	case f.DebugPage && (f.MetricsAddr == "" || f.MetricsAddr == "0"):
		return errors.New("--debug-page is served on the metrics server: set --metrics-bind-address too")
	}
	return nil
}

// ManagerOptions returns the manager options the flags choose for the
// operator called name, with a lean cache (NewCache applies
// tuning.LeanCache: the cache keeps managedFields only for the children of
// sets), and with --tuning bosun's tuning (tuning.Enable). Options the
// flags do not cover are left zero for the caller to fill.
func (f *Flags) ManagerOptions(name string) ctrl.Options {
	var tlsOpts []func(*tls.Config)
	if !f.EnableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	metrics := metricsserver.Options{
		BindAddress:   f.MetricsAddr,
		SecureServing: f.SecureMetrics,
		TLSOpts:       tlsOpts,
	}
	if f.SecureMetrics {
		metrics.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	id := f.LeaderElectionID
	if id == "" {
		id = name + ".bosun.dev"
	}
	hooks := withTLSOpts(webhook.Options{
		Port:     f.WebhookPort,
		CertDir:  f.WebhookCertPath,
		CertName: f.WebhookCertName,
		KeyName:  f.WebhookCertKey,
	}, *f)
	lease, renew, retry, grace := f.LeaseDuration, f.RenewDeadline, f.RetryPeriod, f.GracefulShutdownTimeout
	opts := ctrl.Options{
		Metrics:                       metrics,
		HealthProbeBindAddress:        f.ProbeAddr,
		LeaderElection:                f.LeaderElect,
		LeaderElectionID:              id,
		LeaderElectionNamespace:       f.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &lease,
		RenewDeadline:                 &renew,
		RetryPeriod:                   &retry,
		GracefulShutdownTimeout:       &grace,
		WebhookServer:                 webhook.NewServer(hooks),
	}
	opts.NewCache = newLeanCache
	if f.Tuning {
		tuning.Enable(&opts)
	}
	return opts
}

// newLeanCache makes the manager's cache with tuning.LeanCache applied to
// the options the manager passes.
func newLeanCache(cfg *rest.Config, o cache.Options) (cache.Cache, error) {
	tuning.LeanCache(&o)
	return cache.New(cfg, o)
}

// withTLSOpts returns o serving HTTP/1.1 only unless f enables HTTP/2, as
// the metrics server does.
func withTLSOpts(o webhook.Options, f Flags) webhook.Options {
	if !f.EnableHTTP2 {
		o.TLSOpts = append(o.TLSOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	return o
}
