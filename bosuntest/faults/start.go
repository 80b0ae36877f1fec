package faults

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/shard"
)

// Defaults of LeaderElection.
const (
	defaultLeaseDuration = 4 * time.Second
	defaultRenewDeadline = 3 * time.Second
	defaultRetryPeriod   = 500 * time.Millisecond
)

// ScenarioLabel is the label, valued with the namespace of a scenario,
// that marks the objects of a cluster-scoped kind the scenario made,
// which no namespace tells apart from other scenarios' objects:
// RunBattery sets it on its objects of such a kind, and a process caches
// and shards only the objects of the kinds of Options.ClusterScoped that
// carry its Options.Namespace.
const ScenarioLabel = "faults.bosun.dev/scenario"

// cacheSyncTimeout bounds how long Start waits for a manager's caches.
const cacheSyncTimeout = time.Minute

// shutdownTimeout bounds how long a stopping manager's runnables get.
const shutdownTimeout = 30 * time.Second

// LeaderElection makes the processes that share an ID elect one leader
// through a Lease of the API server, as controller-runtime's managers do in
// production; only the leader runs controllers.
type LeaderElection struct {
	// ID names the Lease.
	ID string
	// Namespace holds the Lease.
	Namespace string
	// LeaseDuration, RenewDeadline and RetryPeriod are controller-runtime's
	// options of the same names; zero means 4s, 3s and 500ms, short
	// enough for tests.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// Options configures Start.
type Options struct {
	// Name names the process in its log lines; empty means "process".
	Name string
	// Plan is the faults the process runs under.
	Plan Plan
	// Logs, when set, records the manager's log, in addition to the
	// test's log.
	Logs *bosuntest.LogRecorder
	// LeaderElection, when set, makes the process take part in an
	// election.
	LeaderElection *LeaderElection
	// Namespace, when set, limits the manager's cache to that namespace
	// (and to cluster-scoped objects), so that a test's operator does not
	// act on the objects other tests left in the shared control plane.
	Namespace string
	// ClusterScoped are kinds of cluster-scoped objects, such as
	// &v1.Bundle{}, that belong to the scenario of Namespace by
	// ScenarioLabel, since a namespace cannot limit them: with Namespace
	// set, the manager caches only the objects of these kinds labelled
	// ScenarioLabel with Namespace, and the process's shard rings of these
	// kinds assign only those (shard.Options.ObjectSelector, in place of
	// ObjectNamespaces). The cluster-scoped objects of other kinds
	// (Namespaces, CRDs) are cached whole, as without it.
	ClusterScoped []client.Object
	// Manager adjusts the manager's options before it is made: a cache
	// SyncPeriod, the namespaces it caches, the controllers' workers.
	Manager func(*ctrl.Options)
	// Config, when set, is the connection to use in place of the control
	// plane's administrator, for example a user from
	// controlplane.ControlPlane.AddUser.
	Config *rest.Config
	// Shard makes the process a member of each of these rings of package
	// shard (one per kind): Start makes the Members (Process.Member)
	// before the manager, limits the manager's cache of each kind to the
	// member's share and adds the members to the manager. Identity
	// defaults to the process's Name, Namespace and ObjectNamespaces to
	// Options.Namespace (for a kind of ClusterScoped, ObjectSelector to
	// its ScenarioLabel instead), LeaseDuration to 4s. The
	// sharders run on the winner of the manager's leader election, so set
	// LeaderElection too. Setup wires each ring's controller to its member
	// (see Shard). Kinds whose objects refer to each other are best
	// sharded by namespace (shard.ByNamespace), which puts them on one
	// member: a member's cache holds only its share of each kind.
	Shard []shard.Options
	// Engine, when set, changes the options of the operator's bosun
	// reconcilers: Setup passes each reconciler's Options to
	// Process.Configure, which calls Engine on them. The matrix uses it to
	// run its cells with the kstatus conditions and a deletion deadline.
	Engine func(*bosun.Options)
}

// Start makes a manager on cp whose traffic passes through the kit under
// opts.Plan, lets setup register the operator's controllers with it, starts
// it and waits for its caches to sync (unless the process dies first). Its
// log goes to the test. The process stops, and is waited for, when the
// test ends; an error it stops with fails the test.
//
// setup gets the process too, so that it can hand External to the managed
// steps it makes:
//
//	managed.NewStep(connector, managed.WithCallHook(p.External()))
func Start(t bosuntest.TB, cp *controlplane.ControlPlane, opts Options, setup func(mgr ctrl.Manager, p *Process) error) *Process {
	t.Helper()
	logger, quiet := bosuntest.TestLogger(t)
	p, err := run(context.Background(), cp, opts, logger, quiet, setup)
	if err != nil {
		t.Fatalf("faults: %v", err)
	}
	t.Cleanup(func() {
		p.Stop()
		if err := p.Err(); err != nil {
			t.Errorf("faults: manager %s stopped with an error: %v", p.name, err)
		}
	})
	return p
}

// Run is Start for code that is not a test: the manager logs to logger
// (named after the process, and recorded by opts.Logs), and the caller
// must Stop the process. ctx bounds the wait for the caches; the process
// runs until Stop or Crash.
func Run(ctx context.Context, cp *controlplane.ControlPlane, opts Options, logger logr.Logger, setup func(mgr ctrl.Manager, p *Process) error) (*Process, error) {
	return run(ctx, cp, opts, logger, nil, setup)
}

// run is Run with the function that silences the test logger of Start,
// if any.
func run(ctx context.Context, cp *controlplane.ControlPlane, opts Options, logger logr.Logger, quiet func(), setup func(mgr ctrl.Manager, p *Process) error) (*Process, error) {
	p := &Process{
		silence: quiet,
		name:    opts.Name,
		plan:    opts.Plan,
		engine:  opts.Engine,
		now:     time.Now,
		deadCh:  make(chan struct{}),
		done:    make(chan struct{}),
	}
	if p.name == "" {
		p.name = "process"
	}
	base := cp.Config
	if opts.Config != nil {
		base = opts.Config
	}
	cfg := rest.CopyConfig(base)
	// JSON, so that the kit can read watch events and answers.
	cfg.ContentType = "application/json"
	cfg.AcceptContentTypes = "application/json"
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &transport{p: p, next: rt} })

	logger = logger.WithName(p.name)
	if opts.Logs != nil {
		logger = opts.Logs.Wrap(logger)
	}
	p.logger = logger
	mopts := managerOptions(cp, opts, p.logger)
	if err := prepare(p, base, opts, &mopts); err != nil {
		return nil, err
	}

	mgr, err := ctrl.NewManager(cfg, mopts)
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	mgr = new(bosun.Observation).Attach(mgr)
	p.mgr = mgr
	for _, m := range p.members {
		if err := m.SetupWithManager(mgr); err != nil {
			return nil, fmt.Errorf("adding the shard member: %w", err)
		}
	}
	bosun.ObservationOf(mgr).AddObserver(bosun.PassObserverFunc(p.journal.observe))
	if setup != nil {
		if err := setup(mgr, p); err != nil {
			return nil, fmt.Errorf("setting up manager: %w", err)
		}
	}

	mctx, cancel := context.WithCancel(logr.NewContext(context.Background(), p.logger))
	p.cancel = cancel
	go func() {
		defer close(p.done)
		if err := mgr.Start(mctx); err != nil && !p.dead() {
			p.err = err
		}
	}()

	syncCtx, cancelSync := context.WithTimeout(ctx, cacheSyncTimeout)
	defer cancelSync()
	go func() {
		select {
		case <-p.done:
			cancelSync()
		case <-p.deadCh:
			cancelSync()
		case <-syncCtx.Done():
		}
	}()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) && !p.dead() {
		p.Stop()
		if p.err != nil {
			return nil, fmt.Errorf("manager %s stopped before its caches synced: %w", p.name, p.err)
		}
		return nil, fmt.Errorf("manager %s: caches did not sync within %s", p.name, cacheSyncTimeout)
	}
	return p, nil
}

