package bosun

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/bosunkit/bosun/conditions"
)

// ownWriteDoneFor is how long the entry of a settled object's writes
// stays once the event of its last version came: longer than any watch
// of the kind in the controller takes to be handed the same event.
const ownWriteDoneFor = time.Minute

// ownWriteRequeue is the delay of the requeue that stands in for the
// dropped events of a pass that did not settle: next to nothing, as the
// event would have been.
const ownWriteRequeue = time.Nanosecond

// ownWrites is the engine's record of its own writes to the objects of a
// Reconciler, the fourth stage of a pass: the versions each pass's writes
// made (so that their watch events start no pass; see ownWrite) and the
// versions they wrote over (so that a pass over a cache still behind them
// waits for it, or reads from the API server; see writeMemo). It keeps
// them in the Reconciler's memory, and holds what it needs of the
// Reconciler's settings; Validate makes it, and Build tells it the kind
// and the book of triggers.
type ownWrites[T client.Object] struct {
	memory *objectMemory
	// kind is the reconciled kind, set by Build with the handler of the
	// For watch that drops the events of the engine's own writes; empty,
	// nothing is tracked.
	kind schema.GroupVersionKind
	// book is the controller's book of triggers, set by Build.
	book *triggerBook
	// keepEvents is Options.ReconcileOwnWrites.
	keepEvents bool
	// staleLimit is Options.StaleCacheLimit or its default.
	staleLimit time.Duration
	// skipped counts the events dropped; nil counts nothing.
	skipped prometheus.Counter
	// objType is T's struct type; apiReader reads around the cache, for
	// a pass whose cache is behind its writes for too long (readLive).
	objType   reflect.Type
	apiReader client.Reader
	// swept is when the settled own writes in memory were last swept
	// (UnixNano; see sweep).
	swept atomic.Int64
}

// defaultStaleCacheLimit is how long the engine waits, unless
// Options.StaleCacheLimit says otherwise, for a cache that still holds a
// version it wrote over. After that it reads the object from the API
// server (Reconciler.APIReader) and runs the pass on what it finds there,
// and does so on every pass until the cache catches up: a watch that lost
// the event of the engine's write would otherwise hold the object until
// the informer's next relist.
const defaultStaleCacheLimit = 5 * time.Second

// passWrites is what the writes of one pass did, recorded by its saver
// (saver.write) and handed to the record of own writes when the pass
// ends (close, remember).
type passWrites struct {
	// overwritten are the resource versions this pass's writes replaced
	// with newer ones.
	overwritten []string
	// conflicted is set when a write, the engine's or a step's, was
	// refused with 409 Conflict: the pass is retried soon, and is not a
	// poll.
	conflicted bool
	// mutated is set when the answer of the pass's write of metadata and
	// spec held changes the pass did not send (a mutating webhook's).
	mutated bool
	// own records the versions this pass's writes made; nil until one
	// does.
	own *ownWrite
}

// tracks reports whether the engine drops the events of its own
// writes: a Builder set the predicate that does it, and
// ReconcileOwnWrites does not turn it off.
func (o *ownWrites[T]) tracks() bool {
	return !o.keepEvents && !o.kind.Empty()
}

// begin records that a write of a pass of the object key with uid is on
// its way, in w, the record of the pass's writes, which it makes when w
// is nil; it returns the record.
func (o *ownWrites[T]) begin(key types.NamespacedName, uid types.UID, w *ownWrite, rv string) *ownWrite {
	if !o.tracks() {
		return w
	}
	if w == nil {
		made := &ownWrite{open: true}
		o.memory.amend(key, uid, func(m *remembered) {
			made.versions = nil
			if prev := m.own; prev != nil {
				prev.mu.Lock()
				if !prev.open && !prev.gone {
					// The events of the pass before may still be on
					// their way, to For or to another watch of the kind,
					// even once For has had its last version's.
					made.versions = slices.Clone(prev.versions)
				}
				prev.mu.Unlock()
			}
			m.own = made
		})
		w = made
	}
	w.mu.Lock()
	w.sending++
	w.read = append(w.read, rv)
	w.mu.Unlock()
	return w
}

