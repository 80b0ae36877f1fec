package bosun

import (
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RememberedObjects counts the objects the engine of r remembers
// something of: own writes, versions written over, skip events recorded,
// other owners warned about.
func RememberedObjects[T client.Object](r *Reconciler[T]) int {
	keys := map[any]bool{}
	for _, m := range []*sync.Map{&r.skipSeen, &r.foreign, &r.written, &r.own} {
		m.Range(func(k, _ any) bool {
			keys[k] = true
			return true
		})
	}
	return len(keys)
}
