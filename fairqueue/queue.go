package fairqueue

import (
	"container/heap"
	"container/list"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// KeyFunc names the group of an item: items of one group take turns with
// those of every other group.
type KeyFunc[T comparable] func(T) string

// ByNamespace groups requests by their namespace.
func ByNamespace(r reconcile.Request) string { return r.Namespace }

// Options configure a Queue.
type Options[T comparable] struct {
	// Key names the group of an item. Required (New for requests uses
	// ByNamespace when it is nil).
	Key KeyFunc[T]
	// RateLimiter decides the delay of AddRateLimited. Nil means a per-item
	// exponential backoff from 5 ms to 1000 s, as controller-runtime's.
	RateLimiter workqueue.TypedRateLimiter[T]
	// Metrics makes the queue's metrics. Nil means the workqueue metrics
	// controller-runtime serves (see ControllerRuntimeMetrics).
	Metrics workqueue.MetricsProvider
	// Now is the clock; nil means time.Now. Tests set it with Tick.
	Now func() time.Time
}

// Queue is a controller work queue that is fair across groups of items:
// among the ready items of the highest priority, Get takes one of each
// group in turn, oldest first within a group, so a group with ten
// thousand items waiting delays the items of another by a few turns, not
// by the whole backlog. It has the semantics of controller-runtime's
// priority queue otherwise: an item is in the queue once, at the highest
// priority and the soonest time it was added with; an item added while a
// worker holds it is handed out again after Done; items added with a delay
// or rate-limited wait apart, taking no worker until they are due.
type Queue[T comparable] struct {
	opts    Options[T]
	name    string
	metrics queueMetrics

	mu   sync.Mutex
	cond *sync.Cond
	// items are the queued items, ready or waiting; held those handed out
	// and not Done; again the items added while held.
	items map[T]*entry[T]
	held  map[T]time.Time
	again map[T]*entry[T]
	// levels hold the ready items by priority; prios are the priorities
	// with ready items, highest first.
	levels map[int]*level[T]
	prios  []int
	ready  int
	// waiting holds the items not due yet, soonest first.
	waiting waitHeap[T]
	timer   *time.Timer
	// timerAt is when timer fires; zero when it is stopped.
	timerAt  time.Time
	shutdown bool
	drained  chan struct{}
}

// entry is one queued item.
type entry[T comparable] struct {
	key      T
	group    string
	priority int
	// due is when the item may be handed out; added when it was added.
	due, added time.Time
	// elem is the item's place in its group's list while ready; index
	// its place in waiting while waiting (-1 otherwise).
	elem  *list.Element
	index int
}

// level is the ready items of one priority, by group, with the groups in
// the order they take turns.
type level[T comparable] struct {
	groups map[string]*list.List
	turns  []string
	next   int
}

var _ priorityqueue.PriorityQueue[reconcile.Request] = &Queue[reconcile.Request]{}

// New returns a fair queue of items of type T named name (the name of its
// metrics).
func New[T comparable](name string, opts Options[T]) *Queue[T] {
	if opts.RateLimiter == nil {
		opts.RateLimiter = workqueue.NewTypedItemExponentialFailureRateLimiter[T](5*time.Millisecond, 1000*time.Second)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Key == nil {
		opts.Key = func(T) string { return "" }
	}
	q := &Queue[T]{
		opts:   opts,
		name:   name,
		items:  map[T]*entry[T]{},
		held:   map[T]time.Time{},
		again:  map[T]*entry[T]{},
		levels: map[int]*level[T]{},
	}
	q.metrics = newQueueMetrics(opts.Metrics, name)
	q.cond = sync.NewCond(&q.mu)
	return q
}

// NewQueue returns a constructor of fair queues of requests for
// controller.Options.NewQueue, grouped by key (nil: ByNamespace):
//
//	ctrl.NewControllerManagedBy(mgr).For(&v1.Shop{}).
//		WithOptions(controller.Options{NewQueue: fairqueue.NewQueue(nil)}).
//		Complete(r)
func NewQueue(key KeyFunc[reconcile.Request]) func(string, workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	if key == nil {
		key = ByNamespace
	}
	return func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		return New(name, Options[reconcile.Request]{Key: key, RateLimiter: rl})
	}
}

// Add adds item, ready now, at priority 0.
func (q *Queue[T]) Add(item T) { q.AddWithOpts(priorityqueue.AddOpts{}, item) }

// AddAfter adds item, due after d.
func (q *Queue[T]) AddAfter(item T, d time.Duration) {
	q.AddWithOpts(priorityqueue.AddOpts{After: d}, item)
}

// AddRateLimited adds item, due when the rate limiter says.
func (q *Queue[T]) AddRateLimited(item T) {
	q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true}, item)
}

