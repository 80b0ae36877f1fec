package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/bosunkit/bosun/examples/trust"
	trustwebhook "github.com/bosunkit/bosun/examples/trust/config/webhook"
	"github.com/bosunkit/bosun/operator"
)

// leaderElectionID is trust-manager's Lease: one of the two operators
// leads at a time.
const leaderElectionID = "trust-manager-leader-election"

// commandLine holds trust-manager's flags, and bosun's few.
type commandLine struct {
	// App.
	readinessPort  int
	readinessPath  string
	leaderElect    bool
	leaseDuration  time.Duration
	renewDeadline  time.Duration
	metricsPort    int
	trustNamespace string
	// Bundle.
	defaultPackage   string
	secretTargets    bool
	filterExpired    bool
	filterNonCA      bool
	targetNamespaces []string
	// Logging.
	logFormat string
	logLevel  int
	// Webhook and its TLS.
	webhookHost    string
	webhookPort    int
	webhookCertDir string
	tlsMinVersion  string
	tlsCiphers     []string
	tlsCurves      []int32
	// Kubernetes: kubectl's connection flags.
	kubeconfig string
	cacheDir   string
	overrides  clientcmd.ConfigOverrides
	// bosun's.
	dev, plan, version bool
}

// bindFlags binds trust-manager's flags, with its names and defaults, and
// --dev, --plan and --version, to fs.
func bindFlags(fs *pflag.FlagSet) *commandLine {
	c := &commandLine{}
	fs.IntVar(&c.readinessPort, "readiness-probe-port", 6060, "Port of the readiness probe.")
	fs.StringVar(&c.readinessPath, "readiness-probe-path", "/readyz", "HTTP path of the readiness probe.")
	fs.BoolVar(&c.leaderElect, "leader-elect", true, "Elect a leader among the replicas (on trust-manager's Lease), so that one reconciles at a time.")
	fs.DurationVar(&c.leaseDuration, "leader-election-lease-duration", 15*time.Second, "How long a leader's Lease lasts unrenewed.")
	fs.DurationVar(&c.renewDeadline, "leader-election-renew-deadline", 10*time.Second, "How long the leader tries to renew its Lease before it gives up leading.")
	fs.IntVar(&c.metricsPort, "metrics-port", 9402, "Port of the Prometheus metrics, served over HTTP on 0.0.0.0 at /metrics.")

	fs.StringVar(&c.trustNamespace, "trust-namespace", "cert-manager", "Namespace of the source ConfigMaps and Secrets.")
	fs.StringVar(&c.defaultPackage, "default-package-location", "", "JSON file of the default CA package, for useDefaultCAs sources; when set, it must load.")
	fs.BoolVar(&c.secretTargets, "secret-targets-enabled", false, "Allow Secret targets.")
	fs.BoolVar(&c.filterExpired, "filter-expired-certificates", false, "Leave expired certificates out of the bundles.")
	fs.BoolVar(&c.filterNonCA, "filter-non-ca-certs", false, "Leave certificates that are not CAs out of the bundles.")
	fs.StringSliceVar(&c.targetNamespaces, "target-namespaces", nil, "Comma-separated namespaces, the only ones targets are written to (and cached from).")

	fs.StringVar(&c.logFormat, "log-format", "text", "Log format: text or json.")
	fs.IntVarP(&c.logLevel, "log-level", "v", 1, "Log verbosity (1-5).")

	fs.StringVar(&c.webhookHost, "webhook-host", "0.0.0.0", "Host the webhook server listens on.")
	fs.IntVar(&c.webhookPort, "webhook-port", 6443, "Port the webhook server listens on.")
	fs.StringVar(&c.webhookCertDir, "webhook-certificate-dir", "/tls", "Directory of the webhook server's tls.crt and tls.key.")
	fs.StringVar(&c.tlsMinVersion, "tls-min-version", "", "Minimum TLS version of the webhook server (VersionTLS10 to VersionTLS13); Go's default when empty.")
	fs.StringSliceVar(&c.tlsCiphers, "tls-cipher-suites", nil, "Comma-separated cipher suites of the webhook server, by Go's names (TLS 1.2); Go's default when empty.")
	fs.Int32SliceVar(&c.tlsCurves, "tls-curve-preferences", nil, "Comma-separated numeric crypto/tls CurveIDs of the webhook server; Go's default when empty.")

	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "Path to the kubeconfig file; in-cluster configuration, then ~/.kube/config, when empty.")
	fs.StringVar(&c.cacheDir, "cache-dir", "", "Accepted for kubectl's flags; the operator keeps no discovery cache on disk.")
	clientcmd.BindOverrideFlags(&c.overrides, fs, clientcmd.RecommendedConfigOverrideFlags(""))

	fs.BoolVar(&c.dev, "dev", false, "Run against an embedded control plane with a sample Bundle (a development build, -tags bosundev).")
	fs.BoolVar(&c.plan, "plan", false, "Print what one pass over every Bundle would change, change nothing, and exit.")
	fs.BoolVar(&c.version, "version", false, "Print what the binary was built from and exit.")
	return c
}

