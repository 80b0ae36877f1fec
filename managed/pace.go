package managed

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/statusfield"
)

// triggerRequested is the bosun.Trigger kind of a pass a user asked for
// through bosun.AnnotationReconcileRequestedAt.
const triggerRequested = "Requested"

// paceAction is what a pass of Do does before it observes.
type paceAction int

const (
	// paceObserve: observe now, with a call of its own.
	paceObserve paceAction = iota
	// paceDefer: the first pass after a start of a resource in line with
	// its object: put its observation off to a moment within the spread
	// window, and call nothing.
	paceDefer
	// paceWait: an observation put off is not due yet: call nothing.
	paceWait
	// paceBatch: take what a batch round observed, running one first
	// when none has observed the object lately; observe with a call of
	// its own when that fails.
	paceBatch
)

// String names the action, for test failures.
func (a paceAction) String() string {
	names := [...]string{"observe", "defer", "wait", "batch"}
	if int(a) < len(names) {
		return names[a]
	}
	return "unknown"
}

// paceFacts are what decidePace decides from.
type paceFacts struct {
	now time.Time
	// woken: Wake asked for a fresh observation of the object.
	woken bool
	// settled: the object's resource is in line with it (see settled).
	settled bool
	// known: this process has run a pass of the object before.
	known bool
	// spread: the step spreads first observations (Timing.Spread).
	spread bool
	// deferred, due and sameVersion: the object's first observation was
	// put off until due, and the object has not changed since. due is
	// also the object's next poll, when known.
	deferred    bool
	due         time.Time
	sameVersion bool
	// batching: the step can observe in batches; batched: a round
	// observed the object within twice the batch window.
	batching, batched bool
	// window is the batch window (Timing.Batch): a poll due within it
	// counts as due.
	window time.Duration
}

// decidePace returns what a pass of Do does before it observes. A woken
// object, and one not in line with its object (new, changed, failing,
// deleting, with something under way), is observed at once. The first
// pass after a start of one that is in line is deferred; the passes
// before that deferral ends wait, unless the object changed. With
// batches, a pass whose poll is due takes a batch's observation.
func decidePace(f paceFacts) paceAction {
	switch {
	case f.woken || !f.settled:
		return paceObserve
	case !f.known && f.spread:
		return paceDefer
	case f.deferred && !f.sameVersion:
		return paceObserve
	case f.deferred && f.now.Before(f.due):
		return paceWait
	case !f.batching:
		return paceObserve
	case f.batched || f.deferred || !f.due.IsZero() && !f.now.Before(f.due.Add(-f.window)):
		return paceBatch
	}
	return paceObserve
}

// settled reports whether the step's last pass over obj found its
// resource in line with the object's current generation, and available,
// with nothing under way: obj is not being deleted, status.observedGeneration
// (when the type has one) is the generation, the conditions synced and
// available are True for that generation (synced with reason
// ReconcileSuccess), and no long operation or create without a recorded
// outcome is pending (in the step's annotations, keys). A type without
// conditions is never settled.
func settled(obj client.Object, keys recordKeys, synced, available string) bool {
	if !obj.GetDeletionTimestamp().IsZero() {
		return false
	}
	co, ok := obj.(conditions.Object)
	if !ok {
		return false
	}
	gen := obj.GetGeneration()
	if g, ok := statusfield.ObservedGeneration(obj); ok && g != gen {
		return false
	}
	conds := co.GetConditions()
	s, a := conditions.Find(conds, synced), conditions.Find(conds, available)
	if s == nil || a == nil || s.Status != metav1.ConditionTrue || s.Reason != string(ReasonReconcileSuccess) ||
		a.Status != metav1.ConditionTrue || s.ObservedGeneration != gen || a.ObservedGeneration != gen {
		return false
	}
	ann := keys.view(obj)
	if _, ok := ann[annotationOperation]; ok {
		return false
	}
	return !createOpen(ann)
}

