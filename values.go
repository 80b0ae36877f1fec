package bosun

import (
	"sync"
	"sync/atomic"
)

// Values holds data that steps of one reconcile hand to each other, under
// typed keys. The zero value is empty and ready to use. Values is safe for
// concurrent use, so steps that a ParallelJoin runs at the same time may
// share it; the values themselves are as safe as their types make them.
type Values struct {
	mu sync.Mutex
	m  map[*keyID]any
}

type keyID struct{ name string }

// Key identifies one value in Values with its type. Keys are compared by
// identity: two keys made by separate NewKey calls never collide, even with
// the same name.
type Key[V any] struct {
	id *keyID
}

// NewKey returns a new key for values of type V. The name is for humans only.
func NewKey[V any](name string) Key[V] {
	return Key[V]{id: &keyID{name: name}}
}

// Name returns the name the key was made with.
func (k Key[V]) Name() string {
	if k.id == nil {
		return ""
	}
	return k.id.name
}

// pending is what GetOrSet stores under a key while, and after, it makes
// the value.
type pending struct {
	once sync.Once
	val  any
	made atomic.Bool
}

// Get returns the value stored under k, and whether there is one. A value
// GetOrSet is still making is not there yet.
func (k Key[V]) Get(v *Values) (V, bool) {
	var zero V
	if v == nil {
		return zero, false
	}
	v.mu.Lock()
	val, ok := v.m[k.id]
	v.mu.Unlock()
	if !ok {
		return zero, false
	}
	if p, isPending := val.(*pending); isPending {
		if !p.made.Load() {
			return zero, false
		}
		val = p.val
	}
	got, _ := val.(V)
	return got, true
}

// Set stores val under k, replacing any earlier value.
func (k Key[V]) Set(v *Values, val V) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.m == nil {
		v.m = make(map[*keyID]any)
	}
	v.m[k.id] = val
}

// GetOrSet returns the value stored under k; when there is none, it
// stores and returns what newValue returns. Of steps that call it at the
// same time, one calls newValue and the others wait for its value.
// newValue may use the other keys of v, not k.
func (k Key[V]) GetOrSet(v *Values, newValue func() V) V {
	v.mu.Lock()
	if v.m == nil {
		v.m = map[*keyID]any{}
	}
	val, ok := v.m[k.id]
	p, isPending := val.(*pending)
	if ok && !isPending {
		v.mu.Unlock()
		got, _ := val.(V)
		return got
	}
	if !ok {
		p = &pending{}
		v.m[k.id] = p
	}
	v.mu.Unlock()
	p.once.Do(func() {
		p.val = newValue()
		p.made.Store(true)
	})
	got, _ := p.val.(V)
	return got
}