// AddWithOpts adds items with the delay, rate limiting and priority of o.
// An item already queued keeps the higher of the two priorities and the
// sooner of the two times.
func (q *Queue[T]) AddWithOpts(o priorityqueue.AddOpts, items ...T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shutdown {
		return
	}
	now := q.opts.Now()
	prio := 0
	if o.Priority != nil {
		prio = *o.Priority
	}
	woke := false
	for _, key := range items {
		after := o.After
		if o.RateLimited {
			if rl := q.opts.RateLimiter.When(key); after <= 0 || rl < after {
				after = rl
			}
		}
		if after > 0 {
			q.metrics.retries.Inc()
		}
		due := now.Add(max(after, 0))
		if _, held := q.held[key]; held {
			if e, ok := q.again[key]; ok {
				e.priority = max(e.priority, prio)
				if due.Before(e.due) {
					e.due = due
				}
			} else {
				q.again[key] = &entry[T]{key: key, priority: prio, due: due, added: now, index: -1}
				q.metrics.adds.Inc()
			}
			continue
		}
		e, ok := q.items[key]
		if !ok {
			e = &entry[T]{key: key, group: q.opts.Key(key), priority: prio, due: due, added: now, index: -1}
			q.items[key] = e
			q.metrics.adds.Inc()
			q.metrics.depth.Inc()
			woke = q.place(e, now) || woke
			continue
		}
		if prio <= e.priority && !due.Before(e.due) {
			continue
		}
		q.unplace(e)
		e.priority = max(e.priority, prio)
		if due.Before(e.due) {
			e.due = due
		}
		woke = q.place(e, now) || woke
	}
	q.armTimer(now)
	if woke {
		q.cond.Broadcast()
	}
}

// place puts e among the ready items when it is due, else among the
// waiting ones; it reports whether e is ready.
func (q *Queue[T]) place(e *entry[T], now time.Time) bool {
	if e.due.After(now) {
		heap.Push(&q.waiting, e)
		return false
	}
	l := q.levels[e.priority]
	if l == nil {
		l = &level[T]{groups: map[string]*list.List{}}
		q.levels[e.priority] = l
		i, _ := slices.BinarySearchFunc(q.prios, e.priority, func(a, b int) int { return b - a })
		q.prios = slices.Insert(q.prios, i, e.priority)
	}
	g := l.groups[e.group]
	if g == nil {
		g = list.New()
		l.groups[e.group] = g
		// A group that comes back takes its turn after the others.
		l.turns = slices.Insert(l.turns, l.next, e.group)
		l.next = (l.next + 1) % len(l.turns)
	}
	e.elem = g.PushBack(e)
	q.ready++
	return true
}

// unplace takes e out of the ready or the waiting items.
func (q *Queue[T]) unplace(e *entry[T]) {
	if e.index >= 0 {
		heap.Remove(&q.waiting, e.index)
		return
	}
	if e.elem == nil {
		return
	}
	l := q.levels[e.priority]
	g := l.groups[e.group]
	g.Remove(e.elem)
	e.elem = nil
	q.ready--
	if g.Len() == 0 {
		q.dropGroup(e.priority, l, e.group)
	}
}

// dropGroup forgets the empty group of level l, and the level when it is
// empty.
func (q *Queue[T]) dropGroup(prio int, l *level[T], group string) {
	delete(l.groups, group)
	i := slices.Index(l.turns, group)
	l.turns = slices.Delete(l.turns, i, i+1)
	if i < l.next {
		l.next--
	}
	if len(l.turns) == 0 {
		delete(q.levels, prio)
		q.prios = slices.DeleteFunc(q.prios, func(p int) bool { return p == prio })
		return
	}
	l.next %= len(l.turns)
}

// promote makes the waiting items that are due ready.
func (q *Queue[T]) promote(now time.Time) bool {
	woke := false
	for len(q.waiting) > 0 && !q.waiting[0].due.After(now) {
		e := heap.Pop(&q.waiting).(*entry[T])
		woke = q.place(e, now) || woke
	}
	return woke
}

