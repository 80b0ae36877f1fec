package faults

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/managed"
	"github.com/bosunkit/bosun/shard"
)

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

	engine      func(*bosun.Options)
	configured  atomic.Bool
	failDeletes atomic.Bool

	members []*shard.Member
	rings   []shard.Options // the options of each member, defaults filled in

	mu       sync.Mutex
	calls    []Call
	points   int
	attempts map[string]int

	net     network
	foreign foreignWriter
	journal journal
	losses  losses

	dropped, coalesced, relists, stale, reads atomic.Int64
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
	if p.failDeletes.Load() && (info.verb == verbDelete || info.verb == verbDeleteCollection) && !info.bookkeeping() {
		return InternalError
	}
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
	if verb == verbDeleteCollection {
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

// String names the process.
func (p *Process) String() string { return fmt.Sprintf("faults.Process(%s)", p.name) }

// External returns the hook through which the process's managed steps
// reach their external systems (pass it with managed.WithCallHook): the
// kit records their mutating calls with the API writes, counts them
// towards the plan's crash point, and fails every call once the process
// has died.
func (p *Process) External() managed.CallHook { return externalHook{p} }

// Configure changes the options of one of the operator's bosun reconcilers
// as Options.Engine says. An operator's Setup calls it on every
// reconciler it builds, before the reconciler is completed:
//
//	r := NewReconciler()
//	p.Configure(&r.Options)
//	return faults.Shard(bosun.ControllerManagedBy[*v1.Widget](mgr), p).Complete(r)
//
// The matrix runs the cells of its engine features (kstatus conditions, a
// deletion deadline) only on operators whose Setup calls it.
func (p *Process) Configure(o *bosun.Options) {
	p.configured.Store(true)
	if p.engine != nil {
		p.engine(o)
	}
}

// FailDeletes makes every delete the process asks for fail until it is
// called with false: deletes of API objects are answered 500 without
// reaching the API server, and the managed steps' external deletes fail
// with ErrDeleteRefused. It stands for a cleanup that cannot finish: an
// external system that refuses deletes, a webhook that blocks them.
func (p *Process) FailDeletes(fail bool) { p.failDeletes.Store(fail) }

// Partition cuts the process off from the API server, as a network
// partition would, until Heal: its requests fail after a second, as a
// refused connection does (syscall.ECONNREFUSED; those that are still
// waiting when Heal comes go through), and its open watches hang, delivering nothing, until the partition heals,
// when they break (an event that arrived meanwhile is lost with them, so
// the watcher must relist or resume). Leader election and shard Leases
// cannot be renewed meanwhile. External calls are not cut.
func (p *Process) Partition() { p.net.begin() }

// Heal ends the partition Partition began.
func (p *Process) Heal() { p.net.end() }

// ForeignLost describes the objects the process's foreign writes went to
// that still exist, as the same objects (UIDs), without the value of the
// last foreign write to them, the process's or another's (the one the API
// server applied last): another actor's change that the operator undid.
// It reads them from the API server.
func (p *Process) ForeignLost(ctx context.Context) ([]string, error) {
	return p.foreign.lost(ctx)
}

// Member returns the process's member of the shard ring of obj's kind
// (Options.Shard), or nil.
func (p *Process) Member(obj client.Object) *shard.Member {
	for i, m := range p.members {
		if reflect.TypeOf(p.rings[i].Object) == reflect.TypeOf(obj) {
			return m
		}
	}
	return nil
}

// Journal returns r recording its passes in the process's journal, which
// the matrix reads to check that no object is reconciled by two processes
// at once. The passes of bosun's reconcilers are recorded without it;
// wrap a plain controller-runtime reconciler of obj's kind (obj may be a
// nil pointer of it), named controller, in it. A pass counts as one that
// acted when the manager's cache holds its object as it starts. In a shard
// ring, put Journal inside the member's Wrap, so that the passes the
// member holds back are not journaled:
//
//	m.Wrap(p.Journal("widgets", &v1.Widget{}, r))
func (p *Process) Journal(controller string, obj client.Object, r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		start := time.Now()
		cur := emptyOf(obj)
		found := cur != nil && p.mgr.GetCache().Get(ctx, req.NamespacedName, cur) == nil
		res, err := r.Reconcile(ctx, req)
		p.journal.add(passRecord{controller: controller, object: req.NamespacedName, start: start, end: time.Now(), acted: found, plain: true})
		return res, err
	})
}

// emptyOf returns an object to read one of obj's kind into: a copy of obj
// (an unstructured object keeps its kind), or a new one of its type when
// obj is a nil pointer; nil when obj is nil.
func emptyOf(obj client.Object) client.Object {
	if obj == nil {
		return nil
	}
	if cur, ok := obj.DeepCopyObject().(client.Object); ok && cur != nil {
		return cur
	}
	t := reflect.TypeOf(obj)
	if t.Kind() != reflect.Pointer {
		return nil
	}
	cur, _ := reflect.New(t.Elem()).Interface().(client.Object)
	return cur
}
