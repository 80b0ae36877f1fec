package bosuntest

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/tuning"
)

const (
	// EnvTuning is the environment variable that, set to "on", turns on
	// bosun's tuning (tuning.Enable) in the managers of RunManager and its
	// kin, after ManagerOptions.Configure: `make test-tuned` runs the
	// engine's tests so, to hold them with tuning on as well as off.
	EnvTuning = "BOSUN_TUNING"

	// LogVerbosity is the highest logr V-level that RunManager passes to
	// t.Log: info messages, errors and V(1) details.
	LogVerbosity = 1

	// cacheSyncTimeout bounds how long RunManager waits for the manager's
	// caches to fill.
	cacheSyncTimeout = time.Minute
	// shutdownTimeout bounds how long runnables get to stop at cleanup.
	shutdownTimeout = 30 * time.Second
)

// RunManager creates a manager on cp, lets setup register controllers (and
// anything else) with it, starts it, waits for its caches to sync and returns
// it. The manager stops, and is waited for, when the test finishes; an error
// from its Start fails the test.
//
// The manager uses cp.Config and cp.Scheme, serves neither metrics nor health
// probes, serves webhooks that setup registers (see package webhook) where
// cp's webhook configurations and conversions call them (one manager per
// control plane may), allows several controllers of the same name (so each test may
// register its own), and logs to t.Log up to LogVerbosity. setup may be nil.
func RunManager(t TB, cp *controlplane.ControlPlane, setup func(mgr ctrl.Manager) error) ctrl.Manager {
	t.Helper()
	return RunManagerWith(t, cp, ManagerOptions{}, setup)
}

// ManagerOptions change the manager RunManagerWith makes.
type ManagerOptions struct {
	// User, when set, is the user the manager connects as, provisioned as
	// RunManagerAs does: it has only the permissions RBAC binds to it.
	User string
	// Namespaces, when set, limit the manager's cache to these namespaces,
	// as an operator with a Role in each (and no ClusterRole) runs.
	Namespaces []string
	// Configure, when set, changes the manager's options last.
	Configure func(*ctrl.Options)
}

// RunManagerAs is RunManager with the manager connecting as user, a user of
// cp that RunManagerAs provisions (see controlplane.ControlPlane.AddUser)
// and that has no permissions but those bound to it by RBAC. Use it to show
// that a controller needs no more than the roles its RBAC markers generate.
func RunManagerAs(t TB, cp *controlplane.ControlPlane, user string, setup func(mgr ctrl.Manager) error) ctrl.Manager {
	t.Helper()
	return RunManagerWith(t, cp, ManagerOptions{User: user}, setup)
}

// RunManagerWith is RunManager with the changes opts makes: the user the
// manager connects as, the namespaces its cache sees, any other option.
func RunManagerWith(t TB, cp *controlplane.ControlPlane, opts ManagerOptions, setup func(mgr ctrl.Manager) error) ctrl.Manager {
	t.Helper()
	cfg := cp.Config
	if opts.User != "" {
		var err error
		if cfg, err = cp.AddUser(opts.User); err != nil {
			t.Fatalf("bosuntest: %v", err)
		}
	}
	logger, quiet := TestLogger(t)
	mopts, hooks := managerOptions(cp, opts, logger)
	mgr, err := ctrl.NewManager(cfg, mopts)
	if err != nil {
		t.Fatalf("bosuntest: creating manager: %v", err)
	}
	// The manager carries an Observation, as an operator's does, so that
	// a test can watch the passes of its reconcilers.
	mgr = new(bosun.Observation).Attach(mgr)
	if setup != nil {
		if err := setup(mgr); err != nil {
			t.Fatalf("bosuntest: setting up manager: %v", err)
		}
	}

	ctx, cancel := context.WithCancel(logr.NewContext(context.Background(), logger))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			// Safe: cleanup below waits for done before the test ends.
			t.Errorf("bosuntest: manager stopped with an error: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		quiet()
	})

	syncCtx, cancelSync := context.WithTimeout(ctx, cacheSyncTimeout)
	defer cancelSync()
	go func() {
		select {
		case <-done: // the manager gave up: stop waiting for its caches
			cancelSync()
		case <-syncCtx.Done():
		}
	}()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		select {
		case <-done:
			t.Fatal("bosuntest: manager stopped before its caches synced")
		default:
			t.Fatalf("bosuntest: manager caches did not sync within %s", cacheSyncTimeout)
		}
	}
	if hooks.registered.Load() {
		if err := hooks.waitServing(syncCtx); err != nil {
			t.Fatalf("bosuntest: the manager's webhook server did not start: %v", err)
		}
	}
	return mgr
}

// managerOptions returns the options of a manager of RunManagerWith, and
// its webhook server.
func managerOptions(cp *controlplane.ControlPlane, opts ManagerOptions, logger logr.Logger) (ctrl.Options, *webhookServer) {
	mopts := ctrl.Options{
		Scheme:                  cp.Scheme,
		Logger:                  logger,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		Controller:              config.Controller{SkipNameValidation: ptr.To(true)},
		GracefulShutdownTimeout: ptr.To(shutdownTimeout),
	}
	hooks := &webhookServer{Server: webhook.NewServer(cp.WebhookServer)}
	mopts.WebhookServer = hooks
	if len(opts.Namespaces) > 0 {
		mopts.Cache.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range opts.Namespaces {
			mopts.Cache.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	if opts.Configure != nil {
		opts.Configure(&mopts)
	}
	if os.Getenv(EnvTuning) == "on" {
		tuning.Enable(&mopts)
	}
	return mopts, hooks
}

// TestLogger returns a logger that writes to t.Log up to LogVerbosity, as
// the managers of RunManager do, and a function after which it drops
// lines: goroutines of a stopped manager must not log to a finished test.
func TestLogger(t TB) (logr.Logger, func()) {
	sink := &testSink{t: t}
	return testr.NewWithInterface(sink, testr.Options{LogTimestamp: true, Verbosity: LogVerbosity}), sink.close
}

// testSink forwards log lines to a test until close, after which it drops
// them: goroutines of a stopped manager must not log to a finished test.
type testSink struct {
	t TB

	mu     sync.Mutex
	closed bool
}

var _ testr.TestingT = (*testSink)(nil)

// Helper implements testr.TestingT.
func (s *testSink) Helper() { s.t.Helper() }

// Log implements testr.TestingT.
func (s *testSink) Log(args ...any) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.t.Log(args...)
	}
}

// close stops forwarding.
func (s *testSink) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
}

// webhookServer is a manager's webhook server that knows whether a webhook
// was registered with it, so that RunManager waits for it to serve only
// then.
type webhookServer struct {
	webhook.Server
	registered atomic.Bool
}

// Register implements webhook.Server.
func (s *webhookServer) Register(path string, hook http.Handler) {
	s.registered.Store(true)
	s.Server.Register(path, hook)
}

// waitServing waits until the server answers TLS connections.
func (s *webhookServer) waitServing(ctx context.Context) error {
	check := s.StartedChecker()
	var last error
	err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
		last = check(nil)
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("%w (last check: %w)", err, last)
	}
	return nil
}