// armTimer sets the timer to the soonest waiting item.
func (q *Queue[T]) armTimer(now time.Time) {
	if len(q.waiting) == 0 || q.shutdown {
		if q.timer != nil {
			q.timer.Stop()
		}
		q.timerAt = time.Time{}
		return
	}
	at := q.waiting[0].due
	if !q.timerAt.IsZero() && !at.Before(q.timerAt) {
		return
	}
	q.timerAt = at
	d := max(at.Sub(now), 0)
	if q.timer == nil {
		q.timer = time.AfterFunc(d, q.tick)
		return
	}
	q.timer.Reset(d)
}

// tick moves the items that came due to the ready ones.
func (q *Queue[T]) tick() {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.opts.Now()
	q.timerAt = time.Time{}
	if q.promote(now) {
		q.cond.Broadcast()
	}
	q.armTimer(now)
}

// Tick moves the items due by the queue's clock to the ready ones at once;
// tests with a fake clock call it after moving the clock.
func (q *Queue[T]) Tick() { q.tick() }

// Get waits for a ready item and hands it out; shutdown is true when the
// queue is shut down and has no ready item left.
func (q *Queue[T]) Get() (item T, shutdown bool) {
	item, _, shutdown = q.GetWithPriority()
	return item, shutdown
}

// GetWithPriority is Get, with the item's priority.
func (q *Queue[T]) GetWithPriority() (item T, priority int, shutdown bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.ready == 0 && !q.shutdown {
		q.cond.Wait()
	}
	if q.ready == 0 {
		var zero T
		return zero, 0, true
	}
	prio := q.prios[0]
	l := q.levels[prio]
	group := l.turns[l.next]
	g := l.groups[group]
	e := g.Remove(g.Front()).(*entry[T])
	e.elem = nil
	q.ready--
	if g.Len() == 0 {
		q.dropGroup(prio, l, group)
	} else {
		l.next = (l.next + 1) % len(l.turns)
	}
	delete(q.items, e.key)
	now := q.opts.Now()
	q.held[e.key] = now
	q.metrics.depth.Dec()
	q.metrics.latency.Observe(now.Sub(e.added).Seconds())
	return e.key, e.priority, false
}

// Done marks item as processed. If it was added while held, it is queued
// again.
func (q *Queue[T]) Done(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.opts.Now()
	if start, ok := q.held[item]; ok {
		q.metrics.work.Observe(now.Sub(start).Seconds())
		delete(q.held, item)
	}
	if e, ok := q.again[item]; ok {
		delete(q.again, item)
		if !q.shutdown {
			e.group = q.opts.Key(item)
			q.items[item] = e
			q.metrics.depth.Inc()
			if q.place(e, now) {
				q.cond.Broadcast()
			}
			q.armTimer(now)
		}
	}
	if q.shutdown && len(q.held) == 0 && q.drained != nil {
		close(q.drained)
		q.drained = nil
	}
}

// Forget ends the rate limiter's record of item's failures.
func (q *Queue[T]) Forget(item T) { q.opts.RateLimiter.Forget(item) }

// NumRequeues is how many times the rate limiter delayed item.
func (q *Queue[T]) NumRequeues(item T) int { return q.opts.RateLimiter.NumRequeues(item) }

// Len is the number of queued items, ready or waiting.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// ShutDown stops the queue: adds are ignored, and Get returns shutdown
// once the ready items are handed out.
func (q *Queue[T]) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shutdown = true
	if q.timer != nil {
		q.timer.Stop()
	}
	q.cond.Broadcast()
}

// ShutDownWithDrain is ShutDown, then waits until every held item is Done.
func (q *Queue[T]) ShutDownWithDrain() {
	q.mu.Lock()
	q.shutdown = true
	if q.timer != nil {
		q.timer.Stop()
	}
	q.cond.Broadcast()
	if len(q.held) == 0 {
		q.mu.Unlock()
		return
	}
	done := make(chan struct{})
	q.drained = done
	q.mu.Unlock()
	<-done
}

// ShuttingDown reports whether ShutDown was called.
func (q *Queue[T]) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shutdown
}

// waitHeap orders waiting items by when they are due.
type waitHeap[T comparable] []*entry[T]

func (h waitHeap[T]) Len() int           { return len(h) }
func (h waitHeap[T]) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h waitHeap[T]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h *waitHeap[T]) Push(x any) {
	e := x.(*entry[T])
	e.index = len(*h)
	*h = append(*h, e)
}

func (h *waitHeap[T]) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	e.index = -1
	return e
}
