package bosun

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

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

// tracks reports whether the engine drops the events of its own
// writes: a Builder set the predicate that does it, and
// ReconcileOwnWrites does not turn it off.
func (o ownWrites[T]) tracks() bool {
	return !o.Options.ReconcileOwnWrites && !o.forGVK.Empty()
}

// begin records that a write of the pass is on its way.
func (o ownWrites[T]) begin(ps *passState[T]) {
	if !o.tracks() {
		return
	}
	if ps.own == nil {
		w := &ownWrite{open: true}
		if v, ok := o.own.Load(ps.key); ok {
			prev := v.(*ownWrite)
			prev.mu.Lock()
			if !prev.open && prev.doneAt.IsZero() {
				w.versions = slices.Clone(prev.versions)
			}
			prev.mu.Unlock()
		}
		ps.own = w
		o.own.Store(ps.key, w)
	}
	ps.own.mu.Lock()
	ps.own.sending++
	ps.own.mu.Unlock()
}

// end records that the write on its way made version rv; empty
// when it failed or changed nothing.
func (o ownWrites[T]) end(ps *passState[T], rv string) {
	w := ps.own
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

// close ends the pass's record of its writes. When the pass
// settled, or failed, the events of its versions that are still to come
// are dropped: a failed pass is retried when the rate limiter says (a
// terminal error only after a change), and the event of its own status
// write would bring that retry at once, past the backoff. When the pass
// neither settled nor failed, they are let through, and if some were
// dropped while the pass ran, the object is requeued at once in their
// stead, as they would have done; so it is, settled or not, when an event
// dropped while a write was on its way was not the write's own, and when
// the answer of the pass's write held changes the pass did not send (a
// mutating webhook's): the steps must see them.
func (o ownWrites[T]) close(ps *passState[T], res ctrl.Result, err error) ctrl.Result {
	w := ps.own
	if w == nil {
		return res
	}
	settled := o.settled(ps, err) && !ps.mutated
	w.mu.Lock()
	defer w.mu.Unlock()
	w.open = false
	foreign := len(w.early) > 0
	w.early = nil
	if !settled && err == nil {
		w.gone = true
		o.own.CompareAndDelete(ps.key, w)
	}
	switch {
	case err == nil && (foreign || ps.mutated || !settled && w.dropped):
		o.book.note(ps.key, o.forUpdate(ps.key))
		res.RequeueAfter = ownWriteRequeue
		res.Priority = nil
	case foreign:
		// The pass failed, and controller-runtime ignores its result: a
		// terminal error is never retried, another one only after the
		// backoff. The change that came during the write was not this
		// pass's, and it gets the pass its event would have brought.
		o.book.enqueue(ps.key, o.forUpdate(ps.key))
	}
	return res
}

// settled reports whether a pass that ended with res and err left nothing
// that another pass over the same version would do: it succeeded, the
// object is not being deleted, and it reports Ready=True for its current
// generation. Objects without conditions never settle: nothing tells the
// engine that their pass got to the end of the work.
func (o ownWrites[T]) settled(ps *passState[T], err error) bool {
	obj := ps.req.Object
	if err != nil || ps.conflicted || !obj.GetDeletionTimestamp().IsZero() {
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
func (o ownWrites[T]) forUpdate(key types.NamespacedName) Trigger {
	return Trigger{Kind: triggerWatch, Source: triggerSourceFor, Event: triggerUpdate, GVK: o.forGVK, Object: key}
}

// forget drops what is remembered of the writes to key, whose
// object is gone.
func (o ownWrites[T]) forget(key types.NamespacedName) {
	if v, ok := o.own.LoadAndDelete(key); ok {
		w := v.(*ownWrite)
		w.mu.Lock()
		w.gone = true
		w.mu.Unlock()
	}
}

// event reports whether e, an update of the reconciled kind, is
// the event of a version the engine wrote, which then starts no pass. A
// resync (the same version again) is never one.
func (o ownWrites[T]) event(e event.UpdateEvent) bool {
	if o.Options.ReconcileOwnWrites || e.ObjectNew == nil || e.ObjectOld == nil {
		return false
	}
	rv := e.ObjectNew.GetResourceVersion()
	if rv == e.ObjectOld.GetResourceVersion() || !o.isForKind(e.ObjectNew) {
		return false
	}
	key := client.ObjectKeyFromObject(e.ObjectNew)
	v, ok := o.own.Load(key)
	if !ok {
		return false
	}
	w := v.(*ownWrite)
	drop, done := o.decide(key, w, rv)
	if !drop {
		return false
	}
	o.book.dropCandidate(key, o.forUpdate(key))
	if !done.IsZero() {
		o.sweep(time.Now())
	}
	return true
}

// decide reports whether the event of version rv of key, whose entry is
// w, is of a write of the engine, and, when w's last version's event has
// come, since when.
func (o ownWrites[T]) decide(key types.NamespacedName, w *ownWrite, rv string) (bool, time.Time) {
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
		// The last version's event has come: none of the others can. The
		// entry keeps that version alone for a while, for the other
		// watches of the kind that are handed the same event (a step's
		// watch of its parents beside For): the first watch to see an
		// event must not take the decision away from the rest.
		if w.doneAt.IsZero() {
			w.versions, w.doneAt = w.versions[i:], time.Now()
		}
	case i >= 0:
	case w.open && w.sending > 0:
		// Perhaps the write's own, ahead of its answer.
		w.early = append(w.early, rv)
		w.dropped = true
	default:
		if !w.doneAt.IsZero() {
			// Another's change after a settled pass: nothing of the
			// entry can come any more.
			w.gone = true
			o.own.CompareAndDelete(key, w)
		}
		return false, time.Time{}
	}
	if w.counted != rv && o.prep != nil && o.prep.metrics != nil {
		o.prep.metrics.ownWriteSkipped.Inc()
	}
	w.counted = rv
	return true, w.doneAt
}

// sweep drops, at most once per ownWriteDoneFor, the entries whose last
// version's event came more than ownWriteDoneFor before now.
func (o ownWrites[T]) sweep(now time.Time) {
	last := o.ownSwept.Load()
	if now.UnixNano()-last < int64(ownWriteDoneFor) || !o.ownSwept.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	o.own.Range(func(k, v any) bool {
		w := v.(*ownWrite)
		w.mu.Lock()
		old := !w.open && !w.doneAt.IsZero() && now.Sub(w.doneAt) >= ownWriteDoneFor
		if old {
			w.gone = true
		}
		w.mu.Unlock()
		if old {
			o.own.CompareAndDelete(k, w)
		}
		return true
	})
}

// isForKind reports whether obj, from an event the controller watches, is
// of the reconciled kind: a T, or its metadata when the Builder's For asked
// for metadata only.
func (o ownWrites[T]) isForKind(obj client.Object) bool {
	if _, ok := obj.(T); ok {
		return true
	}
	pm, ok := obj.(*metav1.PartialObjectMetadata)
	return ok && pm.GroupVersionKind() == o.forGVK
}

// ownWritePredicate drops the events of the reconciled kind that the
// engine's own writes caused (see Options.ReconcileOwnWrites), and
// forgets what the engine remembers of an object when its delete event
// comes (see Reconciler.forgetObject). It is
// one of the controller's event filters, since the options of For set its
// predicates rather than add to them; it passes every event of other
// kinds.
type ownWritePredicate[T client.Object] struct {
	predicate.Funcs
	r *Reconciler[T]
}

func newOwnWritePredicate[T client.Object](r *Reconciler[T], gvk schema.GroupVersionKind) predicate.Predicate {
	r.forGVK = gvk
	return ownWritePredicate[T]{r: r}
}

func (p ownWritePredicate[T]) Update(e event.UpdateEvent) bool { return !p.r.ownWrites().event(e) }

// Delete forgets what the engine remembers of the object, which has gone
// from the cache, and passes the event.
func (p ownWritePredicate[T]) Delete(e event.DeleteEvent) bool {
	if e.Object != nil && p.r.ownWrites().isForKind(e.Object) {
		p.r.forgetGone(e.Object)
	}
	return true
}

// past returns obj, the object as the cache holds it, unless the
// cache still holds a version this reconciler wrote over: then, within
// StaleCacheLimit, wait is true (the watch event of the newer version
// reconciles the object again); after it, the object is read from the API
// server, and carried are the versions the cache may still hand out.
func (o ownWrites[T]) past(ctx context.Context, key types.NamespacedName, obj T) (_ T, carried []string, wait bool, _ error) {
	log := ctrl.LoggerFrom(ctx)
	memo, stale := o.stale(key, obj.GetResourceVersion())
	if !stale {
		return obj, nil, false, nil
	}
	if time.Since(memo.behindSince) < o.staleCacheLimit() {
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

// remember records, after a pass of key, the versions it wrote
// over (overwritten) with those carried from an earlier pass, so that a
// pass over a cache that still holds one of them waits for the cache.
func (o ownWrites[T]) remember(key types.NamespacedName, carried, overwritten []string) {
	if len(overwritten) > 0 {
		o.written.Store(key, &writeMemo{versions: lastVersions(slices.Concat(carried, overwritten))})
	} else if len(carried) > 0 {
		// Nothing written, but the cache is still behind: the next pass
		// reads from the API server again at once.
		o.written.Store(key, &writeMemo{versions: carried, behindSince: time.Now().Add(-o.staleCacheLimit())})
	}
}

// writeMemo is what the engine remembers of its last writes to an object
// until the cache shows a newer version: the versions they replaced, and
// since when the cache has been found holding one of them.
type writeMemo struct {
	versions    []string
	behindSince time.Time
}

// staleCacheLimit is StaleCacheLimit or its default.
func (o ownWrites[T]) staleCacheLimit() time.Duration {
	if o.Options.StaleCacheLimit > 0 {
		return o.Options.StaleCacheLimit
	}
	return defaultStaleCacheLimit
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
func (o ownWrites[T]) stale(key types.NamespacedName, rv string) (*writeMemo, bool) {
	v, ok := o.written.Load(key)
	if !ok {
		return nil, false
	}
	memo := v.(*writeMemo)
	if !slices.Contains(memo.versions, rv) {
		o.written.CompareAndDelete(key, v)
		return nil, false
	}
	if memo.behindSince.IsZero() {
		noted := &writeMemo{versions: memo.versions, behindSince: time.Now()}
		if o.written.CompareAndSwap(key, v, noted) {
			memo = noted
		}
	}
	return memo, true
}

// readLive reads the object from the API server for a pass that has
// waited StaleCacheLimit for the cache. It reports false, and no error,
// when what it read is still a version the engine wrote over (an APIReader
// that is itself a cache) or the object is gone, which the cache will tell.
func (o ownWrites[T]) readLive(ctx context.Context, key types.NamespacedName, memo *writeMemo) (T, bool, error) {
	live := reflect.New(o.prep.objType).Interface().(T)
	if err := o.prep.apiReader.Get(ctx, key, live); err != nil {
		if apierrors.IsNotFound(err) {
			return live, false, nil
		}
		return live, false, fmt.Errorf("loading %s from the API server: %w", key, err)
	}
	return live, !slices.Contains(memo.versions, live.GetResourceVersion()), nil
}