// end records that the write on its way in w, the record of a pass's
// writes (nil when nothing is tracked), made version rv; empty when it
// failed or changed nothing.
func (o *ownWrites[T]) end(w *ownWrite, rv string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sending--
	if rv == "" {
		return
	}
	w.versions = lastVersions(append(w.versions, rv))
	w.early = slices.DeleteFunc(w.early, func(v string) bool { return v == rv })
}

// close ends the record of the writes of a pass of the object key, which
// left obj and ended with res and err; done is what its writes did. When
// the pass settled, or failed, the events of its versions that are still
// to come are dropped: a failed pass is retried when the rate limiter
// says (a terminal error only after a change), and the event of its own
// status write would bring that retry at once, past the backoff. When the
// pass neither settled nor failed, they are let through, and if some were
// dropped while the pass ran, the object is requeued at once in their
// stead, as they would have done; so it is, settled or not, when an event
// dropped while a write was on its way was not the write's own, and when
// the answer of the pass's write held changes the pass did not send (a
// mutating webhook's): the steps must see them.
func (o *ownWrites[T]) close(key types.NamespacedName, obj client.Object, done passWrites, res ctrl.Result, err error) ctrl.Result {
	w := done.own
	if w == nil {
		return res
	}
	settled := settled(obj, done.conflicted, err) && !done.mutated
	w.mu.Lock()
	defer w.mu.Unlock()
	w.open = false
	foreign := len(w.early) > 0
	w.early = nil
	if !settled && err == nil {
		w.gone = true
		o.dropOwn(key, obj.GetUID(), w)
	}
	switch {
	case err == nil && (foreign || done.mutated || !settled && w.dropped):
		o.book.note(key, o.forUpdate(key))
		res.RequeueAfter = ownWriteRequeue
		res.Priority = nil
	case foreign:
		// The pass failed, and controller-runtime ignores its result: a
		// terminal error is never retried, another one only after the
		// backoff. The change that came during the write was not this
		// pass's, and it gets the pass its event would have brought.
		o.book.enqueue(key, o.forUpdate(key))
	}
	return res
}

// settled reports whether a pass that left obj and ended with err (and a
// write refused with 409 Conflict, when conflicted) left nothing that
// another pass over the same version would do: it succeeded, the object
// is not being deleted, and it reports Ready=True for its current
// generation. Objects without conditions never settle: nothing tells the
// engine that their pass got to the end of the work.
func settled(obj client.Object, conflicted bool, err error) bool {
	if err != nil || conflicted || !obj.GetDeletionTimestamp().IsZero() {
		return false
	}
	co, ok := any(obj).(conditions.Object)
	if !ok {
		return false
	}
	c := conditions.Find(co.GetConditions(), conditions.TypeReady)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == obj.GetGeneration()
}

// forUpdate is the trigger of an update event of the object key.
func (o *ownWrites[T]) forUpdate(key types.NamespacedName) Trigger {
	return Trigger{Kind: triggerWatch, Source: triggerSourceFor, Event: triggerUpdate, GVK: o.kind, Object: key}
}

// forget marks w, the record of the writes to an object whose memory was
// dropped (nil when there was none), no longer the object's.
func (o *ownWrites[T]) forget(w *ownWrite) {
	if w != nil {
		w.mu.Lock()
		w.gone = true
		w.mu.Unlock()
	}
}

// dropOwn drops w from what the engine remembers of the object key with
// uid, if it is still the record of the object's writes.
func (o *ownWrites[T]) dropOwn(key types.NamespacedName, uid types.UID, w *ownWrite) {
	if o.memory.recalled(key, uid).own != w {
		return
	}
	o.memory.amend(key, uid, func(m *remembered) {
		if m.own == w {
			m.own = nil
		}
	})
}

// event reports whether e, an update of the reconciled kind that the For
// watch is handed, is the event of a version the engine wrote, which then
// starts no pass; it counts it. A resync (the same version again) is
// never one.
func (o *ownWrites[T]) event(e event.UpdateEvent) bool {
	rv, w, ok := o.entry(e)
	if !ok {
		return false
	}
	drop, done := o.decide(w, rv)
	if !drop {
		return false
	}
	if o.skipped != nil {
		o.skipped.Inc()
	}
	if !done.IsZero() {
		o.sweep(time.Now())
	}
	return true
}

