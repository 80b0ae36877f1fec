package bosun

// Values holds data that steps of one reconcile hand to each other, under
// typed keys. The zero value is empty and ready to use. Values is not safe for
// concurrent use by steps that a flow.ParallelJoin runs at the same time.
type Values struct {
	m map[*keyID]any
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
	if v == nil || v.m == nil {
		return zero, false
	}
	val, ok := v.m[k.id]
	if !ok {
		return zero, false
	}
	return val.(V), true
}

// Set stores val under k, replacing any earlier value.
func (k Key[V]) Set(v *Values, val V) {
	if v.m == nil {
		v.m = make(map[*keyID]any)
	}
	v.m[k.id] = val
}
