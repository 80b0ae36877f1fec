package shard

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/fairqueue"
)

// verdict is what the gate says of a pass about to start.
type verdict int

const (
	// admit: the pass runs.
	admit verdict = iota
	// drop: the object is leaving this member, or the member is stopping;
	// the request is dropped.
	drop
	// wait: the member's Lease is not current; the request comes back
	// after a renewal period.
	wait
)

// String names the verdict, for tests and logs.
func (v verdict) String() string {
	switch v {
	case admit:
		return "admit"
	case drop:
		return "drop"
	case wait:
		return "wait"
	}
	return "unknown"
}

// gate keeps the passes a member runs: it admits a pass only while the
// member's Lease is current and the object is not leaving, counts the
// passes running per object, and tells the drainer when an object has
// none left.
type gate struct {
	renewDeadline time.Duration
	// isBack reports whether the object key, marked as leaving, is this
	// member's again in the cache: the cache's event reaches the
	// controller and the drainer in either order, so a request may come
	// before the drainer has seen the object back. Nil: never.
	isBack func(key types.NamespacedName) bool

	mu       sync.Mutex
	renewed  time.Time
	stopping bool
	inflight map[types.NamespacedName]int
	// draining holds the objects asked to leave, with when they were
	// marked; they start no pass until seen back.
	draining map[types.NamespacedName]time.Time
}

func newGate(renewDeadline time.Duration) *gate {
	return &gate{renewDeadline: renewDeadline, inflight: map[types.NamespacedName]int{}, draining: map[types.NamespacedName]time.Time{}}
}

// renewedAt records a renewal of the member's Lease at t; the zero time
// says the member has no Lease.
func (g *gate) renewedAt(t time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.renewed = t
}

// begin decides on a pass of key and counts it when admitted.
func (g *gate) begin(key types.NamespacedName) verdict {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopping {
		return drop
	}
	if _, leaving := g.draining[key]; leaving {
		// Dropping the request of an object that is back would leave it
		// without a pass until its next event.
		if g.isBack == nil || !g.isBack(key) {
			return drop
		}
		delete(g.draining, key)
	}
	if g.renewed.IsZero() || time.Since(g.renewed) >= g.renewDeadline {
		return wait
	}
	g.inflight[key]++
	return admit
}

// end counts the end of an admitted pass of key.
func (g *gate) end(key types.NamespacedName) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.inflight[key]--; g.inflight[key] <= 0 {
		delete(g.inflight, key)
	}
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

// forget drops the marks older than age: any request of theirs queued
// before the drain has long been handled, and the object, if it comes
// back, is seen back.
func (g *gate) forget(age time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for k, at := range g.draining {
		if time.Since(at) > age {
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

// Wrap returns r restricted to this member: a pass runs only while the
// member's Lease is current (renewed within RenewDeadline) and the object
// has not been asked to leave, and the member lets an object go only once
// its running pass has ended. A request refused for a Lease not current
// comes back after RenewPeriod; one refused because the object is leaving
// is dropped. Use it, or ControllerOptions, in every controller of the
// ring's kind, with Predicate and NeedLeaderElection false.
func (m *Member) Wrap(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		switch m.gate.begin(req.NamespacedName) {
		case drop:
			return reconcile.Result{}, nil
		case wait:
			return reconcile.Result{RequeueAfter: m.opts.RenewPeriod}, nil
		}
		defer m.gate.end(req.NamespacedName)
		return r.Reconcile(ctx, req)
	})
}

// newQueue returns a constructor of controller queues, made by next (nil:
// the default, a priority queue when priority is true), that pass the
// gate: Get returns only admitted requests, and Done ends their pass.
func (g *gate) newQueue(next func(string, workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request], priority bool, retry time.Duration) func(string, workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	if next == nil {
		next = func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
			if priority {
				return fairqueue.New(name, fairqueue.Options[reconcile.Request]{Key: fairqueue.ByNamespace, RateLimiter: rl})
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
// item is done with, and comes back after retry when the gate says wait.
func (g *gate) pass(q workqueue.TypedRateLimitingInterface[reconcile.Request], item reconcile.Request, retry time.Duration) bool {
	switch g.begin(item.NamespacedName) {
	case admit:
		return true
	case wait:
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

func (q *gatedPriorityQueue) Done(item reconcile.Request) {
	q.g.end(item.NamespacedName)
	q.PriorityQueue.Done(item)
}