// operator returns the operator and the flags of operator.Run that the
// command line asks for.
func (c *commandLine) operator() (operator.Options, operator.Flags, error) {
	topts := trust.Options{
		TrustNamespace:            c.trustNamespace,
		SecretTargetsEnabled:      c.secretTargets,
		FilterExpiredCertificates: c.filterExpired,
		FilterNonCACerts:          c.filterNonCA,
		TargetNamespaces:          c.targetNamespaces,
	}
	if c.defaultPackage != "" && !c.version {
		pkg, err := trust.ReadDefaultPackage(c.defaultPackage)
		if err != nil {
			return operator.Options{}, operator.Flags{}, fmt.Errorf("--default-package-location: %w", err)
		}
		topts.DefaultPackage = pkg
	}
	tlsOpts, err := c.tlsOptions()
	if err != nil {
		return operator.Options{}, operator.Flags{}, err
	}
	if c.logFormat != "text" && c.logFormat != "json" {
		return operator.Options{}, operator.Flags{}, fmt.Errorf("--log-format %q: want text or json", c.logFormat)
	}

	flags := operator.DefaultFlags()
	flags.MetricsAddr = "0.0.0.0:" + strconv.Itoa(c.metricsPort)
	flags.SecureMetrics = false
	flags.ProbeAddr = "0.0.0.0:" + strconv.Itoa(c.readinessPort)
	flags.LeaderElect = c.leaderElect
	flags.LeaderElectionID = leaderElectionID
	flags.LeaseDuration = c.leaseDuration
	flags.RenewDeadline = c.renewDeadline
	flags.WebhookPort = c.webhookPort
	flags.WebhookCertPath = c.webhookCertDir
	flags.Dev, flags.Plan, flags.Version = c.dev, c.plan, c.version
	// zap's levels are int8: a verbosity past the most verbose level is
	// that level, as trust-manager's slog levels have no bound.
	flags.Zap = zap.Options{Level: zapcore.Level(-min(max(c.logLevel, -int(zapcore.FatalLevel)), 127))}
	if c.logFormat == "json" {
		zap.JSONEncoder()(&flags.Zap)
	} else {
		zap.ConsoleEncoder()(&flags.Zap)
	}

	opts := operator.Options{
		Name:        "trust",
		AddToScheme: trust.AddToScheme,
		CRDs:        trust.CRDs,
		Webhooks:    trustwebhook.Configurations,
		Samples:     trust.Samples,
		Prepare: func(ctx context.Context, cl client.Client, _ string) error {
			return trust.PrepareSamples(ctx, cl, c.trustNamespace)
		},
		Config: c.restConfig,
		Manager: func(o *ctrl.Options) {
			trust.CacheOptions(topts)(o)
			o.ReadinessEndpointName = c.readinessPath
			if s, ok := o.WebhookServer.(*webhook.DefaultServer); ok && !c.dev {
				s.Options.Host = c.webhookHost
				s.Options.TLSOpts = append(s.Options.TLSOpts, tlsOpts...)
			}
		},
		Setup: func(mgr ctrl.Manager) error {
			if err := mgr.AddHealthzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
				return err
			}
			if err := trust.SetupWebhookWithManager(mgr); err != nil {
				return err
			}
			return trust.SetupWithManager(mgr, topts)
		},
	}
	return opts, flags, nil
}

