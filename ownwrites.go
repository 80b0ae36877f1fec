package bosun

import (
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/bosunkit/bosun/conditions"
)

// ownWrite is what the engine remembers of the versions of one object its
// last pass wrote, so that the watch events those writes cause do not
// start a pass of their own.
//
// Every write of the engine is guarded by the resourceVersion it read, so
// a version it wrote holds exactly what the pass left in the object:
// nothing else changed in between. A pass run for that version would see
// what the pass that wrote it saw; when that pass settled (see settled),
// it would find nothing to do. Any other change makes another version,
// whose event is not dropped.
//
// The event of a write may reach the controller before the write's answer
// does, when the version it made is not known yet. An event that comes
// while a write is on its way is held back as early; when the answer
// names its version, it was the write's own. An early event that turns out
// to be someone else's was a change the pass may not have seen: the
// object is requeued at once when the pass ends, as the event would have
// done, whatever the pass returned (an error included, even a terminal
// one: the change may be the fix of what failed).
type ownWrite struct {
	mu sync.Mutex
	// versions are the resourceVersions the writes made, oldest first:
	// those of the pass that made the entry, after those of the settled
	// pass before it whose events may still be on their way.
	versions []string
	// open is true while the pass that writes them runs.
	open bool
	// sending counts the writes on their way.
	sending int
	// early are the versions of the events dropped while a write was on
	// its way, not yet known as the pass's own.
	early []string
	// dropped is set when an event was dropped while the pass was open.
	dropped bool
	// gone is set when the entry is no longer the object's: its pass did
	// not settle, or the object is gone. Its events are let through.
	gone bool
}

// ownWriteRequeue is the delay of the requeue that stands in for the
// dropped events of a pass that did not settle: next to nothing, as the
// event would have been.
const ownWriteRequeue = time.Nanosecond

// tracksOwnWrites reports whether the engine drops the events of its own
// writes: a Builder set the predicate that does it, and
// ReconcileOwnWrites does not turn it off.
func (r *Reconciler[T]) tracksOwnWrites() bool {
	return !r.Options.ReconcileOwnWrites && !r.forGVK.Empty()
}

// beginOwnWrite records that a write of the pass is on its way.
func (ps *passState[T]) beginOwnWrite() {
	r := ps.r
	if !r.tracksOwnWrites() {
		return
	}
	if ps.own == nil {
		w := &ownWrite{open: true}
		if v, ok := r.own.Load(ps.key); ok {
			prev := v.(*ownWrite)
			prev.mu.Lock()
			if !prev.open {
				w.versions = slices.Clone(prev.versions)
			}
			prev.mu.Unlock()
		}
		ps.own = w
		r.own.Store(ps.key, w)
	}
	ps.own.mu.Lock()
	ps.own.sending++
	ps.own.mu.Unlock()
}

// endOwnWrite records that the write on its way made version rv; empty
// when it failed or changed nothing.
func (ps *passState[T]) endOwnWrite(rv string) {
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

// closeOwnWrites ends the pass's record of its writes. When the pass
// settled, the events of its versions that are still to come are
// dropped. When it did not, they are let through, and if some were
// dropped while the pass ran, the object is requeued at once in their
// stead, as they would have done; so it is, settled or not, when an event
// dropped while a write was on its way was not the write's own.
func (ps *passState[T]) closeOwnWrites(res ctrl.Result, err error) ctrl.Result {
	w := ps.own
	if w == nil {
		return res
	}
	settled := ps.settled(err)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.open = false
	foreign := len(w.early) > 0
	w.early = nil
	if !settled {
		w.gone = true
		ps.r.own.CompareAndDelete(ps.key, w)
	}
	switch {
	case err == nil && (foreign || !settled && w.dropped):
		ps.r.book.note(ps.key, ps.r.forUpdate(ps.key))
		res.RequeueAfter = ownWriteRequeue
		res.Priority = nil
	case foreign:
		// The pass failed, and controller-runtime ignores its result: a
		// terminal error is never retried, another one only after the
		// backoff. The change that came during the write was not this
		// pass's, and it gets the pass its event would have brought.
		ps.r.book.enqueue(ps.key, ps.r.forUpdate(ps.key))
	}
	return res
}

// settled reports whether a pass that ended with res and err left nothing
// that another pass over the same version would do: it succeeded, the
// object is not being deleted, and it reports Ready=True for its current
// generation. Objects without conditions never settle: nothing tells the
// engine that their pass got to the end of the work.
func (ps *passState[T]) settled(err error) bool {
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
func (r *Reconciler[T]) forUpdate(key types.NamespacedName) Trigger {
	return Trigger{Kind: triggerWatch, Source: triggerSourceFor, Event: triggerUpdate, GVK: r.forGVK, Object: key}
}

// forgetOwnWrites drops what is remembered of the writes to key, whose
// object is gone.
func (r *Reconciler[T]) forgetOwnWrites(key types.NamespacedName) {
	if v, ok := r.own.LoadAndDelete(key); ok {
		w := v.(*ownWrite)
		w.mu.Lock()
		w.gone = true
		w.mu.Unlock()
	}
}

// ownWriteEvent reports whether e, an update of the reconciled kind, is
// the event of a version the engine wrote, which then starts no pass. A
// resync (the same version again) is never one.
func (r *Reconciler[T]) ownWriteEvent(e event.UpdateEvent) bool {
	if r.Options.ReconcileOwnWrites || e.ObjectNew == nil || e.ObjectOld == nil {
		return false
	}
	rv := e.ObjectNew.GetResourceVersion()
	if rv == e.ObjectOld.GetResourceVersion() || !r.isForKind(e.ObjectNew) {
		return false
	}
	key := client.ObjectKeyFromObject(e.ObjectNew)
	v, ok := r.own.Load(key)
	if !ok {
		return false
	}
	w := v.(*ownWrite)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gone {
		return false
	}
	i := slices.Index(w.versions, rv)
	switch {
	case i >= 0 && w.open:
		w.dropped = true
	case i >= 0 && i == len(w.versions)-1:
		// The last version's event has come: none of the others can.
		w.gone = true
		r.own.CompareAndDelete(key, w)
	case i >= 0:
	case w.open && w.sending > 0:
		// Perhaps the write's own, ahead of its answer.
		w.early = append(w.early, rv)
		w.dropped = true
	default:
		return false
	}
	r.book.dropCandidate(key, r.forUpdate(key))
	if r.prep != nil && r.prep.metrics != nil {
		r.prep.metrics.ownWriteSkipped.Inc()
	}
	return true
}

// isForKind reports whether obj, from an event the controller watches, is
// of the reconciled kind: a T, or its metadata when the Builder's For asked
// for metadata only.
func (r *Reconciler[T]) isForKind(obj client.Object) bool {
	if _, ok := obj.(T); ok {
		return true
	}
	pm, ok := obj.(*metav1.PartialObjectMetadata)
	return ok && pm.GroupVersionKind() == r.forGVK
}

// ownWritePredicate drops the events of the reconciled kind that the
// engine's own writes caused (see Reconciler.ReconcileOwnWrites), and
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

func (p ownWritePredicate[T]) Update(e event.UpdateEvent) bool { return !p.r.ownWriteEvent(e) }

// Delete forgets what the engine remembers of the object, which has gone
// from the cache, and passes the event.
func (p ownWritePredicate[T]) Delete(e event.DeleteEvent) bool {
	if e.Object != nil && p.r.isForKind(e.Object) {
		p.r.forgetGone(e.Object)
	}
	return true
}
