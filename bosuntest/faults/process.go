package faults

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/shard"
)

// Defaults of LeaderElection.
const (
	DefaultLeaseDuration = 4 * time.Second
	DefaultRenewDeadline = 3 * time.Second
	DefaultRetryPeriod   = 500 * time.Millisecond
)

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
	// options of the same names; zero means DefaultLeaseDuration,
	// DefaultRenewDeadline and DefaultRetryPeriod, short enough for tests.
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
	// Options.Namespace, LeaseDuration to DefaultLeaseDuration. The
	// sharders run on the winner of the manager's leader election, so set
	// LeaderElection too. Setup wires each ring's controller to its member
	// (see Shard). Kinds whose objects refer to each other are best
	// sharded by namespace (shard.ByNamespace), which puts them on one
	// member: a member's cache holds only its share of each kind.
	Shard []shard.Options
}

// Process is a manager run under a Plan: every request it makes to the API
// server, and every call its managed steps make to external systems
// through External, passes through the kit, which records the writes,
// injects the plan's faults and can kill the process at any moment.
type Process struct {
	name string
	plan Plan
	mgr  ctrl.Manager
	now  func() time.Time

	isDead  atomic.Bool
	deadCh  chan struct{}
	crashAt atomic.Int64 // unix nanos of the crash
	kill    sync.Once
	cancel  context.CancelFunc
	done    chan struct{}
	silence func() // nil outside tests
	logger  logr.Logger
	err     error

	members []*shard.Member
	rings   []shard.Options // the options of each member, defaults filled in

	mu       sync.Mutex
	calls    []Call
	points   int
	attempts map[string]int
	passes   []passRecord

	net     network
	foreign foreignWriter

	dropped, coalesced, relists, stale, reads atomic.Int64
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
	mopts := p.managerOptions(cp, opts)
	if err := p.prepare(base, opts, &mopts); err != nil {
		return nil, err
	}

	mgr, err := ctrl.NewManager(cfg, mopts)
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	p.mgr = mgr
	for _, m := range p.members {
		if err := m.SetupWithManager(mgr); err != nil {
			return nil, fmt.Errorf("adding the shard member: %w", err)
		}
	}
	bosun.ObservationOf(mgr).AddObserver(bosun.PassObserverFunc(p.observePass))
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
func (p *Process) prepare(base *rest.Config, opts Options, mopts *ctrl.Options) error {
	for _, so := range opts.Shard {
		m, err := newMember(so, p.name, opts.Namespace)
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

// managerOptions returns the options of the process's manager: no
// servers, its logger, its leader election, its namespace, then
// opts.Manager's adjustments.
func (p *Process) managerOptions(cp *controlplane.ControlPlane, opts Options) ctrl.Options {
	mopts := ctrl.Options{
		Scheme:                  cp.Scheme,
		Logger:                  p.Logger(),
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		Controller:              config.Controller{SkipNameValidation: ptr.To(true)},
		GracefulShutdownTimeout: ptr.To(shutdownTimeout),
	}
	if le := opts.LeaderElection; le != nil {
		mopts.LeaderElection = true
		mopts.LeaderElectionID = le.ID
		mopts.LeaderElectionNamespace = le.Namespace
		mopts.LeaseDuration = ptr.To(cmpOr(le.LeaseDuration, DefaultLeaseDuration))
		mopts.RenewDeadline = ptr.To(cmpOr(le.RenewDeadline, DefaultRenewDeadline))
		mopts.RetryPeriod = ptr.To(cmpOr(le.RetryPeriod, DefaultRetryPeriod))
	}
	if opts.Namespace != "" {
		mopts.Cache.DefaultNamespaces = map[string]cache.Config{opts.Namespace: {}}
	}
	if opts.Manager != nil {
		opts.Manager(&mopts)
	}
	return mopts
}

// Logger returns the process's logger.
func (p *Process) Logger() logr.Logger { return p.logger }

// Err returns the error the manager stopped with, if it stopped with one
// while alive; nil while it runs.
func (p *Process) Err() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}

// cmpOr returns d, or def when d is zero.
func cmpOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Manager returns the process's manager.
func (p *Process) Manager() ctrl.Manager { return p.mgr }

// Name returns the process's name.
func (p *Process) Name() string { return p.name }

// Elected is closed once the process leads (at once without leader
// election).
func (p *Process) Elected() <-chan struct{} { return p.mgr.Elected() }

// Crashed is closed once the process has died, by its plan's crash point or
// by Crash.
func (p *Process) Crashed() <-chan struct{} { return p.deadCh }

// CrashedAt returns when the process died; the zero time while it lives.
func (p *Process) CrashedAt() time.Time {
	ns := p.crashAt.Load()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// dead reports whether the process has died.
func (p *Process) dead() bool { return p.isDead.Load() }

// Crash kills the process now: every call it makes from here on fails with
// ErrCrashed, those in flight lose their answers, its watches end, its
// context is cancelled and its log goes quiet. It does not release its
// Lease: a successor waits for it to expire. Crash does not wait for the
// manager's goroutines, which can no longer reach anything.
func (p *Process) Crash() {
	p.kill.Do(func() {
		p.crashAt.Store(p.now().UnixNano())
		p.isDead.Store(true)
		close(p.deadCh)
		p.quiet()
		p.cancel()
	})
}

// Stop stops the process as a rollout would (its context cancelled, its
// runnables given time to finish) and waits for the manager to return. A
// process that crashed is only waited for.
func (p *Process) Stop() {
	if p.cancel != nil {
		p.cancel()
	}
	<-p.done
	p.quiet()
}

// quiet stops the process's log from reaching its test.
func (p *Process) quiet() {
	if p.silence != nil {
		p.silence()
	}
}

// record adds a call and reports whether it is the plan's crash point.
func (p *Process) record(c Call) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	c.Seq = len(p.calls) + 1
	c.At = p.now()
	p.calls = append(p.calls, c)
	cp := p.plan.Crash
	if c.AfterCrash || !c.TookEffect() || (cp.Match != nil && !cp.Match(c)) {
		return false
	}
	p.points++
	return cp.After > 0 && p.points == cp.After
}

// decide returns the fault the plan's rules inject into a request, if any.
func (p *Process) decide(info requestInfo) Fault {
	if len(p.plan.Rules) == 0 {
		return ""
	}
	p.mu.Lock()
	if p.attempts == nil {
		p.attempts = map[string]int{}
	}
	// The namespace is left out, so that a scenario run again in a fresh
	// namespace meets the same faults.
	key := info.verb + " " + info.resourcePath() + " " + info.name
	p.attempts[key]++
	n := p.attempts[key]
	p.mu.Unlock()
	for i, r := range p.plan.Rules {
		if info.bookkeeping() && len(r.Resources) == 0 {
			continue
		}
		if r.Rate <= 0 || !r.matches(info) {
			continue
		}
		if chance(p.plan.Seed, "rule", strconv.Itoa(i), key, strconv.Itoa(n)) < r.Rate {
			return r.Fault
		}
	}
	return ""
}

// Calls returns the mutating calls the process made, API and external, in
// the order they returned.
func (p *Process) Calls() []Call {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Call(nil), p.calls...)
}

// Points returns how many writes have counted towards the plan's crash
// point so far: the writes that took effect (and matched CrashPoint.Match).
func (p *Process) Points() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.points
}

