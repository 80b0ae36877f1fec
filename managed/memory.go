package managed

import (
	"context"
	"reflect"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/internal/gone"
	"github.com/bosunkit/bosun/managed/changelog"
)

// memo is what the step remembers of one object between its passes: what
// the object does not record, and its next pass must still know. It is
// kept by name and UID (see memory), so an object made again under the
// same name starts afresh. A memo is never changed in place: a pass
// replaces it.
type memo struct {
	// create is the last failed create, which the next one backs off
	// from; it also stands in for the record of the failure when that
	// record could not be written.
	create *attempt
	// update is the last Update of the generation being applied, until a
	// pass observes the resource up to date: the next Update of that
	// generation waits the short interval, or the backoff of a failure.
	update *attempt
	// delete and repair are the last failed Delete and
	// RepairCredentials, which the next call backs off from.
	delete, repair *attempt
	// changes are the change-log entries the step added to the object's
	// status and has not yet seen saved (see restoreChanges).
	changes []changelog.Entry
}

// attempt is one call of the external system for an object.
type attempt struct {
	at time.Time
	// n counts the consecutive failures, 0 for a success.
	n int
	// gen is the object's generation at the call.
	gen int64
	// terminal: the failure waits for a new generation.
	terminal bool
	// err is what the pass returned; nil for a success.
	err error
}

// failed returns the attempt that follows prev (which may be nil) and
// failed at now with err, for an object at generation gen.
func failed(prev *attempt, now time.Time, gen int64, terminal bool, err error) *attempt {
	a := &attempt{at: now, n: 1, gen: gen, terminal: terminal, err: err}
	if prev != nil && prev.err != nil {
		a.n = prev.n + 1
	}
	return a
}

// empty reports whether m holds nothing.
func (m memo) empty() bool {
	return m.create == nil && m.update == nil && m.delete == nil && m.repair == nil && len(m.changes) == 0
}

// remembered is what the step remembers of one object: its memo and the
// pacing of its observations.
type remembered struct {
	memo memo
	// poll is changed in place, with polls.mu held; nil until the step
	// paces the object.
	poll *pollState
}

// empty reports whether r holds nothing.
func (r remembered) empty() bool { return r.memo.empty() && r.poll == nil }

// memory holds what the step remembers of each object: objs, by name and
// UID, so an object made again under the same name starts afresh. A pass
// reads and replaces only its object's memo, and controller-runtime never
// runs two passes of one object at once; forget may run at any time, and
// a pass of an object that went while it ran leaves nothing.
type memory struct {
	objs gone.Memory[remembered]
	// polls paces the observations of the objects.
	polls polls
}

// get returns the memo of obj, empty when there is none.
func (m *memory) get(obj client.Object) memo {
	r, _ := m.objs.Load(client.ObjectKeyFromObject(obj), obj.GetUID())
	return r.memo
}

// change replaces the memo of obj with what fn makes of it. fn runs again
// when what the step remembers of obj changed meanwhile (the pacing of its
// observations, by a batch round): it must only change the memo it is
// given.
func (m *memory) change(obj client.Object, fn func(*memo)) {
	m.objs.Update(client.ObjectKeyFromObject(obj), obj.GetUID(), func(r remembered, _ bool) (remembered, bool) {
		fn(&r.memo)
		return r, !r.empty()
	})
}

// forget drops what the step remembers of obj, and keeps it from coming
// back for gone.For, unless a pass that begins later finds obj back (see
// Step.Do).
func (m *memory) forget(obj client.Object) {
	if r, ok := m.objs.Forget(client.ObjectKeyFromObject(obj), obj.GetUID()); ok && r.poll != nil {
		m.polls.forget(r.poll)
	}
}

// forgetLeaving returns the handler of a watch of the reconciled objects
// that forgets what the step remembers of an object when it leaves the
// manager's cache: deleted, or, in a cache that holds a share of the
// objects (a label selector, as with package shard), no longer in that
// share. The engine never runs a pass of an object it does not find, so
// this is the only moment the step can learn that the object is gone. It
// adds nothing to the queue.
func forgetLeaving(m *memory) handler.EventHandler {
	return handler.Funcs{
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if e.Object != nil {
				m.forget(e.Object)
			}
		},
	}
}

// watchLeaving adds to b the watch that runs forgetLeaving over m, when T
// is a pointer to a struct the builder can make.
func watchLeaving[T client.Object](b *bosun.Builder[T], m *memory) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return
	}
	obj, ok := reflect.New(t.Elem()).Interface().(client.Object)
	if !ok {
		return
	}
	b.Watches(obj, forgetLeaving(m))
}
