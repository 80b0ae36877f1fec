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
// the value. done is closed once the maker returned or panicked.
type pending struct {
	done chan struct{}
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
// newValue may use the other keys of v, not k. When newValue panics, the
// panic goes on in its caller and nothing is stored: a step that waited,
// and the next to call, make the value again with their own newValue.
func (k Key[V]) GetOrSet(v *Values, newValue func() V) V {
	for {
		v.mu.Lock()
		if v.m == nil {
			v.m = map[*keyID]any{}
		}
		val, ok := v.m[k.id]
		if !ok {
			p := &pending{done: make(chan struct{})}
			v.m[k.id] = p
			v.mu.Unlock()
			return k.make(v, p, newValue)
		}
		v.mu.Unlock()
		p, isPending := val.(*pending)
		if !isPending {
			got, _ := val.(V)
			return got
		}
		<-p.done
		if p.made.Load() {
			got, _ := p.val.(V)
			return got
		}
	}
}

// make calls newValue for GetOrSet, which stored p under k. When newValue
// panics, p leaves v (unless Set replaced it) before its waiters wake.
func (k Key[V]) make(v *Values, p *pending, newValue func() V) V {
	defer func() {
		if !p.made.Load() {
			v.mu.Lock()
			if cur, ok := v.m[k.id]; ok && cur == any(p) {
				delete(v.m, k.id)
			}
			v.mu.Unlock()
		}
		close(p.done)
	}()
	val := newValue()
	p.val = val
	p.made.Store(true)
	return val
}
