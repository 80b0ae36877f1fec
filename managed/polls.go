package managed

import (
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/internal/gone"
)

// polls is what the step keeps of each object to pace its observations:
// whether this process has run a pass of it, when its next observation is
// due, a first observation put off after a start, and what a batch round
// observed of it; and the objects Wake asked about. It is safe for
// concurrent use.
type polls struct {
	mu sync.Mutex
	// objs is the step's memory of the objects, which holds their
	// pollStates (remembered.poll): nothing is kept of an object that
	// left the cache lately, or while a pass of it ran.
	objs *gone.Memory[remembered]
	// woken holds the objects Wake asked a fresh observation for, with
	// when it did.
	woken map[types.NamespacedName]time.Time
	// failed is when the last batch round failed.
	failed time.Time

	// batching reports that the step can observe in batches: its
	// Connector is a BatchObserver, or a client it connected was one.
	batching atomic.Bool
	// keys are the credential keys the step's clients name
	// (CredentialRepairer), learned at a Connect.
	keys atomic.Pointer[[]string]
	// round lets one batch round run at a time.
	round sync.Mutex
	// enq is the Enqueuer of the step's controller, once the step is set
	// up with a Builder.
	enq atomic.Pointer[bosun.Enqueuer]
}

// pollState is what polls keeps of one object.
type pollState struct {
	key types.NamespacedName
	// due is when the object's next observation is due: the end of the
	// deferral of its first observation, or its next poll; zero when not
	// known.
	due time.Time
	// deferred reports that the object's first pass put its observation
	// off until due, when the object was at resourceVersion rv.
	deferred bool
	rv       string
	// batch is what the last batch round observed of the object, until a
	// pass takes it.
	batch *batched
}

// batched is what a batch round observed of one object.
type batched struct {
	// at is when the round ran.
	at time.Time
	// in is the object as the round gave it to ObserveBatch, out the same
	// after ObserveBatch wrote what it observed; obs is its observation.
	in, out client.Object
	obs     Observation
}

// change applies fn to the state of the object key with uid, made when
// there is none; nothing is kept of an object that left the cache lately.
func (p *polls) change(uid types.UID, key types.NamespacedName, fn func(*pollState)) {
	st := p.state(uid, key)
	if st == nil {
		r, ok := p.objs.Update(key, uid, func(r remembered, _ bool) (remembered, bool) {
			if r.poll == nil {
				r.poll = &pollState{key: key}
			}
			return r, true
		})
		if !ok {
			return
		}
		st = r.poll
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fn(st)
}

// state returns the state of the object key with uid, nil when there is
// none. Its fields are read and changed with p.mu held.
func (p *polls) state(uid types.UID, key types.NamespacedName) *pollState {
	r, _ := p.objs.Load(key, uid)
	return r.poll
}

// get returns a copy of the state of the object key with uid, and whether
// there is one.
func (p *polls) get(uid types.UID, key types.NamespacedName) (pollState, bool) {
	st := p.state(uid, key)
	if st == nil {
		return pollState{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return *st, true
}

// forget drops the Wake of the object whose state st the memory dropped.
func (p *polls) forget(st *pollState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.woken, st.key)
}

// wokenFor is how long a Wake of an object the controller never passes
// over (one it does not have) is kept.
const wokenFor = 10 * time.Minute

// wake notes that key is to be observed afresh at its next pass.
func (p *polls) wake(key types.NamespacedName, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.woken == nil {
		p.woken = map[types.NamespacedName]time.Time{}
	}
	if len(p.woken) >= 1024 {
		for k, at := range p.woken {
			if now.Sub(at) > wokenFor {
				delete(p.woken, k)
			}
		}
	}
	p.woken[key] = now
}

// takeWoken reports whether key was woken since its last pass, and
// forgets it.
func (p *polls) takeWoken(key types.NamespacedName) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.woken[key]
	delete(p.woken, key)
	return ok
}

// schedule notes that the next poll of uid is due at due.
func (p *polls) schedule(uid types.UID, key types.NamespacedName, due time.Time) {
	p.change(uid, key, func(st *pollState) { st.due = due })
}
