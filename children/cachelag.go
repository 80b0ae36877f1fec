package children

import (
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CacheGrace is how long after the step applied or deleted a child it
// takes a cache that does not show the change yet for one lagging behind:
// the pass waits for it (looking again after CacheRetry) instead of writing
// the same thing again. After CacheGrace the cache is believed.
const CacheGrace = 5 * time.Second

// CacheRetry is how soon a pass that waits for the cache looks again.
const CacheRetry = time.Second

// write is an entry of Step.written.
type write struct {
	hash string
	at   time.Time
	live client.Object // the child as the apply returned it
}

// forgetOld drops the entries of s.written older than CacheGrace.
func (s *Step[T]) forgetOld() {
	s.written.Range(func(k, v any) bool {
		if time.Since(v.(write).at) >= CacheGrace {
			s.written.Delete(k)
		}
		return true
	})
}

// recent returns the entry of key if it was written lately, with hash if
// hash is not empty.
func (s *Step[T]) recent(key, hash string) (write, bool) {
	v, ok := s.written.Load(key)
	if !ok {
		return write{}, false
	}
	w := v.(write)
	if time.Since(w.at) >= CacheGrace || hash != "" && w.hash != hash {
		return write{}, false
	}
	return w, true
}