// seen reports whether e, an update of the reconciled kind that a
// Watches of the kind (a step's or the caller's) is handed, is the event
// of a version the engine wrote, as event would for the For watch: that
// watch then adds no pass of the object written, and the other objects it
// maps the event to are reconciled. An event that comes while a write of
// a pass is on its way, whose version is not known yet, is taken for the
// write's own, as the For watch takes it (see decide): when it was not,
// the pass's end requeues the object (see close).
func (o *ownWrites[T]) seen(e event.UpdateEvent) bool {
	rv, w, ok := o.entry(e)
	if !ok {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.gone:
		return false
	case slices.Contains(w.versions, rv), slices.Contains(w.early, rv):
		return true
	case w.open && w.sending > 0 && !slices.Contains(w.read, rv):
		w.early = append(w.early, rv)
		w.dropped = true
		return true
	}
	return false
}

// entry returns the version of e's object and the entry of the engine's
// writes to it, when e is an update of the reconciled kind to another
// version and the engine drops the events of its writes.
func (o *ownWrites[T]) entry(e event.UpdateEvent) (string, *ownWrite, bool) {
	if o.keepEvents || e.ObjectNew == nil || e.ObjectOld == nil {
		return "", nil, false
	}
	rv := e.ObjectNew.GetResourceVersion()
	if rv == e.ObjectOld.GetResourceVersion() || !o.isForKind(e.ObjectNew) {
		return "", nil, false
	}
	w := o.memory.recalled(client.ObjectKeyFromObject(e.ObjectNew), e.ObjectNew.GetUID()).own
	if w == nil {
		return "", nil, false
	}
	return rv, w, true
}

// decide reports whether the event of version rv, whose entry is w, is of
// a write of the engine, and, when w's last version's event has come,
// since when.
func (o *ownWrites[T]) decide(w *ownWrite, rv string) (bool, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gone {
		return false, time.Time{}
	}
	i := slices.Index(w.versions, rv)
	switch {
	case i >= 0 && w.open:
		w.dropped = true
	case i >= 0 && i == len(w.versions)-1:
		// The last version's event has come. The other watches of the
		// kind (a step's watch of its parents, a reference's watch) are
		// handed the same events in their own time, and may not have had
		// the earlier ones yet: the entry keeps every version for a
		// while, so that they find each one the engine's too.
		if w.doneAt.IsZero() {
			w.doneAt = time.Now()
		}
	case i >= 0:
	case w.open && w.sending > 0 && !slices.Contains(w.read, rv):
		// Perhaps the write's own, ahead of its answer. (Not when it is
		// the version the write replaces: the event of that one came
		// late.)
		w.early = append(w.early, rv)
		w.dropped = true
	default:
		// Another's change. Another watch of the kind may still have the
		// entry's versions to come: the entry stays until it is swept.
		return false, time.Time{}
	}
	return true, w.doneAt
}

// sweep drops, at most once per ownWriteDoneFor, the entries whose last
// version's event came more than ownWriteDoneFor before now.
func (o *ownWrites[T]) sweep(now time.Time) {
	last := o.swept.Load()
	if now.UnixNano()-last < int64(ownWriteDoneFor) || !o.swept.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	o.memory.Range(func(key types.NamespacedName, uid types.UID, m remembered) bool {
		w := m.own
		if w == nil {
			return true
		}
		w.mu.Lock()
		old := !w.open && !w.doneAt.IsZero() && now.Sub(w.doneAt) >= ownWriteDoneFor
		if old {
			w.gone = true
		}
		w.mu.Unlock()
		if old {
			o.dropOwn(key, uid, w)
		}
		return true
	})
}

// isForKind reports whether obj, from an event the controller watches, is
// of the reconciled kind: a T, or its metadata when the Builder's For asked
// for metadata only.
func (o *ownWrites[T]) isForKind(obj client.Object) bool {
	if _, ok := obj.(T); ok {
		return true
	}
	pm, ok := obj.(*metav1.PartialObjectMetadata)
	return ok && pm.GroupVersionKind() == o.kind
}

// forgetGone forgets the object obj, whose delete event the For watch was
// handed (which the engine sees even when something between the queue and
// the engine drops the request), and notes its UID for gone.For: a pass
// that was running then leaves nothing in memory. A pass that begins
// later, of an object back in the cache, keeps what it records. An object
// made again under the same name since is not forgotten.
func (o *ownWrites[T]) forgetGone(obj client.Object) {
	if !o.isForKind(obj) {
		return
	}
	if m, ok := o.memory.Forget(client.ObjectKeyFromObject(obj), obj.GetUID()); ok {
		o.forget(m.own)
	}
}

