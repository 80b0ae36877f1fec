package bosun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/conditions"
)

func (ps *passState[T]) event(eventtype string, reason conditions.Reason, action, note string, args ...any) {
	ps.p.recorder.Eventf(ps.req.Object, nil, eventtype, string(reason), action, note, args...)
}

func (ps *passState[T]) run(ctx context.Context) (ctrl.Result, error) {
	r, req := ps.r, ps.req
	obj := req.Object
	claim := claim[T]{r: r, p: ps.p, req: req, key: ps.key, memory: &r.memory, save: ps.save}

	// Ownership, first: another instance's object gets no writes and no
	// events beyond the one warning, whatever its policy.
	if claim.ownedElsewhere() {
		return ctrl.Result{}, nil
	}

	// Policy.
	policy, err := claim.policy(ctx)
	if err != nil {
		if errors.Is(err, errUnknownPolicy) {
			return claim.invalidPolicy(ctx, err)
		}
		return ctrl.Result{}, err
	}
	req.Policy = policy
	req.Log = req.Log.WithValues("policy", string(policy))
	ctx = logr.NewContext(ctx, req.Log)
	claim.noteSkip(policy)

	deleting := req.Deleting()
	// An earlier release's finalizer is the engine's to release, even
	// when this release needs none of its own.
	ours := (r.Finalizer != "" && controllerutil.ContainsFinalizer(obj, r.Finalizer)) || r.hasFormer(obj)
	if deleting && !ours {
		// Nothing of ours to release: the object goes away without us.
		// What the engine said of the deletion while its finalizer held
		// the object goes, if the pass that released it could not
		// write that.
		return ps.save.settleLeft(ctx)
	}

	resync, resyncErr := resyncInterval(obj, r.Resync)

	// Claim before act.
	if !deleting && policy != PolicySkip {
		done, res, err := claim.commit(ctx)
		if done {
			return res, err
		}
		ps.claimErr = err
	}

	// Act.
	res, err, released := ps.act(ctx, deleting, policy)

	// Post, always.
	res, err = joinOutcomes(outcome{res: res, err: err}, outcome{err: ps.post(ctx)})
	err = withoutStop(err)
	if err != nil && apierrors.IsConflict(err) {
		return ps.save.conflictRequeue("step"), nil
	}

	if released {
		return ps.save.release(ctx, policy, ps.released, res, err)
	}
	if resyncErr != nil {
		res, err = joinOutcomes(outcome{res: res, err: err}, outcome{err: resyncErr})
	}
	if recordRequest(req.Object) {
		req.Log.V(1).Info("handled reconcile request", "requestedAt", req.Object.GetAnnotations()[AnnotationReconcileRequestedAt])
	}

	return ps.finish(ctx, res, err, deleting, resync)
}

// finish ends a pass that did not let the object go: it sets the
// conditions from the outcome res, err, saves the object, emits the
// Warning of a new error, and adds the resync to res.
func (ps *passState[T]) finish(ctx context.Context, res ctrl.Result, err error, deleting bool, resync time.Duration) (ctrl.Result, error) {
	newError := ps.setConditions(err)
	var severity conditions.Severity
	if err != nil {
		_, severity, _ = conditions.FromError(err)
	}

	if !deleting && ps.req.Policy != PolicySkip && ps.claimErr == nil {
		// The steps ran for the live object: their build is recorded.
		ps.r.markBuild(ps.req.Object)
	}

	// Save.
	if done, serr := ps.save.save(ctx); serr != nil {
		if apierrors.IsConflict(serr) {
			return ps.save.conflictRequeue("save"), nil
		}
		if mw := (*mainWriteError)(nil); errors.As(serr, &mw) {
			return ps.save.writeFailed(ctx, writeSave, mw.err)
		}
		return ctrl.Result{}, serr
	} else if done {
		return ctrl.Result{}, nil
	}
	terminal := errors.Is(err, reconcile.TerminalError(nil))
	if newError {
		reason, _, msg := conditions.FromError(err)
		if terminal || severity == conditions.SeverityError || !ps.r.book.busy() {
			ps.event(corev1.EventTypeWarning, reason, "Reconcile", "%s", msg)
		} else {
			// With other work queued, a retried error's Warning event
			// waits for the retry, which takes a worker only when no
			// fresher work waits: during a burst, the failing objects'
			// events are not API writes the healthy objects wait behind.
			// The next pass of the object, whatever brings it, records it.
			ps.r.memory.amend(ps.key, ps.req.Object.GetUID(), func(m *remembered) { m.owed = &owedEvent{reason: reason, note: msg} })
		}
	}
	if err != nil && severity == conditions.SeverityError && !terminal {
		err = reconcile.TerminalError(err)
	}

	res, err = final(res, err)
	if err == nil && !deleting {
		before := res.RequeueAfter
		res = withResync(res, resync, ps.r.Options.ResyncJitter)
		ps.resynced = res.RequeueAfter != before
	}
	return res, err
}

