package bosun

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Trigger sources, as Trigger.Source names them.
const (
	triggerSourceFor       = "For"
	triggerSourceOwns      = "Owns"
	triggerSourceWatches   = "Watches"
	triggerSourceRaw       = "WatchesRawSource"
	triggerSourceNamespace = "NamespacePolicy"
)

// Watch events, as Trigger.Event names them.
const (
	triggerCreate  = "Create"
	triggerUpdate  = "Update"
	triggerDelete  = "Delete"
	triggerGeneric = "Generic"
)

// maxTriggers bounds what a triggerBook holds: keys beyond it run their
// passes with triggerUnknown rather than grow the memory without end.
const maxTriggers = 1 << 16

// triggerBook records why keys went into a controller's queue, until their
// next pass takes the record.
//
// Events of the reconciled kind and of owned kinds go through
// controller-runtime's own handlers, which bosun cannot wrap: a predicate
// that runs for every event writes a candidate for the key the handler
// will enqueue, and the controller's queue makes the candidate the key's
// trigger when the handler does add the key (a later predicate may have
// dropped the event). Handlers and sources bosun does wrap (Watches,
// WatchesRawSource, the namespace policy watch, the Enqueuer) write the
// trigger directly. The engine records its own requeues when a pass ends.
type triggerBook struct {
	// pending holds the trigger of each key in the queue.
	pending sync.Map // types.NamespacedName -> Trigger
	// candidates holds the last event seen for each key, not yet known to
	// have reached the queue.
	candidates sync.Map // types.NamespacedName -> Trigger
	// requeued holds the kind of the requeue the last pass asked for.
	requeued sync.Map // types.NamespacedName -> string (a Trigger.Kind)
	size     atomic.Int64
	// queue is the controller's queue, once the controller is built.
	queue atomic.Pointer[workqueue.TypedRateLimitingInterface[reconcile.Request]]
}

func newTriggerBook() *triggerBook { return &triggerBook{} }

// note records t as the trigger of key, unless the key already has one:
// the first cause of a queued key is the one its pass answers.
func (b *triggerBook) note(key types.NamespacedName, t Trigger) {
	if b == nil {
		return
	}
	if _, ok := b.pending.Load(key); ok {
		return
	}
	if b.size.Load() >= maxTriggers {
		return
	}
	if _, loaded := b.pending.LoadOrStore(key, t); !loaded {
		b.size.Add(1)
	}
}

// candidate records the event t for key, to become its trigger if a
// handler adds the key to the queue (see confirm).
func (b *triggerBook) candidate(key types.NamespacedName, t Trigger) {
	if b.size.Load() >= maxTriggers {
		return
	}
	if _, loaded := b.candidates.Swap(key, t); !loaded {
		b.size.Add(1)
	}
}

// confirm makes the candidate of key, if any, its trigger: a handler
// added the key to the queue.
func (b *triggerBook) confirm(key types.NamespacedName) {
	t, ok := b.candidates.LoadAndDelete(key)
	if !ok {
		return
	}
	b.size.Add(-1)
	b.note(key, t.(Trigger))
}

// dropCandidate forgets the candidate t of key: no pass of key comes of
// the event noted (one of the engine's own writes, which a Watches of the
// reconciled kind was handed). A candidate of another event is kept.
func (b *triggerBook) dropCandidate(key types.NamespacedName, t Trigger) {
	if b == nil {
		return
	}
	if b.candidates.CompareAndDelete(key, t) {
		b.size.Add(-1)
	}
}

// requeue records the requeue a pass of key asked for; ok false means
// it asked for none.
func (b *triggerBook) requeue(key types.NamespacedName, kind string, ok bool) {
	if b == nil {
		return
	}
	if !ok {
		b.requeued.Delete(key)
		return
	}
	b.requeued.Store(key, kind)
}

// take returns and forgets why the pass of key runs now.
func (b *triggerBook) take(key types.NamespacedName) Trigger {
	if b == nil {
		return Trigger{Kind: triggerUnknown}
	}
	if v, ok := b.pending.LoadAndDelete(key); ok {
		b.size.Add(-1)
		b.requeued.Delete(key)
		return v.(Trigger)
	}
	if v, ok := b.requeued.LoadAndDelete(key); ok {
		return Trigger{Kind: v.(string)}
	}
	return Trigger{Kind: triggerUnknown}
}

