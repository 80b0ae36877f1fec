package bosun

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Enqueuer puts requests into a controller's work queue from outside its
// watches: a timer, a webhook, a message from a system outside
// Kubernetes. Get one from Builder.Enqueuer (or handlers.Set.Enqueuer)
// before Complete; use it from anywhere, at any time.
//
// An Enqueuer never blocks and is safe for concurrent use. Keys enqueued
// before the controller starts (before the manager starts, or while a
// controller set up with WhenServed waits for its kind) are kept and
// handed over when it starts; a key enqueued with a delay then waits only
// what is left of it. Keys enqueued at once and not yet handed over are
// kept once each. After the manager stops, keys are kept and go nowhere.
//
// Requests reach the queue through controller-runtime's channel source
// (source.Channel), so the controller's predicates for kinds do not apply
// to them, and the work queue merges them with the requests of the
// watches as usual: a key already waiting is reconciled once.
type Enqueuer struct {
	mu      sync.Mutex
	pending []enqueued
	// atOnce holds the keys in pending that were enqueued without delay.
	atOnce map[types.NamespacedName]bool
	// wake holds a token when pending may have something to hand over.
	wake chan struct{}
	// events feeds the channel source.
	events  chan event.TypedGenericEvent[enqueued]
	started bool
}

// enqueued is one key waiting to be handed over, with the time from which
// it may be reconciled (zero: at once).
type enqueued struct {
	key types.NamespacedName
	due time.Time
}

// newEnqueuer returns an Enqueuer that is not wired to a controller yet.
func newEnqueuer() *Enqueuer {
	return &Enqueuer{
		atOnce: map[types.NamespacedName]bool{},
		wake:   make(chan struct{}, 1),
		events: make(chan event.TypedGenericEvent[enqueued]),
	}
}

// Enqueue asks for key to be reconciled as soon as a worker is free.
func (e *Enqueuer) Enqueue(key client.ObjectKey) { e.EnqueueAfter(key, 0) }

// EnqueueAfter asks for key to be reconciled once d has passed since the
// call. A d of zero or less is Enqueue.
func (e *Enqueuer) EnqueueAfter(key client.ObjectKey, d time.Duration) {
	it := enqueued{key: key}
	if d > 0 {
		it.due = time.Now().Add(d)
	}
	e.mu.Lock()
	if it.due.IsZero() {
		if e.atOnce[key] {
			e.mu.Unlock()
			return
		}
		e.atOnce[key] = true
	}
	e.pending = append(e.pending, it)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default: // a token is there already
	}
}

// source returns the source that wires e to a controller: a channel
// source, and the goroutine that feeds it from pending once the
// controller starts it.
func (e *Enqueuer) source() source.Source {
	h := handler.TypedFuncs[enqueued, reconcile.Request]{
		GenericFunc: func(_ context.Context, ev event.TypedGenericEvent[enqueued], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			req := reconcile.Request{NamespacedName: ev.Object.key}
			if d := time.Until(ev.Object.due); !ev.Object.due.IsZero() && d > 0 {
				q.AddAfter(req, d)
				return
			}
			q.Add(req)
		},
	}
	return &enqueuerSource{e: e, channel: source.Channel(e.events, h)}
}

// enqueuerSource is the source of an Enqueuer.
type enqueuerSource struct {
	e       *Enqueuer
	channel source.Source
}

// String names the source in the controller's log.
func (s *enqueuerSource) String() string { return "bosun enqueuer" }

// Start starts the channel source and, once, the goroutine that hands the
// pending keys over to it until ctx ends.
func (s *enqueuerSource) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	if err := s.channel.Start(ctx, q); err != nil {
		return err
	}
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	if !s.e.started {
		s.e.started = true
		go s.e.feed(ctx)
	}
	return nil
}

// feed hands the pending keys over to the channel source each time there
// are some, until ctx ends.
func (e *Enqueuer) feed(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.wake:
		}
		e.mu.Lock()
		batch := e.pending
		e.pending = nil
		clear(e.atOnce)
		e.mu.Unlock()
		for _, it := range batch {
			select {
			case e.events <- event.TypedGenericEvent[enqueued]{Object: it}:
			case <-ctx.Done():
				return
			}
		}
	}
}