// act runs what the pass does under policy: nothing after a refused
// claim, the cleanup of an object being deleted (released reports that its
// finalizer was removed), Observe under the skip policy, the steps
// otherwise.
func (ps *passState[T]) act(ctx context.Context, deleting bool, policy Policy) (res ctrl.Result, err error, released bool) {
	obj := ps.req.Object
	switch {
	case ps.claimErr != nil:
		// The claim was refused: nothing acts.
		return ctrl.Result{}, ps.claimErr, false
	case deleting && policy == PolicyManage:
		how, asked := obj.GetAnnotations()[AnnotationReleaseFinalizer]
		if asked && (how == releaseAfterCleanup || how == releaseOrphan) {
			return ps.releaseOnRequest(ctx, how)
		}
		if asked {
			// A value that asks for nothing known is reported in Ready,
			// and the cleanup goes on as if it were not there, at its own
			// pace (or stays held): a typo must not stop it, speed it up,
			// nor hide that the deletion is blocked.
			ps.invalidRelease = fmt.Sprintf("annotation %s is %q: want %q (clean up once more, then release the finalizer) or %q (release it without cleanup)",
				AnnotationReleaseFinalizer, how, releaseAfterCleanup, releaseOrphan)
		}
		if held, err := ps.holdCleanup(ctx); held || err != nil {
			// Nothing is deleted; the object waits for an administrator,
			// whose annotation brings the next pass.
			return ctrl.Result{}, err, false
		}
		res, err = ps.cleanup(ctx)
		if !interrupts(res, err) {
			ps.removeFinalizers()
			return res, err, true
		}
		res = ps.deadline(res, err)
		return res, err, false
	case deleting:
		// Detach (or skip): nothing is undone, the object is let go.
		ps.removeFinalizers()
		return ctrl.Result{}, nil, true
	case policy == PolicySkip:
		res, err = ps.observe(ctx)
	default:
		res, err = ps.do(ctx)
	}
	return res, err, false
}

// holdCleanup asks the reconciler's mass-deletion breaker whether it
// holds the cleanup of the object being deleted, and records why in
// ps.held; an annotation of the allowance that allows nothing is reported
// in Ready (ps.invalidRelease). For a kind without conditions, which has
// no DeletionBlocked to carry it, the first pass to hold the object
// records the event and the metric.
func (ps *passState[T]) holdCleanup(ctx context.Context) (bool, error) {
	obj, r := ps.req.Object, ps.r
	allowed := r.observation != nil && r.observation.AllowMassDeletion
	if v, ok := obj.GetAnnotations()[AnnotationAllowMassDeletion]; ok {
		if strings.EqualFold(strings.TrimSpace(v), "true") {
			allowed = true
		} else {
			note := fmt.Sprintf("annotation %s is %q, which allows nothing: want \"true\"", AnnotationAllowMassDeletion, v)
			if ps.invalidRelease != "" {
				note = ps.invalidRelease + "; " + note
			}
			ps.invalidRelease = note
		}
	}
	held, fresh, err := breakerOf(r, obj).hold(ctx, obj, r.Options.MassDeletion, allowed, ps.p.apiReader, ps.req.Log)
	if err != nil || held == "" {
		return false, err
	}
	ps.held = held
	if _, ok := any(obj).(conditions.Object); !ok && fresh {
		ps.event(corev1.EventTypeWarning, conditions.ReasonDeletionHeld, "Cleanup", "%s", held)
		if ps.req.metrics != nil {
			ps.req.metrics.deletionHeld.Inc()
		}
	}
	return true, nil
}

// do runs the Do of every step in order, as a Sequence does, stopping at
// the first that interrupts.
func (ps *passState[T]) do(ctx context.Context) (ctrl.Result, error) {
	steps := ps.r.Steps
	res, err := sequence(ctx, len(steps), func(ctx context.Context, i int) (ctrl.Result, error) {
		ps.reached = i
		return ps.req.Run(ctx, steps[i])
	})
	if err == nil && interrupts(res, nil) && ps.reached < len(steps)-1 {
		ps.early = fmt.Sprintf("step %q asked to come back before %d later step(s) ran", StepName(steps[ps.reached]), len(steps)-1-ps.reached)
	}
	return res, err
}

