package bosun

import "sync"

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

// Get returns the value stored under k, and whether there is one.
func (k Key[V]) Get(v *Values) (V, bool) {
	var zero V
	if v == nil {
		return zero, false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	val, ok := v.m[k.id]
	if !ok {
		return zero, false
	}
	return val.(V), true
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
// newValue must not use v.
func (k Key[V]) GetOrSet(v *Values, newValue func() V) V {
	v.mu.Lock()
	defer v.mu.Unlock()
	if val, ok := v.m[k.id]; ok {
		return val.(V)
	}
	if v.m == nil {
		v.m = map[*keyID]any{}
	}
	val := newValue()
	v.m[k.id] = val
	return val
}
