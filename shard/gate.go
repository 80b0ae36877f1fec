package shard

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/internal/rollout"
)

// ErrLeaseLost is the cause of the cancellation of a pass's context when
// the member could not renew its Lease in time (see Wrap).
var ErrLeaseLost = errors.New("shard: the member could not renew its lease in time")

// verdict is what the gate says of a pass about to start.
type verdict int

const (
	// admit: the pass runs.
	admit verdict = iota
	// drop: the object is leaving this member, or the member is stopping;
	// the request is dropped.
	drop
	// hold: the member's Lease is not current; the request comes back
	// after a renewal period.
	hold
)

// String names the verdict, for tests and logs.
func (v verdict) String() string {
	switch v {
	case admit:
		return "admit"
	case drop:
		return "drop"
	case hold:
		return "hold"
	}
	return "unknown"
}

// gate keeps the passes a member runs: it admits a pass only while the
// member's Lease is current and the object is not leaving, counts the
// passes running per object, and tells the drainer when an object has
// none left.
//
// The member's right to run passes lasts RenewDeadline from its last
// renewal. When it lapses, the passes admitted under it have their
// context cancelled (ErrLeaseLost, see Wrap), and the right that a later
// renewal starts trusts only what the API server says: the member's
// cache may still show objects the sharder gave away meanwhile, so the
// first pass of an object under the new right needs it labelled for the
// member in a list taken after the renewal (resume), or in a read of the
// object from the API server (confirm).
type gate struct {
	renewDeadline time.Duration
	// isBack reports whether the object key, marked as leaving, is this
	// member's again in the cache: the cache's event reaches the
	// controller and the drainer in either order, so a request may come
	// before the drainer has seen the object back. Nil: never.
	isBack func(key types.NamespacedName) bool
	// cached reports whether the cache holds key labelled for this
	// member, and the tenure the object was assigned in (tenurePrefix).
	// Nil: always, in no tenure.
	cached func(key types.NamespacedName) (bool, string)
	// foreign reports whether the cache holds key as another member's
	// object, which this member caches as its standby (Options.Standby):
	// a request of it, from a watch of another kind or a pass's requeue,
	// is dropped unless the member took the object over. Nil: never.
	foreign func(key types.NamespacedName) bool
	// confirm reads key from the API server and reports whether it is
	// labelled for this member; an object not found is not. Nil: every
	// object is.
	confirm func(key types.NamespacedName) (bool, error)

	mu      sync.Mutex
	renewed time.Time
	// right is in force from a resume until RenewDeadline after the last
	// renewal; it is cancelled then, with ErrLeaseLost. Nil when the
	// member has no right.
	right       context.Context
	cancelRight context.CancelCauseFunc
	expiry      *time.Timer
	// confirmed holds the objects known to be labelled for this member on
	// the API server since right began.
	confirmed map[types.NamespacedName]bool
	// tenure is the acquire time of the member's Lease.
	tenure   string
	stopping bool
	inflight map[types.NamespacedName]int
	// draining holds the objects asked to leave, with when they were
	// marked; they start no pass until seen back.
	draining map[types.NamespacedName]time.Time
	// started holds when the first running pass of an object began, and
	// failed the objects whose running pass failed; stats counts the
	// passes that ended, and observe, when set, is told of each.
	started map[types.NamespacedName]time.Time
	failed  map[types.NamespacedName]bool
	stats   rollout.Stats
	observe func(d time.Duration, failed bool)
}

func newGate(renewDeadline time.Duration) *gate {
	return &gate{
		renewDeadline: renewDeadline,
		confirmed:     map[types.NamespacedName]bool{},
		inflight:      map[types.NamespacedName]int{},
		draining:      map[types.NamespacedName]time.Time{},
		started:       map[types.NamespacedName]time.Time{},
		failed:        map[types.NamespacedName]bool{},
	}
}

// currentLocked reports whether the member's right is in force; g.mu is
// held.
func (g *gate) currentLocked() bool {
	return g.right != nil && time.Since(g.renewed) < g.renewDeadline
}

// extend records a renewal of the member's Lease at t, in tenure, and
// reports whether it extended a right in force; false means the right had
// lapsed (or never began, or the tenure changed) and only resume starts a
// new one.
func (g *gate) extend(t time.Time, tenure string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.currentLocked() || tenure != g.tenure {
		return false
	}
	if t.After(g.renewed) {
		g.renewed = t
		g.expiry.Reset(time.Until(t.Add(g.renewDeadline)))
	}
	return true
}

// resume starts a new right of the member, renewed at t in tenure,
// ending the one before if any: owned are the objects labelled for the
// member on the API server after the renewal, whose passes need no
// further check, nor do those of objects assigned in tenure.
func (g *gate) resume(t time.Time, owned map[types.NamespacedName]bool, tenure string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.revokeLocked()
	g.right, g.cancelRight = context.WithCancelCause(context.Background())
	g.renewed, g.tenure = t, tenure
	g.confirmed = owned
	if g.confirmed == nil {
		g.confirmed = map[types.NamespacedName]bool{}
	}
	g.expiry = time.AfterFunc(time.Until(t.Add(g.renewDeadline)), g.expire)
}