// observe runs every Observer in step order, stopping at the first that
// interrupts.
func (ps *passState[T]) observe(ctx context.Context) (ctrl.Result, error) {
	for i, s := range ps.p.steps {
		o, ok := s.(Observer[T])
		if !ok {
			continue
		}
		res, err := ps.req.call(ctx, ps.p.names[i], phaseObserve, o.Observe)
		if interrupts(res, err) {
			return res, err
		}
	}
	return ctrl.Result{}, nil
}

// cleanup runs every Cleanup in reverse step order, stopping at the first
// that needs more time.
func (ps *passState[T]) cleanup(ctx context.Context) (ctrl.Result, error) {
	for i := len(ps.p.steps) - 1; i >= 0; i-- {
		c, ok := ps.p.steps[i].(Cleaner[T])
		if !ok {
			continue
		}
		res, err := ps.req.call(ctx, ps.p.names[i], phaseCleanup, c.Cleanup)
		if interrupts(res, err) {
			ps.waiting = ps.p.names[i]
			return res, err
		}
	}
	return ctrl.Result{}, nil
}

// The values of AnnotationReleaseFinalizer.
const (
	releaseAfterCleanup = "true"
	releaseOrphan       = "orphan"
)

// releaseOnRequest releases the finalizer of an object being deleted as
// AnnotationReleaseFinalizer asks: releaseAfterCleanup after one more
// cleanup, whatever its outcome, releaseOrphan without one.
func (ps *passState[T]) releaseOnRequest(ctx context.Context, how string) (ctrl.Result, error, bool) {
	if how == releaseOrphan {
		ps.released = "without cleanup: what it would delete is left behind"
	} else {
		ps.req.lastCleanup = true
		res, err := ps.cleanup(ctx)
		ps.released = "after a last cleanup, which finished"
		if interrupts(res, err) {
			ps.released = "after a last cleanup, which had not finished: " + ps.describeWait(err) + "; what it did not delete is left behind"
		}
	}
	ps.removeFinalizers()
	return ctrl.Result{}, nil, true
}

// removeFinalizers takes the engine's finalizer, and those it used before,
// off the object.
func (ps *passState[T]) removeFinalizers() {
	controllerutil.RemoveFinalizer(ps.req.Object, ps.r.Finalizer)
	for _, f := range ps.r.Options.FormerFinalizers {
		controllerutil.RemoveFinalizer(ps.req.Object, f)
	}
}

// deadline checks a cleanup that has not finished against
// Options.DeletionDeadline: past it, it records what blocks the deletion
// for the conditions; before it, it makes the pass come back by the
// deadline, so that a blocked deletion shows on time whatever the cleanup
// returned: through res when it asked to wait, through the queue when it
// failed (the error's backoff may be longer than what is left).
//
// What it records depends on nothing that changes from one pass to the
// next but the cleanup's outcome, so that a deletion blocked for the same
// reason is written once.
func (ps *passState[T]) deadline(res ctrl.Result, err error) ctrl.Result {
	d := ps.r.Options.DeletionDeadline
	if d <= 0 || !interrupts(res, err) || ps.req.Object.GetDeletionTimestamp() == nil {
		return res
	}
	asked := ps.req.Object.GetDeletionTimestamp().Time
	if left := d - time.Since(asked); left > 0 {
		switch {
		case err != nil:
			ps.r.book.enqueueAfter(ps.key, left)
		case res.RequeueAfter <= 0 || res.RequeueAfter > left:
			res.RequeueAfter = left
		}
		return res
	}
	ps.blockedReason = conditions.ReasonCleanupPending
	if err != nil {
		ps.blockedReason, _, _ = conditions.FromError(err)
	}
	ps.blocked = fmt.Sprintf("the cleanup has not finished within %s of the deletion (asked at %s): %s; "+
		"to release the finalizer anyway, annotate the object %s=%s (clean up once more) or %s=%s (leave what the cleanup would delete)",
		d, asked.UTC().Format(time.RFC3339), ps.describeWait(err),
		AnnotationReleaseFinalizer, releaseAfterCleanup, AnnotationReleaseFinalizer, releaseOrphan)
	return res
}