// forget drops everything recorded of key, whose object is gone.
func (b *triggerBook) forget(key types.NamespacedName) {
	if b == nil {
		return
	}
	if _, ok := b.pending.LoadAndDelete(key); ok {
		b.size.Add(-1)
	}
	if _, ok := b.candidates.LoadAndDelete(key); ok {
		b.size.Add(-1)
	}
	b.requeued.Delete(key)
}

// wrapQueue returns q, keeping its priority queue methods when it has
// them, with adds from event handlers confirming the candidates of their
// keys.
func (b *triggerBook) wrapQueue(q workqueue.TypedRateLimitingInterface[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	var w workqueue.TypedRateLimitingInterface[reconcile.Request]
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		w = &confirmingPriorityQueue{PriorityQueue: pq, book: b}
	} else {
		w = &confirmingQueue{TypedRateLimitingInterface: q, book: b}
	}
	b.queue.Store(&w)
	return w
}

// busy reports whether the controller's queue holds other requests than
// the ones its workers hold.
func (b *triggerBook) busy() bool {
	if b == nil {
		return false
	}
	q := b.queue.Load()
	return q != nil && (*q).Len() > 0
}

// enqueue adds key to the controller's queue at once with the trigger t,
// whatever its pass in progress returns: the queue hands it out again
// when that pass is done. It reports false when the controller has no
// queue yet.
func (b *triggerBook) enqueue(key types.NamespacedName, t Trigger) bool {
	if b == nil {
		return false
	}
	q := b.queue.Load()
	if q == nil {
		return false
	}
	b.note(key, t)
	(*q).Add(reconcile.Request{NamespacedName: key})
	return true
}

// enqueueAfter adds key to the controller's queue once d has passed, as a
// requeue of the engine's, whatever its pass in progress returns. It does
// nothing when the controller has no queue yet (a Reconciler set up
// without ControllerManagedBy).
func (b *triggerBook) enqueueAfter(key types.NamespacedName, d time.Duration) {
	if b == nil {
		return
	}
	if q := b.queue.Load(); q != nil {
		(*q).AddAfter(reconcile.Request{NamespacedName: key}, d)
	}
}

// confirmingQueue is a controller's queue that confirms candidates on Add,
// the call handlers make. AddAfter and AddRateLimited are the engine's
// requeues, which it records itself.
type confirmingQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	book *triggerBook
}

func (q *confirmingQueue) Add(item reconcile.Request) {
	q.book.confirm(item.NamespacedName)
	q.TypedRateLimitingInterface.Add(item)
}

// confirmingPriorityQueue is confirmingQueue for a priority queue, whose
// handlers add with AddWithOpts and no delay.
type confirmingPriorityQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	book *triggerBook
}

func (q *confirmingPriorityQueue) Add(item reconcile.Request) {
	q.book.confirm(item.NamespacedName)
	q.PriorityQueue.Add(item)
}

func (q *confirmingPriorityQueue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	if o.After == 0 && !o.RateLimited {
		for _, it := range items {
			q.book.confirm(it.NamespacedName)
		}
	}
	q.PriorityQueue.AddWithOpts(o, items...)
}

// notingQueue is the queue a wrapped handler or source sees: every key it
// adds gets its trigger. Adds of skip, when it is set, add nothing.
type notingQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	book *triggerBook
	t    Trigger
	skip types.NamespacedName
}

func (q *notingQueue) Add(item reconcile.Request) {
	if item.NamespacedName == q.skip {
		return
	}
	q.book.note(item.NamespacedName, q.t)
	q.TypedRateLimitingInterface.Add(item)
}

func (q *notingQueue) AddAfter(item reconcile.Request, d time.Duration) {
	if item.NamespacedName == q.skip {
		return
	}
	q.book.note(item.NamespacedName, q.t)
	q.TypedRateLimitingInterface.AddAfter(item, d)
}