// Writes returns the API writes that took effect, as bosuntest describes
// them, so that the process can stand where a *bosuntest.WriteCounter
// does (for example in oracle.Quiet). Events and Leases are left out.
func (p *Process) Writes() []bosuntest.Write {
	var out []bosuntest.Write
	for _, c := range p.Calls() {
		if c.External || !c.TookEffect() {
			continue
		}
		resource, sub, _ := cutSub(c.Resource)
		w := bosuntest.Write{Verb: writeVerb(c.Verb), Subresource: sub, Kind: p.kindOf(c.Group, resource), Namespace: c.Namespace, Name: c.Name}
		out = append(out, w)
	}
	return out
}

// cutSub splits "widgets/status".
func cutSub(resource string) (string, string, bool) {
	for i := range len(resource) {
		if resource[i] == '/' {
			return resource[:i], resource[i+1:], true
		}
	}
	return resource, "", false
}

// writeVerb maps an API verb to bosuntest's.
func writeVerb(verb string) string {
	if verb == VerbDeleteCollection {
		return bosuntest.VerbDeleteAllOf
	}
	return verb
}

// kindOf names the kind of a resource, or the resource when the manager's
// mapper does not know it.
func (p *Process) kindOf(group, resource string) string {
	gvk, err := p.mgr.GetRESTMapper().KindFor(schema.GroupVersionResource{Group: group, Resource: resource})
	if err != nil {
		return resource
	}
	return gvk.Kind
}

// Stats counts what the plan did to the process's watches and reads.
type Stats struct {
	// Dropped, Coalesced are the watch events dropped and merged.
	Dropped, Coalesced int
	// Relists is how many watches the kit ended with 410 Gone.
	Relists int
	// StaleReads is how many watch events StaleReads held back, leaving
	// the cache behind the API server.
	StaleReads int
	// Faults counts the API requests each fault was injected into (writes
	// only).
	Faults map[Fault]int
	// Foreign is how many foreign writes the kit made (see ForeignWrites).
	Foreign int
	// ExternalReads is how many calls of the process's managed steps did
	// not change anything (Observe, and the Connector's calls): its
	// polls of the external systems.
	ExternalReads int
	// Partitions is how many times the process was cut off (Partition),
	// and WatchesCut how many of its watches a partition broke (each
	// once it had something to deliver).
	Partitions, WatchesCut int
}

// Stats returns what the plan has done so far.
func (p *Process) Stats() Stats {
	s := Stats{
		Dropped:       int(p.dropped.Load()),
		Coalesced:     int(p.coalesced.Load()),
		Relists:       int(p.relists.Load()),
		StaleReads:    int(p.stale.Load()),
		Faults:        map[Fault]int{},
		Foreign:       p.foreign.count(),
		ExternalReads: int(p.reads.Load()),
		Partitions:    p.net.partitions(),
		WatchesCut:    p.net.hungReads(),
	}
	for _, c := range p.Calls() {
		if c.Fault != "" {
			s.Faults[c.Fault]++
		}
	}
	return s
}

func (p *Process) countDropped()   { p.dropped.Add(1) }
func (p *Process) countCoalesced() { p.coalesced.Add(1) }
func (p *Process) countRelist()    { p.relists.Add(1) }
func (p *Process) countStale()     { p.stale.Add(1) }

// String names the process.
func (p *Process) String() string { return fmt.Sprintf("faults.Process(%s)", p.name) }