// revoke ends the member's right: it has no Lease.
func (g *gate) revoke() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.revokeLocked()
	g.renewed = time.Time{}
}

func (g *gate) revokeLocked() {
	if g.right == nil {
		return
	}
	g.expiry.Stop()
	g.cancelRight(ErrLeaseLost)
	g.right, g.cancelRight, g.expiry = nil, nil, nil
}

// expire ends the right when RenewDeadline has passed since the last
// renewal; a renewal that came meanwhile moved the deadline on.
func (g *gate) expire() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.right == nil {
		return
	}
	if left := time.Until(g.renewed.Add(g.renewDeadline)); left > 0 {
		g.expiry.Reset(left)
		return
	}
	g.revokeLocked()
}

// begin decides on a pass of key and counts it when admitted, returning
// the right it runs under.
func (g *gate) begin(key types.NamespacedName) (verdict, context.Context) {
	for {
		v, right, check := g.decide(key)
		if !check {
			return v, right
		}
		// A read from the API server, outside the lock.
		mine, err := g.confirm(key)
		switch {
		case err != nil:
			return hold, nil
		case !mine:
			return drop, nil
		}
		g.mu.Lock()
		if g.right == right {
			g.confirmed[key] = true
		}
		g.mu.Unlock()
	}
}

// decide is begin under the lock; check asks for the object's labels on
// the API server before it can decide.
func (g *gate) decide(key types.NamespacedName) (v verdict, right context.Context, check bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopping {
		return drop, nil, false
	}
	if _, leaving := g.draining[key]; leaving {
		// Dropping the request of an object that is back would leave it
		// without a pass until its next event.
		if g.isBack == nil || !g.isBack(key) {
			return drop, nil, false
		}
		delete(g.draining, key)
	}
	if !g.currentLocked() {
		return hold, nil, false
	}
	// An object the cache does not hold gets its pass: it finds nothing
	// to work on, or the object gone. One the cache holds as assigned in
	// the current tenure cannot be left from before a lapse.
	if g.confirm != nil && !g.confirmed[key] {
		if g.foreign != nil && g.foreign(key) {
			return drop, nil, false
		}
		mine, tenure := true, ""
		if g.cached != nil {
			mine, tenure = g.cached(key)
		}
		switch {
		case mine && tenure != "" && tenure == g.tenure:
			g.confirmed[key] = true
		case mine:
			return admit, g.right, true
		}
	}
	if g.inflight[key]++; g.inflight[key] == 1 {
		g.started[key] = time.Now()
	}
	return admit, g.right, false
}

// currentRight returns the member's right if it is in force, else nil.
func (g *gate) currentRight() context.Context {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.currentLocked() {
		return nil
	}
	return g.right
}

// takeOver counts keys, objects this member takes over as their standby,
// listed from the API server at listed, as its own under right, if right
// is still in force: their passes need no further check until the right
// lapses. It returns the keys it took over. An object this member let go
// before the list is its own again: the mark of that drain no longer drops
// its requests, the takeover's among them. One it let go since the list
// began is not taken over: the list saw it before the drain, and it may
// belong to a live member by now.
func (g *gate) takeOver(right context.Context, keys []types.NamespacedName, listed time.Time) []types.NamespacedName {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.right != right || !g.currentLocked() {
		return nil
	}
	taken := make([]types.NamespacedName, 0, len(keys))
	for _, k := range keys {
		if at, drained := g.draining[k]; drained && !at.Before(listed) {
			continue
		}
		g.confirmed[k] = true
		delete(g.draining, k)
		taken = append(taken, k)
	}
	return taken
}

// takenOver reports whether key counts as this member's under its right
// in force: labelled for it, or taken over as its standby.
func (g *gate) takenOver(key types.NamespacedName) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.right != nil && g.confirmed[key]
}

// unconfirm forgets that key was seen labelled for this member: it left
// the member's cache.
func (g *gate) unconfirm(key types.NamespacedName) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.confirmed, key)
}

// fail marks the running pass of key as failed.
func (g *gate) fail(key types.NamespacedName) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.inflight[key] > 0 {
		g.failed[key] = true
	}
}

// end counts the end of an admitted pass of key, and once none of key
// runs, the pass in stats.
func (g *gate) end(key types.NamespacedName) {
	g.mu.Lock()
	if g.inflight[key]--; g.inflight[key] > 0 {
		g.mu.Unlock()
		return
	}
	delete(g.inflight, key)
	start, ok := g.started[key]
	d, failed := time.Since(start), g.failed[key]
	delete(g.started, key)
	delete(g.failed, key)
	if !ok {
		g.mu.Unlock()
		return
	}
	g.stats.Passes++
	g.stats.Seconds += d.Seconds()
	if failed {
		g.stats.Errors++
	}
	observe := g.observe
	g.mu.Unlock()
	if observe != nil {
		observe(d, failed)
	}
}