// createOpen reports whether ann record a create started after its last
// recorded outcome, or whose pending time does not parse.
func createOpen(ann map[string]string) bool {
	pending, ok := annotationTime(ann, AnnotationCreatePending, time.Unix(1<<40, 0))
	if !ok {
		return false
	}
	succeeded, _ := annotationTime(ann, annotationCreateSucceeded, time.Time{})
	failed, _ := annotationTime(ann, annotationCreateFailed, time.Time{})
	return pending.After(succeeded) && pending.After(failed)
}

// pacer is the stage of Do that decides, before anything is called,
// whether and how the pass observes (decidePace).
type pacer[T client.Object] struct {
	// polls holds what the pacing knows of each object.
	polls  *polls
	secret *secrets[T]
	// spread is the window of first observations (Timing.Spread: zero
	// for the object's poll interval, below zero for none); window is the
	// batch window (Timing.Batch); interval and minInterval are the poll
	// interval and its floor.
	spread, window, interval, minInterval time.Duration
	// syncedType and availableType are the condition types that tell a
	// settled object, whose open records are under keys.
	syncedType, availableType string
	keys                      recordKeys
	now                       func() time.Time
	rand                      func() float64
}

// newPacer returns the pacer of a step configured by cfg.
func newPacer[T client.Object](cfg *config, p *polls, secret *secrets[T]) *pacer[T] {
	return &pacer[T]{
		polls: p, secret: secret, spread: cfg.spread, window: cfg.batch, interval: cfg.poll, minInterval: cfg.minPoll,
		syncedType: cfg.synced, availableType: cfg.available, keys: cfg.keys, now: cfg.now, rand: cfg.rand,
	}
}

// pace decides how the pass req observes, and records the decision. It
// returns true, with the pass's result, when the pass ends at once without
// calling anything (paceDefer, paceWait).
func (p *pacer[T]) pace(ctx context.Context, req *bosun.Pass[T]) (paceAction, ctrl.Result, bool) {
	obj := req.Object
	uid, key := obj.GetUID(), client.ObjectKeyFromObject(obj)
	ps := p.polls
	st, known := ps.get(uid, key)
	now := p.now()
	// A user's request for a pass (bosun.AnnotationReconcileRequestedAt)
	// wakes the object as Wake does.
	woken := ps.takeWoken(key) || req.Trigger.Kind == triggerRequested
	f := paceFacts{
		now: now, woken: woken, known: known, spread: p.spread >= 0,
		deferred: st.deferred, due: st.due, sameVersion: st.rv == obj.GetResourceVersion(),
		batching: ps.batching.Load(), batched: st.batch != nil && now.Sub(st.batch.at) <= 2*p.window, window: p.window,
	}
	if !f.woken && settled(obj, p.keys, p.syncedType, p.availableType) {
		// A Secret lacking credentials is repaired at once, as a changed
		// object is.
		f.settled = p.secret.intact(ctx, req)
	}
	a := decidePace(f)
	switch a {
	case paceDefer:
		due := now.Add(time.Duration(float64(p.spreadWindow(obj)) * p.rand()))
		ps.change(uid, key, func(st *pollState) { st.deferred, st.due, st.rv = true, due, obj.GetResourceVersion() })
		req.Log.V(1).Info("first observation put off", "after", due.Sub(now))
		return a, ctrl.Result{RequeueAfter: max(due.Sub(now), time.Millisecond)}, true
	case paceWait:
		return a, ctrl.Result{RequeueAfter: max(f.due.Sub(now), time.Millisecond)}, true
	}
	ps.change(uid, key, func(st *pollState) {
		st.deferred = false
		if f.woken {
			st.batch = nil
		}
	})
	return a, ctrl.Result{}, false
}

// spreadWindow returns the window over which the first observation of obj
// is spread: Timing.Spread, or obj's poll interval.
func (p *pacer[T]) spreadWindow(obj T) time.Duration {
	if p.spread > 0 {
		return p.spread
	}
	d, _ := pollInterval(obj.GetAnnotations(), p.interval, p.minInterval)
	return d
}