// restConfig finds the cluster as kubectl and trust-manager do with the
// same flags: the --kubeconfig file, else those of KUBECONFIG or
// ~/.kube/config, else in-cluster configuration; with the overrides of
// the other connection flags.
func (c *commandLine) restConfig() (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = c.kubeconfig
	overrides := c.overrides
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("finding the cluster: %w", err)
	}
	if cfg.QPS == 0 {
		// As controller-runtime's GetConfig: no client-side rate limit,
		// the API server's priority and fairness instead. trust-manager
		// keeps client-go's default of 5 requests a second.
		cfg.QPS, cfg.Burst = -1, -1
	}
	return cfg, nil
}

// tlsOptions returns the webhook server's TLS settings of --tls-*.
func (c *commandLine) tlsOptions() ([]func(*tls.Config), error) {
	var opts []func(*tls.Config)
	if c.tlsMinVersion != "" {
		v, ok := tlsVersions[c.tlsMinVersion]
		if !ok {
			return nil, fmt.Errorf("--tls-min-version %q: want one of VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13", c.tlsMinVersion)
		}
		opts = append(opts, func(t *tls.Config) { t.MinVersion = v })
	}
	if len(c.tlsCiphers) > 0 {
		ids := make([]uint16, 0, len(c.tlsCiphers))
		for _, name := range c.tlsCiphers {
			id, ok := cipherSuite(name)
			if !ok {
				return nil, fmt.Errorf("--tls-cipher-suites: unknown cipher suite %q", name)
			}
			ids = append(ids, id)
		}
		opts = append(opts, func(t *tls.Config) { t.CipherSuites = ids })
	}
	if len(c.tlsCurves) > 0 {
		curves := make([]tls.CurveID, 0, len(c.tlsCurves))
		for _, id := range c.tlsCurves {
			// As trust-manager: an ID of 16 bits, once, of a curve Go
			// knows.
			if id < 1 || id > math.MaxUint16 {
				return nil, fmt.Errorf("--tls-curve-preferences: %d is out of range (1-%d)", id, math.MaxUint16)
			}
			curve := tls.CurveID(id)
			if slices.Contains(curves, curve) {
				return nil, fmt.Errorf("--tls-curve-preferences: %d is given twice", id)
			}
			if strings.HasPrefix(curve.String(), "CurveID(") {
				return nil, fmt.Errorf("--tls-curve-preferences: %d is not a curve this build of Go supports", id)
			}
			curves = append(curves, curve)
		}
		opts = append(opts, func(t *tls.Config) { t.CurvePreferences = curves })
	}
	return opts, nil
}

// formerCipherNames are the names, without their hash, that the ChaCha20
// suites had before Go named them after RFC 8446.
var formerCipherNames = map[string]uint16{
	"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305":   tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305": tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
}

// tlsVersions are the values of --tls-min-version.
var tlsVersions = map[string]uint16{
	"VersionTLS10": tls.VersionTLS10,
	"VersionTLS11": tls.VersionTLS11,
	"VersionTLS12": tls.VersionTLS12,
	"VersionTLS13": tls.VersionTLS13,
}

// cipherSuite returns the ID of the cipher suite Go names name, secure or
// not, or that trust-manager (and kube-apiserver) still know by an older
// name.
func cipherSuite(name string) (uint16, bool) {
	if id, ok := formerCipherNames[name]; ok {
		return id, true
	}
	for _, list := range [][]*tls.CipherSuite{tls.CipherSuites(), tls.InsecureCipherSuites()} {
		for _, s := range list {
			if s.Name == name {
				return s.ID, true
			}
		}
	}
	return 0, false
}
