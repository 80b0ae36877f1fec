package gone

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Memory holds what a controller remembers of each object between its
// passes: one value of type V per object, filed under the object's
// namespace and name with its UID. The engine, the children step and the
// managed step each keep one.
//
// A value is the object's: an object deleted and made again under the
// same name does not find its predecessor's, and the first Update of the
// new one drops it. Forget drops the value of an object that left the
// cache (deleted, or moved out of a cache that holds a share of the
// objects) and notes it gone for For. A pass of the object that was still
// running then must leave nothing behind: Update keeps nothing for an
// object noted gone, unless a pass that began after it went finds it back
// in the cache (Back).
//
// An empty UID stands for whichever object holds the name: Load and
// Update find the value of any, and Forget drops it and notes nothing.
//
// The zero value is ready to use; a Memory is safe for concurrent use.
// Load takes no lock, so that a watch's event handler may ask at every
// event.
type Memory[V any] struct {
	// Now is the clock of the leavings; nil means time.Now. Tests stop
	// it.
	Now func() time.Time

	m    sync.Map // types.NamespacedName -> *entry[V]
	gone set
}

// entry is what a Memory holds of one object. It is never changed: an
// Update replaces it.
type entry[V any] struct {
	uid types.UID
	v   V
}

// is reports whether e is the value of the object with uid.
func (e *entry[V]) is(uid types.UID) bool {
	return uid == "" || e.uid == uid
}

// now returns the time of m's clock.
func (m *Memory[V]) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// load returns the entry of key, nil when there is none.
func (m *Memory[V]) load(key types.NamespacedName) *entry[V] {
	if x, ok := m.m.Load(key); ok {
		return x.(*entry[V])
	}
	return nil
}

// Load returns the value of the object key with uid, and whether there
// is one.
func (m *Memory[V]) Load(key types.NamespacedName, uid types.UID) (V, bool) {
	if e := m.load(key); e != nil && e.is(uid) {
		return e.v, true
	}
	var zero V
	return zero, false
}

// Update replaces the value of the object key with uid with what fn
// makes of it. fn is given the value held (zero and false when there is
// none) and returns the value and whether to keep it; a value not kept is
// dropped. The value held for another object of the same name is dropped
// either way. Nothing is kept of an object noted gone (see Forget and
// Back). Update returns the value kept, and whether one is.
//
// fn runs without a lock, and runs again when another Update of the same
// object changed the value meanwhile: it must do nothing but compute its
// result (and note what it saw, which the last run's call tells).
func (m *Memory[V]) Update(key types.NamespacedName, uid types.UID, fn func(v V, ok bool) (V, bool)) (V, bool) {
	var zero V
	for {
		old := m.load(key)
		held, ok := zero, old != nil && old.is(uid)
		if ok {
			held = old.v
		}
		v, keep := fn(held, ok)
		if !keep {
			if old == nil || m.m.CompareAndDelete(key, old) {
				return zero, false
			}
			continue
		}
		e := &entry[V]{uid: uid, v: v}
		if ok && uid == "" {
			e.uid = old.uid
		}
		if old == nil {
			if _, loaded := m.m.LoadOrStore(key, e); loaded {
				continue
			}
		} else if !m.m.CompareAndSwap(key, old, e) {
			continue
		}
		if m.Went(uid) {
			// Checked once e is stored: a Forget that looked for the
			// value before has noted the object gone by now.
			m.m.CompareAndDelete(key, e)
			return zero, false
		}
		return v, true
	}
}

// Forget drops the value of the object key with uid, which left the
// cache, and notes uid gone for For: what a pass of it still running
// records is not kept (see Back). The value of another object of the same
// name, made since, is kept. Forget returns the value dropped, if any.
func (m *Memory[V]) Forget(key types.NamespacedName, uid types.UID) (V, bool) {
	// Noted before the value is dropped: an Update that stores after the
	// drop finds the note.
	m.gone.Add(uid, m.now())
	for {
		e := m.load(key)
		if e == nil || !e.is(uid) {
			var zero V
			return zero, false
		}
		if m.m.CompareAndDelete(key, e) {
			return e.v, true
		}
	}
}

// Back notes that the object uid is in the cache again, found there by a
// pass that began at began (see PassBegan): a leaving noted before began
// is forgotten, and Update keeps what this pass and later ones record. A
// leaving noted since is kept: the object went while the pass ran.
func (m *Memory[V]) Back(uid types.UID, began time.Time) {
	m.gone.Back(uid, began)
}

// Went reports whether the object uid is noted gone: Update keeps
// nothing for it.
func (m *Memory[V]) Went(uid types.UID) bool {
	_, went := m.gone.Went(uid, m.now())
	return went
}

// Range calls fn with the key, UID and value of each object, until fn
// returns false. fn may call m; what it sees of a change made meanwhile
// is as for sync.Map.Range.
func (m *Memory[V]) Range(fn func(key types.NamespacedName, uid types.UID, v V) bool) {
	m.m.Range(func(k, x any) bool {
		e := x.(*entry[V])
		return fn(k.(types.NamespacedName), e.uid, e.v)
	})
}

// Len returns the number of objects m holds a value of.
func (m *Memory[V]) Len() int {
	n := 0
	m.m.Range(func(any, any) bool {
		n++
		return true
	})
	return n
}