// forgetKey drops what the engine remembers of the object key, which is
// gone or has left the cache: deleted, or, in a cache that holds a share
// of the objects (a label selector, as with sharding), no longer in it.
// It runs on the request of an object not found.
func (o *ownWrites[T]) forgetKey(key types.NamespacedName) {
	if m, ok := o.memory.Forget(key, ""); ok {
		o.forget(m.own)
	}
}

// ownWriteHandler is the For watch's handler as the informer calls it:
// the update events of the engine's own writes go no further, not even to
// the watch's predicates (see Options.ReconcileOwnWrites), and a delete
// event makes the engine forget what it remembers of the object (see
// ownWrites.forgetGone) before the predicates see it, whatever they
// do with it. It wraps the For watch alone: the options of For set its
// predicates rather than add to them, and a predicate of the whole
// controller would drop the event for every watch of the kind, where
// the other watches map it to other objects (see notingHandler).
type ownWriteHandler struct {
	toolscache.ResourceEventHandler
	own *ownEventsRef
}

func (h ownWriteHandler) OnUpdate(oldObj, newObj any) {
	if w := h.own.get(); w != nil {
		o, okOld := oldObj.(client.Object)
		n, okNew := newObj.(client.Object)
		if okOld && okNew && w.event(event.UpdateEvent{ObjectOld: o, ObjectNew: n}) {
			return
		}
	}
	h.ResourceEventHandler.OnUpdate(oldObj, newObj)
}

func (h ownWriteHandler) OnDelete(obj any) {
	if w := h.own.get(); w != nil {
		o := obj
		if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			o = tomb.Obj
		}
		if co, ok := o.(client.Object); ok {
			w.forgetGone(co)
		}
	}
	h.ResourceEventHandler.OnDelete(obj)
}

// past returns obj, the object as the cache holds it, unless the
// cache still holds a version this reconciler wrote over: then, within
// StaleCacheLimit, wait is true (the watch event of the newer version
// reconciles the object again); after it, the object is read from the API
// server, and carried are the versions the cache may still hand out.
func (o *ownWrites[T]) past(ctx context.Context, key types.NamespacedName, obj T) (_ T, carried []string, wait bool, _ error) {
	log := ctrl.LoggerFrom(ctx)
	memo, stale := o.stale(key, obj.GetUID(), obj.GetResourceVersion())
	if !stale {
		return obj, nil, false, nil
	}
	if time.Since(memo.behindSince) < o.staleLimit {
		log.V(1).Info("cache behind own writes, waiting for it")
		return obj, nil, true, nil
	}
	live, ok, err := o.readLive(ctx, key, memo)
	if err != nil || !ok {
		return obj, nil, true, err
	}
	log.V(1).Info("cache behind own writes for too long, reading from the API server",
		"behindFor", time.Since(memo.behindSince).Round(time.Millisecond))
	return live, memo.versions, false, nil
}

// remember records, after a pass of the object key with uid, the
// versions it wrote over (overwritten) with those carried from an earlier
// pass, so that a pass over a cache that still holds one of them waits for
// the cache.
func (o *ownWrites[T]) remember(key types.NamespacedName, uid types.UID, carried, overwritten []string) {
	var memo *writeMemo
	if len(overwritten) > 0 {
		memo = &writeMemo{versions: lastVersions(slices.Concat(carried, overwritten))}
	} else if len(carried) > 0 {
		// Nothing written, but the cache is still behind: the next pass
		// reads from the API server again at once.
		memo = &writeMemo{versions: carried, behindSince: time.Now().Add(-o.staleLimit)}
	} else {
		return
	}
	o.memory.amend(key, uid, func(m *remembered) { m.written = memo })
}

// maxMemoVersions bounds the versions a writeMemo keeps while passes read
// from the API server and add theirs to those the cache may still return.
const maxMemoVersions = 64

// lastVersions keeps the newest maxMemoVersions of versions.
func lastVersions(versions []string) []string {
	if len(versions) > maxMemoVersions {
		versions = versions[len(versions)-maxMemoVersions:]
	}
	return versions
}