// prepare makes the process's shard members, which limit the manager's
// cache, and the connection of its foreign writes.
func prepare(p *Process, base *rest.Config, opts Options, mopts *ctrl.Options) error {
	for _, so := range opts.Shard {
		m, err := newMember(so, p.name, opts.Namespace, opts.ClusterScoped)
		if err != nil {
			return err
		}
		m.ConfigureCache(&mopts.Cache)
		p.members = append(p.members, m)
		p.rings = append(p.rings, so)
	}
	if p.plan.Foreign.Rate > 0 {
		return p.foreign.init(base)
	}
	return nil
}

// managerOptions returns the options of a process's manager: no
// servers, logger, its leader election, its namespace, then
// opts.Manager's adjustments, then the scenario's label on the cache of
// each kind of opts.ClusterScoped.
func managerOptions(cp *controlplane.ControlPlane, opts Options, logger logr.Logger) ctrl.Options {
	mopts := ctrl.Options{
		Scheme:                  cp.Scheme,
		Logger:                  logger,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		Controller:              config.Controller{SkipNameValidation: ptr.To(true)},
		GracefulShutdownTimeout: ptr.To(shutdownTimeout),
	}
	if le := opts.LeaderElection; le != nil {
		mopts.LeaderElection = true
		mopts.LeaderElectionID = le.ID
		mopts.LeaderElectionNamespace = le.Namespace
		mopts.LeaseDuration = ptr.To(cmpOr(le.LeaseDuration, defaultLeaseDuration))
		mopts.RenewDeadline = ptr.To(cmpOr(le.RenewDeadline, defaultRenewDeadline))
		mopts.RetryPeriod = ptr.To(cmpOr(le.RetryPeriod, defaultRetryPeriod))
	}
	if opts.Namespace != "" {
		mopts.Cache.DefaultNamespaces = map[string]cache.Config{opts.Namespace: {}}
	}
	if opts.Manager != nil {
		opts.Manager(&mopts)
	}
	if opts.Namespace != "" {
		for _, kind := range opts.ClusterScoped {
			scopeCache(&mopts.Cache, kind, opts.Namespace)
		}
	}
	return mopts
}

// scenarioSelector selects the objects labelled ScenarioLabel ns.
func scenarioSelector(ns string) labels.Selector {
	return labels.SelectorFromSet(labels.Set{ScenarioLabel: ns})
}

// scopeCache limits the cache of kind in o to the objects of the scenario
// of ns, keeping the other settings o has for it, its label selector
// too.
func scopeCache(o *cache.Options, kind client.Object, ns string) {
	if o.ByObject == nil {
		o.ByObject = map[client.Object]cache.ByObject{}
	}
	for obj, by := range o.ByObject {
		if reflect.TypeOf(obj) == reflect.TypeOf(kind) {
			by.Label = andSelector(by.Label, scenarioSelector(ns))
			o.ByObject[obj] = by
			return
		}
	}
	o.ByObject[kind] = cache.ByObject{Label: scenarioSelector(ns)}
}

// andSelector returns a selector of the objects both select; a nil one
// selects everything.
func andSelector(a, b labels.Selector) labels.Selector {
	if a == nil {
		return b
	}
	reqs, selectable := b.Requirements()
	if !selectable {
		return labels.Nothing()
	}
	return a.Add(reqs...)
}

// cmpOr returns d, or def when d is zero.
func cmpOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
