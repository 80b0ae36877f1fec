package bosun

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/gone"
)

// objectMemory is what the engine remembers of each object between its
// passes (Reconciler.memory), forgotten when the object leaves the cache
// (see ownWrites.forgetKey, ownWrites.forgetGone). The stages that keep
// something there hold a pointer to it: the claim, the end of a failed
// pass, and the record of the engine's own writes.
type objectMemory struct{ gone.Memory[remembered] }

// amend changes through fn what the engine remembers of the object key
// with uid. fn runs again when the record changed meanwhile (see
// gone.Memory.Update): it must only change what it is given.
func (m *objectMemory) amend(key types.NamespacedName, uid types.UID, fn func(*remembered)) {
	m.Update(key, uid, func(r remembered, _ bool) (remembered, bool) {
		fn(&r)
		return r, r != remembered{}
	})
}

// recalled returns what the engine remembers of the object key with uid.
func (m *objectMemory) recalled(key types.NamespacedName, uid types.UID) remembered {
	r, _ := m.Load(key, uid)
	return r
}

// remembered is what the engine remembers of one object between its
// passes (objectMemory). The zero value remembers nothing, and an
// object left with it is dropped.
type remembered struct {
	// skipSeen is set once the Event of the skip policy was recorded
	// (claim.noteSkip).
	skipSeen bool
	// foreign is the other operator instance the object was found to
	// belong to, and warned about (claim.ownedElsewhere).
	foreign string
	// written are the versions the last pass wrote over (see
	// ownWrites.past).
	written *writeMemo
	// own are the versions the last passes wrote (see ownWrite).
	own *ownWrite
	// owed is the Warning event of a failed pass, which its retry
	// records (see passState.finish).
	owed *owedEvent
}

// ownWrite is what the engine remembers of the versions of one object its
// last pass wrote, so that the watch events those writes cause do not
// start a pass of their own.
//
// Every write of the engine is guarded by the resourceVersion it read, so
// a version it wrote holds exactly what the pass left in the object:
// nothing else changed in between, but what a mutating webhook added to
// the write, which the engine looks for in the answer (see
// changedOnTheWay; the answer of a status write is not checked). A pass run for that version would see
// what the pass that wrote it saw; when that pass settled (see settled),
// it would find nothing to do. Any other change makes another version,
// whose event is not dropped.
//
// The event of a write may reach the controller before the write's answer
// does, when the version it made is not known yet. An event that comes
// while a write is on its way is held back as early; when the answer
// names its version, it was the write's own. An early event that turns out
// to be someone else's was a change the pass may not have seen: the
// object is requeued at once when the pass ends, as the event would have
// done, whatever the pass returned (an error included, even a terminal
// one: the change may be the fix of what failed).
type ownWrite struct {
	mu sync.Mutex
	// versions are the resourceVersions the writes made, oldest first:
	// those of the pass that made the entry, after those of the settled
	// pass before it whose events may still be on their way.
	versions []string
	// open is true while the pass that writes them runs.
	open bool
	// sending counts the writes on their way.
	sending int
	// early are the versions of the events dropped while a write was on
	// its way, not yet known as the pass's own.
	early []string
	// read are the versions the pass's writes were guarded by: an event
	// of one of them, which a watch that lags may be handed while a write
	// is on its way, is not of a write of the pass.
	read []string
	// dropped is set when an event was dropped while the pass was open.
	dropped bool
	// gone is set when the entry is no longer the object's: its pass did
	// not settle, or the object is gone. Its events are let through.
	gone bool
	// doneAt is when the For watch was handed the event of the last
	// version. Every other watch of the kind in the controller is handed
	// it, and the events before it, in its own time: the entry keeps its
	// versions, so that none of them adds a pass of the object for them
	// either, until it is swept (ownWriteDoneFor).
	doneAt time.Time
}

// writeMemo is what the engine remembers of its last writes to an object
// until the cache shows a newer version: the versions they replaced, and
// since when the cache has been found holding one of them.
type writeMemo struct {
	versions    []string
	behindSince time.Time
}

// owedEvent is the Warning event of a failed pass, recorded by the next
// pass of the object.
type owedEvent struct {
	reason conditions.Reason
	note   string
}
