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

// write is what memory holds of a child the step applied lately.
type write struct {
	hash string
	at   time.Time
	live client.Object // the child as the apply returned it
}
