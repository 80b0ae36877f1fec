package managed

import (
	"maps"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The step decides what to do from the object's spec, its annotations,
// the status fields it keeps (status.observedGeneration, the change log),
// what Observe reports and its memory of the calls it made lately (see
// memo); never from its own conditions, which only inform (see the
// package documentation). The decision is a pure function of those
// facts: decide for Do, decideCleanup for Cleanup.

// action is the one thing a pass does about the external resource.
type action int

const (
	// actReport: the resource is the object's and up to date: report it.
	actReport action = iota
	// actObserveOnly: the resource differs from the spec and the
	// management policies do not allow Update: report that.
	actObserveOnly
	// actUpdate: call Update.
	actUpdate
	// actUpdateWait: an Update of this generation was asked for lately:
	// give the external system time to show it.
	actUpdateWait
	// actUpdateBackoff: an Update of this generation failed lately:
	// report its error again until its backoff is over.
	actUpdateBackoff
	// actConflict: the resource under the external name is not the
	// object's: leave it alone and report the conflict.
	actConflict
	// actNotGranted: the resource under the external name carries no
	// owner mark, the step did not create it, and adoption is not
	// granted: leave it alone and say so.
	actNotGranted
	// actCreate: the resource is missing: create it.
	actCreate
	// actCreateWait: a create happened within the creation grace period:
	// "not found" may be the external system lagging; look again.
	actCreateWait
	// actCreateBackoff: a create failed lately: report its error again
	// until its backoff is over (a terminal one, until a new generation).
	actCreateBackoff
	// actCreateIncomplete: a create was started and its outcome never
	// recorded, and nothing tells what it made: stop.
	actCreateIncomplete
	// actNotFound: the resource is missing and the management policies
	// do not allow Create.
	actNotFound
	// actObserve: Cleanup cannot decide before it observes: observe,
	// then decide again.
	actObserve
	// actLeave: the deletion or management policies leave the resource
	// in place: let the object go.
	actLeave
	// actBadOrder: the deletion order annotation does not parse.
	actBadOrder
	// actWaitFinalizers: the deletion order is last and other finalizers
	// hold the object: wait for them.
	actWaitFinalizers
	// actGone: nothing is there (or nothing was ever named): let the
	// object go.
	actGone
	// actLeftInPlace: the resource is not the object's: let the object
	// go and leave the resource.
	actLeftInPlace
	// actDelete: call Delete.
	actDelete
	// actDeleteWait: Delete was asked for lately: look again later.
	actDeleteWait
	// actDeleteBackoff: Delete failed lately: report its error again
	// until its backoff is over.
	actDeleteBackoff
)

// String names the action, for test failures.
func (a action) String() string {
	names := [...]string{"report", "observe-only", "update", "update-wait", "update-backoff", "conflict", "not-granted",
		"create", "create-wait", "create-backoff", "create-incomplete", "not-found",
		"observe", "leave", "bad-order", "wait-finalizers", "gone", "left-in-place", "delete", "delete-wait", "delete-backoff"}
	if int(a) < len(names) {
		return names[a]
	}
	return "unknown"
}

// decision is what decide and decideCleanup return: one action, with the
// little the stages that act on it need to know besides.
type decision struct {
	action action
	// lateInit: the spec Observe filled in is taken (with actReport,
	// actObserveOnly and the update actions).
	lateInit bool
	// wait is how soon to look again, for actUpdateWait and
	// actDeleteWait.
	wait time.Duration
}

// facts are what the step knows when it decides: gathered by the observe
// stage, never read from the API server or the external system by the
// decision itself.
type facts struct {
	now time.Time
	// gen is the object's generation, identity its Identity.
	gen      int64
	identity string
	// ann are the object's annotations as the leak guard and the claim
	// read them (see recorded).
	ann map[string]string
	// named reports that the object records an external name; chosen
	// that the name is the one the step chooses for the object (recorded
	// or not yet), which with names the external system assigns it never
	// is.
	named, chosen bool
	// granted reports that the object may adopt (see
	// AnnotationAdoptExternal). The observe stage reads it only when the
	// decision needs it (see needsGrant).
	granted bool
	// providerNames, grace and short are the step's configuration.
	providerNames bool
	grace, short  time.Duration
	pol           Policies
	memo          memo
	// obs is what Observe reported; nil before Cleanup observes.
	obs *Observation

	// For Cleanup: orphan reports the deletion policy orphan; last the
	// deletion order last, unless orderErr says the annotation does not
	// parse.
	orphan   bool
	last     bool
	orderErr error
	// finalizers counts the finalizers holding the object; controller is
	// the pass's controller and deletingLast the controllers that
	// annotationDeletingLast names.
	finalizers   int
	controller   string
	deletingLast []string
	// lastCleanup reports the last Cleanup before the engine releases
	// the finalizer (bosun.Pass.LastCleanup): Delete is asked for now,
	// whatever its backoff or wait says.
	lastCleanup bool
}

// decide returns what Do does about a resource it has observed.
func decide(f facts) decision {
	obs := *f.obs
	if !obs.Exists {
		return decision{action: decideMissing(f)}
	}
	if !f.owns(obs) {
		return decision{action: refused(obs, f.granted)}
	}
	d := decision{lateInit: obs.LateInitialized && f.pol.LateInitialize}
	switch {
	case obs.UpToDate:
		d.action = actReport
	case !f.pol.Update:
		d.action = actObserveOnly
	default:
		prev := f.memo.update
		w := updateWait(prev, f.gen, f.now, f.short)
		switch {
		case w > 0 && prev.err != nil:
			d.action = actUpdateBackoff
		case w > 0:
			d.action, d.wait = actUpdateWait, w
		default:
			d.action = actUpdate
		}
	}
	return d
}

// decideMissing returns what Do does about a resource Observe did not
// find: the leak guard first, then the backoff of a failed create, then
// the policies.
func decideMissing(f facts) action {
	switch decideCreate(f.ann, f.now, f.grace, !f.providerNames || f.named) {
	case guardIncomplete:
		return actCreateIncomplete
	case guardWait:
		return actCreateWait
	}
	if c := f.memo.create; c != nil && f.pol.Create {
		// A terminal failure waits for a new generation; another one for
		// its backoff.
		if c.terminal && c.gen == f.gen || !c.terminal && f.now.Before(c.at.Add(backoff(f.short, c.n))) {
			return actCreateBackoff
		}
	}
	if !f.pol.Create {
		return actNotFound
	}
	return actCreate
}

// decideCleanup returns what Cleanup does: before it observes (f.obs nil)
// the decisions that need no observation, or actObserve; after, what to do
// about what Observe found.
func decideCleanup(f facts) decision {
	if f.orphan || !f.pol.Delete {
		return decision{action: actLeave}
	}
	g := decideCreate(f.ann, f.now, f.grace, !f.providerNames || f.named)
	switch {
	case g == guardIncomplete:
		return decision{action: actCreateIncomplete}
	case !f.named:
		// Nothing was ever named, so nothing was made.
		return decision{action: actGone}
	case f.orderErr != nil:
		return decision{action: actBadOrder}
	case f.last && othersHold(f.finalizers, f.controller, f.deletingLast):
		return decision{action: actWaitFinalizers}
	case f.obs == nil:
		return decision{action: actObserve}
	}
	obs := *f.obs
	// The delete fence tells whether Delete was asked for already.
	_, fenced := f.ann[annotationDeletePending]
	// "Not found" right after a create may be the external system lagging:
	// then Delete is asked for once anyway, and "not found" after that is
	// believed.
	if !obs.Exists && (g != guardWait || fenced) {
		return decision{action: actGone}
	}
	if obs.Exists && !f.owns(obs) {
		return decision{action: actLeftInPlace}
	}
	if w := deleteWait(f.ann, f.memo.delete, f.now, f.short); w > 0 && !f.lastCleanup {
		if f.memo.delete != nil {
			return decision{action: actDeleteBackoff}
		}
		return decision{action: actDeleteWait, wait: w}
	}
	return decision{action: actDelete}
}

// owned reports whether the existing resource obs describes is the
// object's (of identity) to manage:
//
//   - a resource marked with the object's identity is the object's;
//   - one marked with another identity never is;
//   - an unmarked one is the object's when the step recorded that it
//     created it (or may have, in the crash window) under the name it
//     chose for the object;
//   - otherwise, only where adoption is granted: when the step recorded a
//     create under a name set by hand, when the user asked for adoption,
//     and when the policies only observe.
//
// The object's annotations, which its users may write, are the step's
// record of a create: under a name of the step's choosing they reach no
// resource beyond the object's own name, and under any other name they
// count only where adoption is granted.
func owned(obs Observation, identity string, c claim, pol Policies) bool {
	switch {
	case obs.Owner == identity:
		return true
	case obs.Owner != "":
		return false
	case c.created && c.chosen:
		return true
	default:
		return c.granted && (c.created || c.asked || pol.observing())
	}
}

// refused returns what Do does about an existing resource obs describes
// that is not the object's: an unmarked one, where adoption is not
// granted, waits for a grant; any other is a conflict.
func refused(obs Observation, granted bool) action {
	if obs.Owner == "" && !granted {
		return actNotGranted
	}
	return actConflict
}

// claim is what the step knows, at the start of a pass, about how the
// object came to its external name, and whether it may adopt.
type claim struct {
	// created: the step created the resource, or may have (a create was
	// started and its outcome never recorded).
	created bool
	// chosen: the external name is the one the step chooses for the
	// object.
	chosen bool
	// asked: the user asked for adoption: the external name was set by
	// hand (the step records a name it chose only with a pending create).
	asked bool
	// granted: adoption is granted to the object.
	granted bool
}

// claim reads the claim from the facts.
func (f facts) claim() claim {
	_, pending := f.ann[AnnotationCreatePending]
	return claim{
		created: createdHere(f.ann), chosen: f.chosen, granted: f.granted,
		asked: f.ann[AnnotationExternalName] != "" && !pending,
	}
}

// owns reports whether the existing resource obs describes is the
// object's (see owned).
func (f facts) owns(obs Observation) bool { return owned(obs, f.identity, f.claim(), f.pol) }

// needsGrant reports whether the decision on what obs describes turns on
// whether adoption is granted: an unmarked resource that the step's own
// record does not make the object's.
func (f facts) needsGrant(obs Observation) bool {
	if !obs.Exists || obs.Owner != "" {
		return false
	}
	c := f.claim()
	return !c.created || !c.chosen
}

// createdHere reports whether the annotations record a create of the
// step's own that may have made the resource now under the external name:
// the last recorded outcome is a success, or a create was started after the
// last recorded outcome (a stop in the crash window, or an answer that was
// lost). A pending time that does not parse counts as the most recent.
func createdHere(ann map[string]string) bool {
	pending, hasPending := annotationTime(ann, AnnotationCreatePending, time.Unix(1<<40, 0))
	succeeded, hasSucceeded := annotationTime(ann, annotationCreateSucceeded, time.Time{})
	failed, hasFailed := annotationTime(ann, annotationCreateFailed, time.Time{})
	if hasPending && (!hasSucceeded || pending.After(succeeded)) && (!hasFailed || pending.After(failed)) {
		return true
	}
	return hasSucceeded && (!hasFailed || succeeded.After(failed))
}

// guard is what the leak guard decides before a Create.
type guard int

const (
	// guardCreate: create the resource.
	guardCreate guard = iota
	// guardWait: a create happened recently; "not found" may be the
	// external system lagging. Look again shortly.
	guardWait
	// guardIncomplete: a create was started and its outcome never recorded,
	// and the name of what it may have made is unknown. Stop.
	guardIncomplete
)

// String names the guard's verdict, for test failures.
func (g guard) String() string {
	switch g {
	case guardCreate:
		return "create"
	case guardWait:
		return "wait"
	default:
		return "incomplete"
	}
}

// decideCreate applies the leak guard to an object whose external resource
// Observe did not find. ann are the object's annotations; deterministic
// tells whether the external name is known before Create (with names the
// external system assigns, a name saved since the last pending mark, which
// clears the name, names what that create made, and so is as good).
//
//   - A pending create newer than both outcomes means a pass stopped between
//     committing pending and recording the outcome, so the resource may
//     exist. Without a deterministic name there is no way to find it: stop.
//     With one, Observe just said it is not there; trust that once the
//     grace period after the pending time is over, and wait until then.
//   - A successful create within the grace period: wait, the external
//     system may not show it yet.
//   - Anything else: create.
//
// An annotation whose time does not parse counts as the most recent moment
// possible for pending (so the guard errs on the side of stopping) and as
// absent for the outcomes.
func decideCreate(ann map[string]string, now time.Time, grace time.Duration, deterministic bool) guard {
	pending, hasPending := annotationTime(ann, AnnotationCreatePending, now)
	succeeded, hasSucceeded := annotationTime(ann, annotationCreateSucceeded, time.Time{})
	failed, hasFailed := annotationTime(ann, annotationCreateFailed, time.Time{})
	if hasPending && (!hasSucceeded || pending.After(succeeded)) && (!hasFailed || pending.After(failed)) {
		if !deterministic {
			return guardIncomplete
		}
		if now.Sub(pending) < grace {
			return guardWait
		}
		return guardCreate
	}
	if hasSucceeded && (!hasFailed || succeeded.After(failed)) && now.Sub(succeeded) < grace {
		return guardWait
	}
	return guardCreate
}

// recorded returns the annotations of obj, whose memo is m, as the leak
// guard and the claim read them (the step's own under their default keys,
// see recordKeys): a failed create that this process
// remembers and could not record on the object stands in for its record.
func recorded(keys recordKeys, obj client.Object, m memo) map[string]string {
	ann := keys.view(obj)
	f := m.create
	if f == nil {
		return ann
	}
	if at, ok := annotationTime(ann, annotationCreateFailed, time.Time{}); ok && !f.at.After(at) {
		return ann
	}
	ann = maps.Clone(ann)
	if ann == nil {
		ann = map[string]string{}
	}
	ann[annotationCreateFailed] = formatTime(f.at)
	return ann
}

// maxBackoff caps the wait between two failed calls of one operation.
const maxBackoff = 5 * time.Minute

// backoff returns how long after the n-th consecutive failure of an
// operation the next call may be made: the short interval, doubled for
// each further failure, at most maxBackoff.
func backoff(short time.Duration, n int) time.Duration {
	b := wait.Backoff{Duration: short, Factor: 2, Steps: n, Cap: maxBackoff}
	var d time.Duration
	for range max(n, 1) {
		d = b.Step()
	}
	return d
}

// updateWait returns how long the next Update of generation gen must
// wait after prev, the last Update (nil for none): the short interval, or
// the backoff of its failures; for ever (a day, for the requeue) after a
// terminal failure of the same generation. An Update of a new generation
// waits for nothing.
func updateWait(prev *attempt, gen int64, now time.Time, short time.Duration) time.Duration {
	if prev == nil || prev.gen != gen {
		return 0
	}
	if prev.terminal {
		return 24 * time.Hour
	}
	interval := short
	if prev.err != nil {
		interval = backoff(short, prev.n)
	}
	return max(min(prev.at.Add(interval).Sub(now), interval), 0)
}

// deleteWait returns how long the object's next Delete must wait: Delete
// was last asked for at the time of its annotationDeletePending in ann,
// and is asked again after the short interval, or after the backoff of
// the failures of f, the last failed Delete (nil for none). A time that
// is later than now (another replica's clock) waits one interval at most.
func deleteWait(ann map[string]string, f *attempt, now time.Time, short time.Duration) time.Duration {
	asked, ok := annotationTime(ann, annotationDeletePending, time.Time{})
	if !ok {
		return 0
	}
	interval := short
	if f != nil {
		interval = backoff(short, f.n)
	}
	return max(min(asked.Add(interval).Sub(now), interval), 0)
}

// othersHold reports whether finalizers other than the engine's own hold
// the object, not counting those of the controllers that delete last as
// well, which would otherwise wait for each other for ever. The engine
// runs Cleanup only while its own finalizer holds the object, so every
// further finalizer is another's. The controllers that delete last record
// themselves in annotationDeletingLast (last, with controller joining it,
// see cleaner.joinDeletingLast), and each of them, but this one, accounts
// for one of the further finalizers: one finalizer per controller.
func othersHold(finalizers int, controller string, last []string) bool {
	others := finalizers - 1
	if others <= 0 {
		return false
	}
	if controller != "" && !slices.Contains(last, controller) {
		last = append(slices.Clip(last), controller)
	}
	peers := 0
	for _, c := range last {
		if c != controller {
			peers++
		}
	}
	return others > peers
}