func (q *notingQueue) AddRateLimited(item reconcile.Request) {
	if item.NamespacedName == q.skip {
		return
	}
	q.book.note(item.NamespacedName, q.t)
	q.TypedRateLimitingInterface.AddRateLimited(item)
}

// notingPriorityQueue is notingQueue for a priority queue.
type notingPriorityQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	book *triggerBook
	t    Trigger
	skip types.NamespacedName
}

func (q *notingPriorityQueue) Add(item reconcile.Request) {
	if item.NamespacedName == q.skip {
		return
	}
	q.book.note(item.NamespacedName, q.t)
	q.PriorityQueue.Add(item)
}

func (q *notingPriorityQueue) AddAfter(item reconcile.Request, d time.Duration) {
	if item.NamespacedName == q.skip {
		return
	}
	q.book.note(item.NamespacedName, q.t)
	q.PriorityQueue.AddAfter(item, d)
}

func (q *notingPriorityQueue) AddRateLimited(item reconcile.Request) {
	if item.NamespacedName == q.skip {
		return
	}
	q.book.note(item.NamespacedName, q.t)
	q.PriorityQueue.AddRateLimited(item)
}

func (q *notingPriorityQueue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	if q.skip != (types.NamespacedName{}) {
		items = slices.DeleteFunc(slices.Clone(items), func(it reconcile.Request) bool { return it.NamespacedName == q.skip })
	}
	for _, it := range items {
		q.book.note(it.NamespacedName, q.t)
	}
	if len(items) > 0 {
		q.PriorityQueue.AddWithOpts(o, items...)
	}
}

// noting returns q with every add recording t.
func (b *triggerBook) noting(q workqueue.TypedRateLimitingInterface[reconcile.Request], t Trigger) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return b.notingBut(q, t, types.NamespacedName{})
}

// notingBut is noting, but that the adds of skip, when it is set, add
// nothing.
func (b *triggerBook) notingBut(q workqueue.TypedRateLimitingInterface[reconcile.Request], t Trigger, skip types.NamespacedName) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		return &notingPriorityQueue{PriorityQueue: pq, book: b, t: t, skip: skip}
	}
	return &notingQueue{TypedRateLimitingInterface: q, book: b, t: t, skip: skip}
}

// notingHandler wraps a handler of a Watches call: the keys it adds get
// the event as their trigger. Of the update event of one of the engine's
// own writes (a Watches of the reconciled kind), the handler adds no pass
// of the object written, and the other objects it maps it to are
// reconciled.
type notingHandler struct {
	inner  handler.EventHandler
	book   *triggerBook
	own    *ownEventsRef
	source string
	gvk    schema.GroupVersionKind
}

func (h *notingHandler) trigger(event string, obj client.Object) Trigger {
	t := Trigger{Kind: triggerWatch, Source: h.source, Event: event, GVK: h.gvk}
	if obj != nil {
		t.Object = client.ObjectKeyFromObject(obj)
	}
	return t
}

func (h *notingHandler) Create(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.inner.Create(ctx, e, h.book.noting(q, h.trigger(triggerCreate, e.Object)))
}

func (h *notingHandler) Update(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	var skip types.NamespacedName
	if w := h.own.get(); w != nil && w.seen(e) {
		skip = client.ObjectKeyFromObject(e.ObjectNew)
		h.book.dropCandidate(skip, Trigger{Kind: triggerWatch, Source: triggerSourceFor, Event: triggerUpdate, GVK: h.gvk, Object: skip})
	}
	h.inner.Update(ctx, e, h.book.notingBut(q, h.trigger(triggerUpdate, e.ObjectNew), skip))
}

func (h *notingHandler) Delete(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.inner.Delete(ctx, e, h.book.noting(q, h.trigger(triggerDelete, e.Object)))
}

func (h *notingHandler) Generic(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.inner.Generic(ctx, e, h.book.noting(q, h.trigger(triggerGeneric, e.Object)))
}

// notingSource wraps a raw source: the keys it adds get a triggerWatch
// naming it.
type notingSource struct {
	inner source.TypedSource[reconcile.Request]
	book  *triggerBook
	t     Trigger
}

func (s *notingSource) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	return s.inner.Start(ctx, s.book.noting(q, s.t))
}

