// Package gone holds what a controller remembers of each object between
// its passes (Memory), until the object leaves the controller's cache
// (deleted, or moved out of a cache that holds a share of the objects). A
// Memory also remembers, for For, the objects that left, so that what a
// pass still running at that moment records of its object is not kept for
// good. The engine, the children step and the managed step each keep one
// Memory.
package gone

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// For is how long a Memory keeps a leaving: longer than any pass that was
// running when the object went.
const For = time.Minute

// set holds the UIDs of the objects that went in the last For, with when
// each went: a Memory's leavings. Old entries are dropped in one sweep at
// most once per half of For, so that adding an object costs the same
// however many went before. The zero value is ready to use; a set is safe
// for concurrent use.
type set struct {
	mu    sync.Mutex
	at    map[types.UID]time.Time
	swept time.Time
}

// Add notes that the object uid went at now. An empty uid is ignored.
func (s *set) Add(uid types.UID, now time.Time) {
	if uid == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at == nil {
		s.at = map[types.UID]time.Time{}
	}
	if now.Sub(s.swept) >= For/2 {
		for k, at := range s.at {
			if now.Sub(at) >= For {
				delete(s.at, k)
			}
		}
		s.swept = now
	}
	s.at[uid] = now
}

// Went returns when the object uid went, and whether it did in the For
// before now.
func (s *set) Went(uid types.UID, now time.Time) (time.Time, bool) {
	if uid == "" {
		return time.Time{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.at[uid]
	if !ok || now.Sub(at) >= For {
		return time.Time{}, false
	}
	return at, true
}

// Back notes that the object uid is in the cache again: a pass that
// began at began found it there. A leaving noted before began is
// forgotten, and what this pass and later ones record is kept: an object
// that leaves a share of the cache and comes back within For (a shard's
// object moved away and back) is remembered again from its first pass.
// A leaving noted since began is kept: the object went while the pass
// ran, after the engine read it, and the pass must leave nothing.
func (s *set) Back(uid types.UID, began time.Time) {
	if uid == "" || began.IsZero() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if at, ok := s.at[uid]; ok && at.Before(began) {
		delete(s.at, uid)
	}
}

// passBegan is the key of the context value WithPass sets.
type passBegan struct{}

// WithPass returns ctx for the steps of a pass that began at began, before
// the engine read its object from the cache (see Back).
func WithPass(ctx context.Context, began time.Time) context.Context {
	return context.WithValue(ctx, passBegan{}, began)
}

// PassBegan returns when the pass whose steps ctx is given to began; zero
// when ctx is no pass's.
func PassBegan(ctx context.Context) time.Time {
	t, _ := ctx.Value(passBegan{}).(time.Time)
	return t
}

// Len returns the number of objects the set holds, old ones not yet swept
// included.
func (s *set) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.at)
}
