package children

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/internal/gone"
)

// memory is what a step remembers of its parents between passes: the
// children it applied and deleted lately (see cacheGrace) and the objects
// that block a desired child (see blocker). Everything a parent left in it
// goes when the parent is deleted or leaves the cache (forget), and the
// writes when they are older than cacheGrace (expire). It is safe for
// concurrent use.
type memory struct {
	mu sync.Mutex
	// parents holds what is remembered of each parent, by its name and
	// UID (a parent deleted and made again under the same name starts
	// afresh); a pass of a parent that was still running when the parent
	// went must not leave in it what it found (see get). Its clock (Now)
	// is also that of the writes' ages; tests stop it. A parentMemory is
	// changed in place, with mu held.
	parents gone.Memory[*parentMemory]
	// blocking holds, for each blocking object, the parents whose
	// children it blocks: the other way round of parentMemory.blockers.
	blocking map[blocker]map[types.NamespacedName]struct{}
}

// parentMemory is what memory holds of one parent.
type parentMemory struct {
	// applied holds the children applied lately, by childKey.
	applied map[string]write
	// deleted holds when the children deleted lately were, by their UID.
	deleted map[types.UID]time.Time
	// blockers holds the objects found blocking a desired child in the
	// parent's last pass.
	blockers map[blocker]blockState
	// verified holds, by childKey, the resourceVersion of a child read
	// whole and found in place (see driftedLive).
	verified map[string]string
}

// clock returns the time of m's clock.
func (m *memory) clock() time.Time {
	if m.parents.Now != nil {
		return m.parents.Now()
	}
	return time.Now()
}

// empty reports whether pm holds nothing.
func (pm *parentMemory) empty() bool {
	return len(pm.applied)+len(pm.deleted)+len(pm.blockers)+len(pm.verified) == 0
}

// blocker names an object that holds the name of a desired child and that
// the set may not take over (ReasonChildExists, ReasonChildConflict).
type blocker struct {
	gvk schema.GroupVersionKind
	key types.NamespacedName
}

// blockState is what a pass saw of a blocker.
type blockState struct {
	// resourceVersion is the version of the blocker the pass saw.
	resourceVersion string
	// unseen is set when the cache does not hold the blocker (see
	// CacheSetsOnly): no event tells of its change, so it is looked up on
	// the API server (see pollBlockers).
	unseen bool
}

// parentKey returns the key and UID of parent, the key memory files it
// under.
func parentKey(parent client.Object) (types.NamespacedName, types.UID) {
	return types.NamespacedName{Namespace: parent.GetNamespace(), Name: parent.GetName()}, parent.GetUID()
}

// get returns the memory of the parent with key and uid, made when missing
// or held for an older parent of that name if create is set, else nil; nil
// too for a parent forgotten lately. m.mu must be held.
func (m *memory) get(key types.NamespacedName, uid types.UID, create bool) *parentMemory {
	if pm, ok := m.parents.Load(key, uid); ok || !create {
		return pm
	}
	if m.parents.Went(uid) {
		return nil
	}
	if older, ok := m.parents.Load(key, ""); ok {
		// The Update below drops it.
		m.unblockLocked(key, older)
	}
	pm, _ := m.parents.Update(key, uid, func(*parentMemory, bool) (*parentMemory, bool) { return &parentMemory{}, true })
	return pm
}

// tidyLocked drops the memory of the parent with key and uid if it holds
// nothing. m.mu must be held.
func (m *memory) tidyLocked(key types.NamespacedName, uid types.UID) {
	if pm, ok := m.parents.Load(key, uid); ok && pm.empty() {
		m.parents.Update(key, uid, func(*parentMemory, bool) (*parentMemory, bool) { return nil, false })
	}
}

// rememberApply records that the child with childKey was applied for
// parent, with the hash and the live form the apply returned.
func (m *memory) rememberApply(parent client.Object, childKey string, w write) {
	m.edit(parent, func(pm *parentMemory) {
		if pm.applied == nil {
			pm.applied = map[string]write{}
		}
		pm.applied[childKey] = w
	})
}

// edit calls change with the memory of parent, made when missing, under
// m.mu; not for a parent forgotten lately (see get).
func (m *memory) edit(parent client.Object, change func(*parentMemory)) {
	key, uid := parentKey(parent)
	m.mu.Lock()
	defer m.mu.Unlock()
	if pm := m.get(key, uid, true); pm != nil {
		change(pm)
	}
}

