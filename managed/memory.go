package managed

import (
	"context"
	"reflect"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
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
// kept by UID, so an object made again under the same name starts afresh.
// A memo is never changed in place: a pass replaces it.
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

// memory holds the memos of the objects, by UID. A pass reads and replaces
// only its object's memo, and controller-runtime never runs two passes of
// one object at once; forget may run at any time.
type memory struct {
	m sync.Map
	// forgotten holds the objects that went lately: a pass of one still
	// running then leaves nothing.
	forgotten gone.Set
	// polls paces the observations of the objects.
	polls polls
}

// get returns the memo of uid, empty when there is none.
func (m *memory) get(uid types.UID) memo {
	if v, ok := m.m.Load(uid); ok {
		return v.(memo)
	}
	return memo{}
}

// change replaces the memo of uid with what fn makes of it; an empty memo
// is dropped.
func (m *memory) change(uid types.UID, fn func(*memo)) {
	v := m.get(uid)
	fn(&v)
	if _, left := m.forgotten.Went(uid, time.Now()); left || v.empty() {
		m.m.Delete(uid)
		return
	}
	m.m.Store(uid, v)
	if _, left := m.forgotten.Went(uid, time.Now()); left {
		// Forgotten while this pass ran.
		m.m.Delete(uid)
	}
}

// forget drops the memo of uid, and keeps it from coming back for
// gone.For.
func (m *memory) forget(uid types.UID) {
	m.forgotten.Add(uid, time.Now())
	m.m.Delete(uid)
	m.polls.forget(uid)
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
				m.forget(e.Object.GetUID())
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