func (s *notingSource) String() string {
	if st, ok := s.inner.(interface{ String() string }); ok {
		return st.String()
	}
	return triggerSourceRaw
}

// notingSyncingSource is notingSource for a source the controller waits
// on before it starts its workers.
type notingSyncingSource struct {
	notingSource
	syncing source.TypedSyncingSource[reconcile.Request]
}

func (s *notingSyncingSource) WaitForSync(ctx context.Context) error {
	return s.syncing.WaitForSync(ctx)
}

// wrapSource returns src with its adds recording t.
func (b *triggerBook) wrapSource(src source.TypedSource[reconcile.Request], t Trigger) source.TypedSource[reconcile.Request] {
	if b == nil || src == nil {
		return src
	}
	ns := notingSource{inner: src, book: b, t: t}
	if ss, ok := src.(source.TypedSyncingSource[reconcile.Request]); ok {
		return &notingSyncingSource{notingSource: ns, syncing: ss}
	}
	return &ns
}

// candidatePredicate writes, for every event of the reconciled kind or
// of an owned kind, the candidate trigger of the key the handler will
// enqueue. It never filters.
type candidatePredicate struct {
	book   *triggerBook
	scheme *runtime.Scheme
	// forGVK is the reconciled kind, owned the owned kinds.
	forGVK schema.GroupVersionKind
	owned  map[schema.GroupVersionKind]bool
	// clusterScoped is true when the reconciled kind is cluster-scoped,
	// so that owners have no namespace.
	clusterScoped bool
}

func (p *candidatePredicate) see(event string, obj client.Object) {
	if obj == nil {
		return
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Empty() {
		g, err := apiutil.GVKForObject(obj, p.scheme)
		if err != nil {
			return
		}
		gvk = g
	}
	key := client.ObjectKeyFromObject(obj)
	if gvk == p.forGVK {
		p.book.candidate(key, Trigger{Kind: triggerWatch, Source: triggerSourceFor, Event: event, GVK: gvk, Object: key})
		return
	}
	if !p.owned[gvk] {
		return
	}
	for _, ref := range obj.GetOwnerReferences() {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil || gv.Group != p.forGVK.Group || ref.Kind != p.forGVK.Kind {
			continue
		}
		owner := types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}
		if p.clusterScoped {
			owner.Namespace = ""
		}
		p.book.candidate(owner, Trigger{Kind: triggerWatch, Source: triggerSourceOwns, Event: event, GVK: gvk, Object: key})
	}
}

func (p *candidatePredicate) Create(e event.CreateEvent) bool {
	p.see(triggerCreate, e.Object)
	return true
}

func (p *candidatePredicate) Update(e event.UpdateEvent) bool {
	p.see(triggerUpdate, e.ObjectNew)
	return true
}

func (p *candidatePredicate) Delete(e event.DeleteEvent) bool {
	p.see(triggerDelete, e.Object)
	return true
}

func (p *candidatePredicate) Generic(e event.GenericEvent) bool {
	p.see(triggerGeneric, e.Object)
	return true
}

var _ predicate.Predicate = &candidatePredicate{}

// ownWriteEvents is what the watches of a controller ask of the record of
// its Reconciler's own writes (ownWrites implements it).
type ownWriteEvents interface {
	// event reports whether the For watch drops e (see ownWrites.event).
	event(e event.UpdateEvent) bool
	// seen reports whether a Watches of the kind adds no pass of the
	// object of e (see ownWrites.seen).
	seen(e event.UpdateEvent) bool
	// forgetGone forgets obj, whose delete event the For watch was
	// handed (see ownWrites.forgetGone).
	forgetGone(obj client.Object)
}

// ownEventsRef hands the record of a Reconciler's own writes to the
// watches of its controller, which are made before the Builder has the
// Reconciler: nil until the controller is built.
type ownEventsRef struct {
	p atomic.Pointer[ownWriteEvents]
}

func (r *ownEventsRef) get() ownWriteEvents {
	if r == nil {
		return nil
	}
	if p := r.p.Load(); p != nil {
		return *p
	}
	return nil
}

func (r *ownEventsRef) set(w ownWriteEvents) { r.p.Store(&w) }