// rememberVerified records that the child with childKey of parent was
// read whole at resourceVersion rv and found in place.
func (m *memory) rememberVerified(parent client.Object, childKey, rv string) {
	m.edit(parent, func(pm *parentMemory) {
		if pm.verified == nil {
			pm.verified = map[string]string{}
		}
		pm.verified[childKey] = rv
	})
}

// verifiedAt returns the resourceVersion at which the child with childKey
// of parent was last found in place by a whole read; "" for none.
func (m *memory) verifiedAt(parent client.Object, childKey string) string {
	key, uid := parentKey(parent)
	m.mu.Lock()
	defer m.mu.Unlock()
	if pm := m.get(key, uid, false); pm != nil {
		return pm.verified[childKey]
	}
	return ""
}

// appliedOf returns what is remembered of the step's last apply of the
// child with childKey for parent, if anything.
func (m *memory) appliedOf(parent client.Object, childKey string) (write, bool) {
	key, uid := parentKey(parent)
	m.mu.Lock()
	defer m.mu.Unlock()
	pm := m.get(key, uid, false)
	if pm == nil {
		return write{}, false
	}
	w, ok := pm.applied[childKey]
	return w, ok
}

// lastApply returns what is remembered of the apply of the child with
// childKey for parent, if it was applied with hash and the cache has not
// shown it since, and how long ago it was applied.
func (m *memory) lastApply(parent client.Object, childKey, hash string) (write, time.Duration, bool) {
	w, ok := m.appliedOf(parent, childKey)
	if !ok || w.hash != hash {
		return write{}, 0, false
	}
	return w, m.clock().Sub(w.at), true
}

// behind reports whether the step remembers an apply of the child with
// childKey for parent whose hash is not hash, that of the child the cache
// shows: the cache has not caught up with that apply.
func (m *memory) behind(parent client.Object, childKey, hash string) bool {
	w, ok := m.appliedOf(parent, childKey)
	return ok && w.hash != hash
}

// answered reports whether obj is the answer the step remembers of its
// apply of the child with childKey for parent: a pass that judges the
// child from it (the cache showing the child as it was before the apply,
// within cacheGrace) holds that very object.
func (m *memory) answered(parent client.Object, childKey string, obj client.Object) bool {
	w, ok := m.appliedOf(parent, childKey)
	return ok && w.live != nil && w.live == obj
}

// forgetApply drops the apply of the child with childKey for parent: the
// cache shows it, or the API server shows it gone.
func (m *memory) forgetApply(parent client.Object, childKey string) {
	key, uid := parentKey(parent)
	m.mu.Lock()
	defer m.mu.Unlock()
	if pm := m.get(key, uid, false); pm != nil {
		delete(pm.applied, childKey)
		m.tidyLocked(key, uid)
	}
}

// rememberDelete records that the child with UID child was deleted for
// parent.
func (m *memory) rememberDelete(parent client.Object, child types.UID) {
	key, uid := parentKey(parent)
	m.mu.Lock()
	defer m.mu.Unlock()
	pm := m.get(key, uid, true)
	if pm == nil {
		return
	}
	if pm.deleted == nil {
		pm.deleted = map[types.UID]time.Time{}
	}
	pm.deleted[child] = m.clock()
}

// recentDelete reports whether the child with UID child was deleted for
// parent less than cacheGrace ago.
func (m *memory) recentDelete(parent client.Object, child types.UID) bool {
	key, uid := parentKey(parent)
	m.mu.Lock()
	defer m.mu.Unlock()
	pm := m.get(key, uid, false)
	if pm == nil {
		return false
	}
	at, ok := pm.deleted[child]
	return ok && m.clock().Sub(at) < cacheGrace
}

// expire drops the applies and deletes older than cacheGrace, and the
// parents left with nothing.
func (m *memory) expire() {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock()
	m.parents.Range(func(key types.NamespacedName, uid types.UID, pm *parentMemory) bool {
		pm.expire(now)
		m.tidyLocked(key, uid)
		return true
	})
}

// expireParent drops the applies and deletes of parent older than
// cacheGrace.
func (m *memory) expireParent(parent client.Object) {
	key, uid := parentKey(parent)
	m.mu.Lock()
	defer m.mu.Unlock()
	if pm := m.get(key, uid, false); pm != nil {
		pm.expire(m.clock())
		m.tidyLocked(key, uid)
	}
}

