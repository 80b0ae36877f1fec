package bosuntest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/bosunkit/bosun/controlplane"
)

// buildAllowance is how long a first build of the control plane binaries may
// take; Start warns when a test's deadline is closer than that.
const buildAllowance = 15 * time.Minute

// deadliner is implemented by *testing.T.
type deadliner interface {
	Deadline() (time.Time, bool)
}

// Start starts a control plane for the calling test and stops it when the
// test and its subtests have finished. Progress of a first build of the
// binaries goes to os.Stderr unless opts.Progress is set. Start fails the
// test, saying why and how to fix it, if the control plane cannot start.
func Start(t TB, opts controlplane.Options) *controlplane.ControlPlane {
	t.Helper()
	setGlobalLogger()
	if opts.Progress == nil {
		opts.Progress = os.Stderr
	}
	if d, ok := t.(deadliner); ok {
		warnIfBuildMayTimeOut(t, d, opts)
	}
	cp, err := controlplane.Start(t.Context(), opts)
	if err != nil {
		t.Fatalf("bosuntest: starting the control plane: %v", err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("bosuntest: %v", err)
		}
	})
	return cp
}

// warnIfBuildMayTimeOut logs a hint when binaries that a control plane
// started with opts runs still have to be built and the test binary's
// -timeout may end the test first.
func warnIfBuildMayTimeOut(t TB, d deadliner, opts controlplane.Options) {
	t.Helper()
	deadline, ok := d.Deadline()
	if !ok || time.Until(deadline) > buildAllowance || controlplane.BinariesReady(opts) {
		return
	}
	t.Logf("bosuntest: the control plane binaries are not built yet and this test ends in %s; "+
		"if it times out while building, run `bosun controlplane` once or raise go test's -timeout",
		time.Until(deadline).Round(time.Second))
}

// Shared is one control plane for all the tests of a package. The first test
// that asks for it starts it, so tests that need none (unit tests, fuzz
// workers) never pay for it; Main stops it after the last test. A package
// whose tests need garbage collection, namespace deletion or the workload
// controllers sets controlplane.Options.ControllerManager in Options, and
// one whose tests need pods to run sets controlplane.Options.Nodes.
//
//	var shared = bosuntest.Shared{Options: func() (controlplane.Options, error) {
//		return controlplane.Options{CRDPaths: []string{"../config/crd"}}, nil
//	}}
//
//	func TestMain(m *testing.M) { shared.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		cp := shared.ControlPlane(t)
//		...
//	}
type Shared struct {
	// Options returns the options to start the control plane with. It is
	// called once, on first use; nil means the zero Options.
	Options func() (controlplane.Options, error)
	// Webhooks, when set, registers the webhooks (package webhook) that a
	// manager of its own serves at the control plane's webhook server from
	// its start until Stop, whatever managers the tests run: with
	// controlplane.Options.Webhooks of failure policy Fail, a write of the
	// kind between two tests, or by the garbage collector, still needs an
	// answer, and a kind of several versions needs its conversions. The
	// tests' own managers then must not register the same webhooks.
	Webhooks func(ctrl.Manager) error

	mu      sync.Mutex
	started bool
	cp      *controlplane.ControlPlane
	err     error
	// stopHooks stops the manager serving Webhooks.
	stopHooks func() error
}

// ControlPlane returns the shared control plane, starting it on first use.
// It fails the test, saying why, when the control plane cannot start; every
// later caller fails with the same error without trying again.
func (s *Shared) ControlPlane(t TB) *controlplane.ControlPlane {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		s.started = true
		s.cp, s.err = s.start(t)
	}
	if s.err != nil {
		t.Fatalf("bosuntest: starting the shared control plane: %v", s.err)
	}
	return s.cp
}

func (s *Shared) start(t TB) (*controlplane.ControlPlane, error) {
	t.Helper()
	setGlobalLogger()
	var opts controlplane.Options
	if s.Options != nil {
		var err error
		if opts, err = s.Options(); err != nil {
			return nil, fmt.Errorf("options: %w", err)
		}
	}
	if d, ok := t.(deadliner); ok {
		warnIfBuildMayTimeOut(t, d, opts)
	}
	if opts.Progress == nil {
		opts.Progress = os.Stderr
	}
	// The control plane outlives any one test, so it is not tied to a
	// test's context; Stop ends it.
	cp, err := controlplane.Start(context.Background(), opts)
	if err != nil || s.Webhooks == nil {
		return cp, err
	}
	if s.stopHooks, err = serveWebhooks(cp, s.Webhooks); err != nil {
		return nil, errors.Join(fmt.Errorf("serving the webhooks: %w", err), cp.Stop())
	}
	return cp, nil
}

// serveWebhooks runs a manager on cp that serves the webhooks register
// registers, until the returned function stops it, and waits until they
// answer.
func serveWebhooks(cp *controlplane.ControlPlane, register func(ctrl.Manager) error) (func() error, error) {
	hooks := &webhookServer{Server: webhook.NewServer(cp.WebhookServer)}
	mgr, err := ctrl.NewManager(cp.Config, ctrl.Options{
		Scheme:                 cp.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          hooks,
	})
	if err != nil {
		return nil, err
	}
	if err := register(mgr); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stop := sync.OnceValue(func() error {
		cancel()
		return <-done
	})
	waitCtx, cancelWait := context.WithTimeout(ctx, cacheSyncTimeout)
	defer cancelWait()
	if err := hooks.waitServing(waitCtx); err != nil {
		return nil, errors.Join(err, stop())
	}
	return stop, nil
}

// Stop stops the control plane if it was started. It is safe to call more
// than once.
func (s *Shared) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cp == nil {
		return nil
	}
	var errs []error
	if s.stopHooks != nil {
		if err := s.stopHooks(); err != nil {
			errs = append(errs, fmt.Errorf("the webhook server: %w", err))
		}
		s.stopHooks = nil
	}
	errs = append(errs, s.cp.Stop())
	s.cp = nil
	return errors.Join(errs...)
}

// Main is for TestMain: it runs the package's tests, stops the control plane
// if a test started it, and exits with the tests' status (1 if stopping
// failed after passing tests).
func (s *Shared) Main(m *testing.M) {
	os.Exit(s.run(m))
}

// runner is the part of *testing.M that Main uses.
type runner interface {
	Run() int
}

func (s *Shared) run(m runner) int {
	code := m.Run()
	if err := s.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "bosuntest: stopping the shared control plane: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}
