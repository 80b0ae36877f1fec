package children

import (
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// cacheGrace is how long after the step applied or deleted a child it
// takes a cache that does not show the change yet for one lagging behind:
// the pass waits for it (looking again after cacheRetry) instead of writing
// the same thing again. After cacheGrace the cache is believed, except
// that a child it shows differing from what the step applied is first read
// from the API server (see applyMemory).
const cacheGrace = 5 * time.Second

// cacheRetry is how soon a pass that waits for the cache looks again.
const cacheRetry = time.Second

// applyMemory is how long the step remembers the hash of a child it
// applied, past cacheGrace: while the cache still shows the child
// differing from it, the step reads the child from the API server before
// it applies it again (see confirmLive), so that a cache that missed the
// apply's watch event, until its next relist, does not make the step
// write the same thing again.
const applyMemory = 10 * time.Minute

// write is what memory holds of a child the step applied lately.
type write struct {
	hash string
	at   time.Time
	live client.Object // the child as the apply returned it; dropped after cacheGrace
}