// stale reports whether rv is a version of the object that the last pass of
// this reconciler wrote over, with what is remembered of that pass, and
// forgets the pass when rv is not one of them. The first time it finds the
// cache behind it notes the time.
func (o *ownWrites[T]) stale(key types.NamespacedName, uid types.UID, rv string) (*writeMemo, bool) {
	memo := o.memory.recalled(key, uid).written
	if memo == nil {
		return nil, false
	}
	if !slices.Contains(memo.versions, rv) {
		o.memory.amend(key, uid, func(m *remembered) {
			if m.written == memo {
				m.written = nil
			}
		})
		return nil, false
	}
	if memo.behindSince.IsZero() {
		noted := &writeMemo{versions: memo.versions, behindSince: time.Now()}
		swapped := false
		o.memory.amend(key, uid, func(m *remembered) {
			if swapped = m.written == memo; swapped {
				m.written = noted
			}
		})
		if swapped {
			memo = noted
		}
	}
	return memo, true
}

// readLive reads the object from the API server for a pass that has
// waited StaleCacheLimit for the cache. It reports false, and no error,
// when what it read is still a version the engine wrote over (an APIReader
// that is itself a cache) or the object is gone, which the cache will tell.
func (o *ownWrites[T]) readLive(ctx context.Context, key types.NamespacedName, memo *writeMemo) (T, bool, error) {
	live := reflect.New(o.objType).Interface().(T)
	if err := o.apiReader.Get(ctx, key, live); err != nil {
		if apierrors.IsNotFound(err) {
			return live, false, nil
		}
		return live, false, fmt.Errorf("loading %s from the API server: %w", key, err)
	}
	return live, !slices.Contains(memo.versions, live.GetResourceVersion()), nil
}

// forWatchManager is the manager a controller's watches are made from:
// the manager it wraps, but that the handler of the For watch drops the
// events of the engine's own writes (ownWriteHandler). controller-runtime's
// builder asks the cache for the informer of the very object given to
// For, and adds the watch's handler to it; predicates cannot do this, as
// For's options set its predicates rather than add to them.
type forWatchManager struct {
	manager.Manager
	cache *forWatchCache
}

// newForWatchManager wraps mgr for a controller's builder.
func newForWatchManager(mgr manager.Manager) *forWatchManager {
	return &forWatchManager{Manager: mgr, cache: &forWatchCache{Cache: mgr.GetCache()}}
}

// GetCache returns the cache whose For informer drops own writes.
func (m *forWatchManager) GetCache() cache.Cache { return m.cache }

// watchFor makes the handler of the watch made from obj, the For watch's,
// an ownWriteHandler over own.
func (m *forWatchManager) watchFor(obj client.Object, own *ownEventsRef) {
	m.cache.mu.Lock()
	m.cache.forObj, m.cache.own = obj, own
	m.cache.mu.Unlock()
}

// forWatchCache is a manager's cache, but that the informer of forObj
// wraps the handlers added to it in an ownWriteHandler.
type forWatchCache struct {
	cache.Cache

	mu     sync.Mutex
	forObj client.Object
	own    *ownEventsRef
}

// GetInformer returns the informer of obj, which for the For watch's
// object wraps its handlers.
func (c *forWatchCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	inf, err := c.Cache.GetInformer(ctx, obj, opts...)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	var own *ownEventsRef
	if c.forObj != nil && obj == c.forObj {
		own = c.own
	}
	c.mu.Unlock()
	if own == nil {
		return inf, nil
	}
	return forInformer{Informer: inf, own: own}, nil
}

// forInformer is the For watch's informer: its handlers are
// ownWriteHandlers.
type forInformer struct {
	cache.Informer
	own *ownEventsRef
}

func (i forInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.Informer.AddEventHandler(ownWriteHandler{ResourceEventHandler: h, own: i.own})
}

func (i forInformer) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, d time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.Informer.AddEventHandlerWithResyncPeriod(ownWriteHandler{ResourceEventHandler: h, own: i.own}, d)
}

func (i forInformer) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, o toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.Informer.AddEventHandlerWithOptions(ownWriteHandler{ResourceEventHandler: h, own: i.own}, o)
}