// passes returns the passes that ended since the member started.
func (g *gate) passes() rollout.Stats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stats
}

// drain marks key as leaving and reports whether no pass of it runs.
func (g *gate) drain(key types.NamespacedName) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.draining[key]; !ok {
		g.draining[key] = time.Now()
	}
	return g.inflight[key] == 0
}

// back forgets that key was leaving: it is this member's again.
func (g *gate) back(key types.NamespacedName) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.draining, key)
}

// forget drops the marks older than age of the objects that the cache no
// longer holds as leaving: any request of theirs queued before the drain
// has long been handled, and the object, if it comes back, is seen back.
func (g *gate) forget(age time.Duration, leaving func(types.NamespacedName) bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for k, at := range g.draining {
		// The cache may still hold the object as it was when it was let
		// go, a while after that on a busy machine.
		if time.Since(at) > age && !leaving(k) {
			delete(g.draining, k)
		}
	}
}

// stop makes the gate admit no more passes and reports whether none runs.
func (g *gate) stop() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopping = true
	return len(g.inflight) == 0
}

// idle reports whether no pass runs.
func (g *gate) idle() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.inflight) == 0
}

// newQueue returns a constructor of controller queues, made by next (nil:
// the default, a priority queue when priority is true), that pass the
// gate: Get returns only admitted requests, and Done ends their pass.
func (g *gate) newQueue(next func(string, workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request], priority func() bool, retry time.Duration) func(string, workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	if next == nil {
		next = func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
			if priority() {
				return priorityqueue.New(name, func(o *priorityqueue.Opts[reconcile.Request]) { o.RateLimiter = rl })
			}
			return workqueue.NewTypedRateLimitingQueueWithConfig(rl, workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Name: name})
		}
	}
	return func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		q := next(name, rl)
		if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
			return &gatedPriorityQueue{PriorityQueue: pq, g: g, retry: retry}
		}
		return &gatedQueue{TypedRateLimitingInterface: q, g: g, retry: retry}
	}
}

// pass decides on item, just taken from q: true when its pass runs; else
// item is done with, and comes back after retry when the gate says hold.
func (g *gate) pass(q workqueue.TypedRateLimitingInterface[reconcile.Request], item reconcile.Request, retry time.Duration) bool {
	switch v, _ := g.begin(item.NamespacedName); v {
	case admit:
		return true
	case hold:
		q.AddAfter(item, retry)
	default:
		q.Forget(item)
	}
	q.Done(item)
	return false
}

// gatedQueue is a controller's queue whose Get passes the gate.
type gatedQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	g     *gate
	retry time.Duration
}

func (q *gatedQueue) Get() (reconcile.Request, bool) {
	for {
		item, shutdown := q.TypedRateLimitingInterface.Get()
		if shutdown || q.g.pass(q.TypedRateLimitingInterface, item, q.retry) {
			return item, shutdown
		}
	}
}

// AddRateLimited is how a controller retries a pass that failed.
func (q *gatedQueue) AddRateLimited(item reconcile.Request) {
	q.g.fail(item.NamespacedName)
	q.TypedRateLimitingInterface.AddRateLimited(item)
}

func (q *gatedQueue) Done(item reconcile.Request) {
	q.g.end(item.NamespacedName)
	q.TypedRateLimitingInterface.Done(item)
}

// gatedPriorityQueue is gatedQueue for a priority queue.
type gatedPriorityQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	g     *gate
	retry time.Duration
}

func (q *gatedPriorityQueue) Get() (reconcile.Request, bool) {
	item, _, shutdown := q.GetWithPriority()
	return item, shutdown
}

func (q *gatedPriorityQueue) GetWithPriority() (reconcile.Request, int, bool) {
	for {
		item, prio, shutdown := q.PriorityQueue.GetWithPriority()
		if shutdown || q.g.pass(q.PriorityQueue, item, q.retry) {
			return item, prio, shutdown
		}
	}
}

// AddWithOpts, rate limited, is how a controller retries a pass that
// failed.
func (q *gatedPriorityQueue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	if o.RateLimited {
		for _, item := range items {
			q.g.fail(item.NamespacedName)
		}
	}
	q.PriorityQueue.AddWithOpts(o, items...)
}

// AddRateLimited is AddWithOpts, rate limited.
func (q *gatedPriorityQueue) AddRateLimited(item reconcile.Request) {
	q.g.fail(item.NamespacedName)
	q.PriorityQueue.AddRateLimited(item)
}

func (q *gatedPriorityQueue) Done(item reconcile.Request) {
	q.g.end(item.NamespacedName)
	q.PriorityQueue.Done(item)
}