// expire drops the deletes older than cacheGrace at now, the applies
// older than applyMemory, and the live form of the others older than
// cacheGrace.
func (pm *parentMemory) expire(now time.Time) {
	for k, w := range pm.applied {
		switch age := now.Sub(w.at); {
		case age >= applyMemory:
			delete(pm.applied, k)
		case age >= cacheGrace && w.live != nil:
			w.live = nil
			pm.applied[k] = w
		}
	}
	for k, at := range pm.deleted {
		if now.Sub(at) >= cacheGrace {
			delete(pm.deleted, k)
		}
	}
}

// setBlockers replaces the blockers of parent with found, what its last
// pass found blocking its children.
func (m *memory) setBlockers(parent client.Object, found map[blocker]blockState) {
	key, uid := parentKey(parent)
	m.mu.Lock()
	defer m.mu.Unlock()
	pm := m.get(key, uid, len(found) > 0)
	if pm == nil {
		return
	}
	m.unblockLocked(key, pm)
	if len(found) > 0 {
		pm.blockers = found
		if m.blocking == nil {
			m.blocking = map[blocker]map[types.NamespacedName]struct{}{}
		}
		for b := range found {
			ps := m.blocking[b]
			if ps == nil {
				ps = map[types.NamespacedName]struct{}{}
				m.blocking[b] = ps
			}
			ps[key] = struct{}{}
		}
	}
	m.tidyLocked(key, uid)
}

// unblockLocked drops the blockers of the parent key, whose memory is pm.
// m.mu must be held.
func (m *memory) unblockLocked(key types.NamespacedName, pm *parentMemory) {
	for b := range pm.blockers {
		if ps := m.blocking[b]; ps != nil {
			delete(ps, key)
			if len(ps) == 0 {
				delete(m.blocking, b)
			}
		}
	}
	pm.blockers = nil
}

// blocked returns the requests of the parents that b blocks.
func (m *memory) blocked(b blocker) []reconcile.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	ps := m.blocking[b]
	if len(ps) == 0 {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(ps))
	for key := range ps {
		reqs = append(reqs, reconcile.Request{NamespacedName: key})
	}
	return reqs
}

// unseen returns the blockers the cache does not hold, with the version
// each parent saw and the parent.
func (m *memory) unseen() []unseenBlocker {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []unseenBlocker
	m.parents.Range(func(key types.NamespacedName, _ types.UID, pm *parentMemory) bool {
		for b, st := range pm.blockers {
			if st.unseen {
				out = append(out, unseenBlocker{blocker: b, resourceVersion: st.resourceVersion, parent: key})
			}
		}
		return true
	})
	return out
}

// polled records that the poller found the unseen blocker u at version rv
// ("" when it is gone), so that the change wakes the parent once: a gone
// blocker is dropped, a changed one takes the new version. A parent's next
// pass records its blockers afresh anyway.
func (m *memory) polled(u unseenBlocker, rv string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pm, ok := m.parents.Load(u.parent, "")
	if !ok {
		return
	}
	if _, ok := pm.blockers[u.blocker]; !ok {
		return
	}
	if rv != "" {
		pm.blockers[u.blocker] = blockState{resourceVersion: rv, unseen: true}
		return
	}
	delete(pm.blockers, u.blocker)
	if ps := m.blocking[u.blocker]; ps != nil {
		delete(ps, u.parent)
		if len(ps) == 0 {
			delete(m.blocking, u.blocker)
		}
	}
	m.tidyLocked(u.parent, "")
}

// unseenBlocker is an item of memory.unseen.
type unseenBlocker struct {
	blocker
	resourceVersion string
	parent          types.NamespacedName
}

// forget drops everything remembered of the parent obj, which was deleted
// or left the cache. A parent made again under the same name since is
// kept.
func (m *memory) forget(obj client.Object) {
	key, uid := parentKey(obj)
	m.mu.Lock()
	defer m.mu.Unlock()
	if pm, ok := m.parents.Forget(key, uid); ok {
		m.unblockLocked(key, pm)
	}
}

// size counts the parents remembered and the objects remembered as
// blocking them: zero when the memory holds nothing.
func (m *memory) size() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.parents.Len() + len(m.blocking)
}

// forgetOnDelete returns the handler, for a watch of the parents' kind,
// that forgets a parent when it is deleted or leaves the cache (a cache
// that holds a share of the parents, by a label selector, sees the
// objects that leave the share as deleted). It enqueues nothing.
func (m *memory) forgetOnDelete() handler.EventHandler {
	return handler.Funcs{
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if e.Object != nil {
				m.forget(e.Object)
			}
		},
	}
}