// describeWait says why the cleanup stopped: the step and its error, or
// that it asked to come back.
func (ps *passState[T]) describeWait(err error) string {
	if err != nil {
		_, _, msg := conditions.FromError(err)
		return fmt.Sprintf("step %q failed: %s", ps.waiting, msg)
	}
	return fmt.Sprintf("step %q is waiting", ps.waiting)
}

// post runs every Post in step order and joins their errors.
func (ps *passState[T]) post(ctx context.Context) error {
	var errs []error
	for i, s := range ps.p.steps {
		po, ok := s.(Poster[T])
		if !ok {
			continue
		}
		_, err := ps.req.call(ctx, ps.p.names[i], phasePost, func(ctx context.Context, req *Pass[T]) (ctrl.Result, error) {
			return ctrl.Result{}, po.Post(ctx, req)
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// setConditions initialises the owned conditions, records err and derives
// Ready, and stamps the generation. It reports whether err changed Ready
// (a new error, worth an event).
func (ps *passState[T]) setConditions(err error) (newError bool) {
	obj := ps.req.Object
	co, ok := any(obj).(conditions.Object)
	if !ok {
		// Without conditions there is no record of the last error, so each
		// one counts as new.
		return err != nil
	}
	conds := co.GetConditions()
	gen := obj.GetGeneration()
	now := metav1.Now()
	conditions.Init(&conds, gen, now, ps.p.condOrder...)
	conditions.Init(&conds, gen, now, conditions.TypeReady)
	// shown is the condition of the steps' that reports err, if any;
	// shownChanged says whether this pass changed it.
	ready, shown, shownChanged := ps.verdict(&conds, err, gen, now)
	// kstatus is the verdict that setKStatus keeps Reconciling and
	// Stalled to: Ready's, or the retry's while Ready is held.
	kstatus := ready
	failure := err
	if err == nil && ready.Status != metav1.ConditionTrue {
		// A pass that ended before it reached the failing step again
		// (a step before it asked to come back) leaves its condition
		// as the last failure set it: the streak goes on.
		shown, failure = ps.lingering(conds, gen)
	}
	until, held := ps.holdReady(conds, failure, shown, gen, now)
	if held {
		ready, kstatus = ps.retrying(conds, failure, until, gen)
	}
	changed := conditions.Set(&conds, ready, now)
	ps.setDeletionBlocked(&conds, gen, now)
	kchanged := false
	if ps.r.Options.KStatus {
		_, severity, _ := conditions.FromError(err)
		kchanged = setKStatus(&conds, kstatus, ps.req.Policy == PolicySkip, err != nil && severity == conditions.SeverityError, now)
	}
	ps.p.stampGeneration(conds, gen, ps.req.Original)
	// Steps may have written conditions without conditions.Set.
	boundMessages(conds)
	co.SetConditions(conds)
	conditions.SetObservedGeneration(obj, gen)
	if held {
		// Ready did not change: the failure is new when what shows it is.
		return shownChanged || kchanged
	}
	return err != nil && changed
}

// verdict returns Ready as the pass's outcome err and the steps'
// conditions conds give it, before any grace; with err, it sets the
// condition of the steps' that err names False in conds, and returns its
// type as shown and whether that changed it. The other conditions the
// parts of a joined err name are set False too, each with its part.
func (ps *passState[T]) verdict(conds *[]metav1.Condition, err error, gen int64, now metav1.Time) (ready metav1.Condition, shown string, shownChanged bool) {
	if err != nil {
		reason, _, msg := conditions.FromError(err)
		if typ := conditions.TypeOf(err); typ != conditions.TypeReady && conditions.Find(*conds, typ) != nil {
			shown = typ
			shownChanged = conditions.Set(conds, metav1.Condition{
				Type: typ, Status: metav1.ConditionFalse, Reason: string(reason), Message: msg, ObservedGeneration: gen,
			}, now)
		}
		// The steps of a Join or a ParallelJoin that failed together
		// each show their failure in the condition their error names,
		// rather than leave it as an earlier pass set it.
		for _, part := range joinedParts(err) {
			typ := conditions.TypeOf(part)
			if typ == conditions.TypeReady || typ == shown || conditions.Find(*conds, typ) == nil {
				continue
			}
			preason, _, pmsg := conditions.FromError(part)
			conditions.Set(conds, metav1.Condition{
				Type: typ, Status: metav1.ConditionFalse, Reason: string(preason), Message: pmsg, ObservedGeneration: gen,
			}, now)
		}
		ready = metav1.Condition{
			Type: conditions.TypeReady, Status: metav1.ConditionFalse, Reason: string(reason), Message: msg, ObservedGeneration: gen,
		}
		if ps.req.Policy == PolicySkip {
			// A paused object says so, also when observing it failed.
			ready.Message = conditions.Bound(fmt.Sprintf("reconcile policy %q: not changed; observing failed: %s", PolicySkip, msg))
		}
	} else {
		ready = conditions.Summarize(*conds, ps.p.condOrder, gen)
		if ps.req.Policy == PolicySkip {
			ready = ps.paused(ready)
		}
		if ps.early != "" && ready.Status == metav1.ConditionTrue && !readyAt(*conds, gen) {
			ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, string(conditions.ReasonProgressing), ps.early
		}
	}
	if ps.held != "" {
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, string(conditions.ReasonDeletionHeld), conditions.Bound(ps.held)
	}
	if ps.invalidRelease != "" {
		msg := ps.invalidRelease
		if err != nil || ps.held != "" {
			msg += "; " + ready.Message
		}
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, string(conditions.ReasonInvalidReleaseFinalizer), conditions.Bound(msg)
	}
	return ready, shown, shownChanged
}

// joinedParts returns the errors err joins (errors.Join, as the joins of
// the composites make), those of nested joins in their place; none when
// err joins none.
func joinedParts(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return nil
	}
	var parts []error
	for _, e := range j.Unwrap() {
		if sub := joinedParts(e); sub != nil {
			parts = append(parts, sub...)
		} else {
			parts = append(parts, e)
		}
	}
	return parts
}

// retrying returns, for a pass whose failure err holds Ready until
// until, the Ready condition (the stored one) and the verdict for
// Reconciling: retrying, with the error and until. It requeues the object
// for until, whatever the backoff of the retries says.
func (ps *passState[T]) retrying(conds []metav1.Condition, err error, until time.Time, gen int64) (ready, kstatus metav1.Condition) {
	ps.r.book.enqueueAfter(ps.key, time.Until(until))
	reason, _, msg := conditions.FromError(err)
	return *conditions.Find(conds, conditions.TypeReady), metav1.Condition{
		Status: metav1.ConditionFalse, Reason: string(conditions.ReasonRetrying), ObservedGeneration: gen,
		Message: fmt.Sprintf("retrying after %s: %s; Ready turns False at %s if the failures go on", reason, msg, until.UTC().Format(time.RFC3339)),
	}
}

// lingering returns, for a pass that returned no error and left a
// condition of the steps' not True, that condition's type and its failure
// as an error, when it is the one condition not True, False, and as the
// pass found it (the failure of an earlier pass, which this pass did not
// reach again): holdReady then judges it as a failure of this pass. A
// condition a step of this pass set False is news, and Ready says it.
func (ps *passState[T]) lingering(conds []metav1.Condition, gen int64) (string, error) {
	if ps.r.Options.ReadyGrace <= 0 || !readyAt(conds, gen) {
		return "", nil
	}
	co, ok := any(ps.req.Original).(conditions.Object)
	if !ok {
		return "", nil
	}
	found := co.GetConditions()
	var failed *metav1.Condition
	for _, t := range ps.p.condOrder {
		c := conditions.Find(conds, t)
		if c == nil || c.Status == metav1.ConditionTrue {
			continue
		}
		was := conditions.Find(found, t)
		if failed != nil || c.Status != metav1.ConditionFalse || was == nil || !equality.Semantic.DeepEqual(*was, *c) {
			return "", nil
		}
		failed = c
	}
	if failed == nil {
		return "", nil
	}
	return failed.Type, &conditions.Error{Type: failed.Type, Reason: conditions.Reason(failed.Reason), Err: errors.New(failed.Message)}
}

// holdReady reports whether Ready stays True through err, a failure of
// this pass, under Options.ReadyGrace, and until when. conds hold the
// stored Ready, and the failure recorded in shown, the condition of the
// steps' that err names ("" for none). Ready holds when err is retried,
// the object is not being deleted, Ready is True for generation gen,
// every other condition of the steps is True, the failure shows in shown
// or, with KStatus, in Reconciling, and the streak of failures began less
// than ReadyGrace ago.
//
// The streak began at the earliest lastTransitionTime of the conditions
// that show it: shown turned False at the first failure, and Reconciling
// True, and both keep that time while they stay so; a pass that succeeds
// sets shown True again and removes Reconciling. They are stored with
// the status the failing pass writes anyway, so the grace costs no write
// of its own, and a restarted operator finds the same start.
func (ps *passState[T]) holdReady(conds []metav1.Condition, err error, shown string, gen int64, now metav1.Time) (until time.Time, held bool) {
	grace := ps.r.Options.ReadyGrace
	if grace <= 0 || err == nil || ps.req.Deleting() || !readyAt(conds, gen) {
		return time.Time{}, false
	}
	if _, severity, _ := conditions.FromError(err); severity == conditions.SeverityError {
		return time.Time{}, false
	}
	others := make([]string, 0, len(ps.p.condOrder))
	for _, t := range ps.p.condOrder {
		if t != shown {
			others = append(others, t)
		}
	}
	if conditions.Summarize(conds, others, gen).Status != metav1.ConditionTrue {
		return time.Time{}, false
	}
	kstatus := ps.r.Options.KStatus && ps.req.Policy != PolicySkip
	if shown == "" && !kstatus {
		// Nowhere but Ready would say what failed.
		return time.Time{}, false
	}
	start := now.Time
	if c := conditions.Find(conds, shown); c != nil && c.Status != metav1.ConditionTrue && c.LastTransitionTime.Time.Before(start) {
		start = c.LastTransitionTime.Time
	}
	if c := conditions.Find(conds, conditions.TypeReconciling); kstatus && c != nil && c.Status == metav1.ConditionTrue && c.LastTransitionTime.Time.Before(start) {
		start = c.LastTransitionTime.Time
	}
	until = start.Truncate(time.Second).Add(grace)
	return until, now.Time.Before(until)
}

// readyAt reports whether conds hold Ready True for generation gen: an
// earlier pass ran every step for this generation and found the object
// ready. A later pass that a step ends early (waiting for a cache to show
// its own write, polling) found nothing wrong in the steps it ran and
// leaves that verdict alone, instead of flipping Ready to False and back
// with two status writes; a new generation is Progressing until every
// step has run for it.
func readyAt(conds []metav1.Condition, gen int64) bool {
	c := conditions.Find(conds, conditions.TypeReady)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == gen
}

// setDeletionBlocked sets DeletionBlocked True when the deletion passed its
// deadline in this pass, or the mass-deletion breaker holds it, with a
// Warning event and the metric the first time, and removes it otherwise.
func (ps *passState[T]) setDeletionBlocked(conds *[]metav1.Condition, gen int64, now metav1.Time) {
	msg, reason, event := ps.blocked, ps.blockedReason, conditions.ReasonDeletionBlocked
	if ps.held != "" {
		msg, reason, event = ps.held, conditions.ReasonDeletionHeld, conditions.ReasonDeletionHeld
	}
	if msg == "" {
		meta.RemoveStatusCondition(conds, conditions.TypeDeletionBlocked)
		return
	}
	was := conditions.Find(*conds, conditions.TypeDeletionBlocked)
	conditions.Set(conds, metav1.Condition{
		Type: conditions.TypeDeletionBlocked, Status: metav1.ConditionTrue, Reason: string(reason), Message: msg, ObservedGeneration: gen,
	}, now)
	if was != nil && was.Status == metav1.ConditionTrue && was.Reason == string(reason) {
		return
	}
	ps.event(corev1.EventTypeWarning, event, "Cleanup", "%s", msg)
	if ps.req.metrics == nil {
		return
	}
	if ps.held != "" {
		ps.req.metrics.deletionHeld.Inc()
	} else {
		ps.req.metrics.deletionBlocked.Inc()
	}
}

// paused returns ready, the summary of the steps' conditions, as the skip
// policy reports it. With an Observer, Ready keeps the observed health (its
// status and reason) and its message says that nothing is changed. With no
// Observer nothing refreshes the health, so Ready is False with
// conditions.ReasonReconcilePaused rather than a readiness nobody checked.
func (ps *passState[T]) paused(ready metav1.Condition) metav1.Condition {
	if !ps.p.observes {
		ready.Status = metav1.ConditionFalse
		ready.Reason = string(conditions.ReasonReconcilePaused)
		ready.Message = fmt.Sprintf("reconcile policy %q: the object is neither changed nor observed", PolicySkip)
		return ready
	}
	if ready.Message == "" {
		ready.Message = fmt.Sprintf("reconcile policy %q: observed, not changed", PolicySkip)
	} else {
		ready.Message = conditions.Bound(fmt.Sprintf("reconcile policy %q: observed, not changed: %s", PolicySkip, ready.Message))
	}
	return ready
}
