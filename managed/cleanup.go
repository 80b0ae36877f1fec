package managed

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
)

// cleaner is the stage of Cleanup that acts on a decision of
// decideCleanup: it lets the object go, waits, or deletes.
type cleaner[T client.Object] struct {
	obs    *observer[T]
	calls  *caller[T]
	write  *writer[T]
	secret *secrets[T]
	log    *changes[T]
	rec    *recorder[T]
	meters *meters[T]
	// memory holds the failed Deletes the next one backs off from, and
	// is released when the resource is gone.
	memory *memory
	// short is how soon a resource being deleted is looked at again.
	short time.Duration
	now   func() time.Time
	// keys are where the step keeps its annotations.
	keys recordKeys
}

// newCleaner returns the cleaner of a step configured by cfg, made of its
// other stages; it remembers in m.
func newCleaner[T client.Object](cfg *config, obs *observer[T], calls *caller[T], write *writer[T], secret *secrets[T], log *changes[T], rec *recorder[T], meters *meters[T], m *memory) *cleaner[T] {
	return &cleaner[T]{
		obs: obs, calls: calls, write: write, secret: secret, log: log, rec: rec, meters: meters, memory: m,
		short: cfg.short, now: cfg.now, keys: cfg.keys,
	}
}

// run is Cleanup but for the record of the controllers that delete last:
// it decides what it can before it observes, observes if it must, and
// decides again.
func (c *cleaner[T]) run(ctx context.Context, req *bosun.Pass[T]) (ctrl.Result, error) {
	obj := req.Object
	f, err := c.obs.cleanupFacts(req)
	if err != nil {
		return ctrl.Result{}, err
	}
	d := decideCleanup(f)
	if f.last && (d.action == actWaitFinalizers || d.action == actObserve) {
		c.joinDeletingLast(req)
	}
	name := c.keys.name(obj)
	switch d.action {
	case actLeave:
		del := DeletionDelete
		if f.orphan {
			del = DeletionOrphan
		}
		req.Log.V(1).Info("leaving the external resource in place", "deletionPolicy", string(del), "managementPolicies", f.pol.String())
		if err := c.secret.unpublish(ctx, req); err != nil {
			return ctrl.Result{}, err
		}
		c.memory.forget(obj)
		return ctrl.Result{}, nil
	case actCreateIncomplete:
		return ctrl.Result{}, c.rec.incomplete(obj)
	case actGone:
		return ctrl.Result{}, c.gone(ctx, req, f.now)
	case actBadOrder:
		return ctrl.Result{}, f.orderErr
	case actWaitFinalizers:
		c.waitFinalizers(req, name)
		return ctrl.Result{RequeueAfter: c.rec.poll(req)}, nil
	}
	cl, done, err := c.calls.connect(ctx, req)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer done()
	target := obj.DeepCopyObject().(T)
	obs, err := c.calls.observe(ctx, req, cl, target)
	if err != nil {
		return ctrl.Result{}, err
	}
	f.obs = &obs
	if f.granted, err = c.obs.grant(ctx, req, f, obs); err != nil {
		return ctrl.Result{}, err
	}
	return c.observed(ctx, req, cl, target, decideCleanup(f), f)
}

// observed acts on the decision d that Cleanup took from f, once it has
// observed the resource through cl into target.
func (c *cleaner[T]) observed(ctx context.Context, req *bosun.Pass[T], cl ExternalClient[T], target T, d decision, f facts) (ctrl.Result, error) {
	obj := req.Object
	name := c.keys.name(obj)
	switch d.action {
	case actGone:
		keepStatus(obj, target)
		return ctrl.Result{}, c.gone(ctx, req, f.now)
	case actLeftInPlace:
		req.Log.Info("leaving in place an external resource that is not this object's", "externalName", name)
		req.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, string(ReasonLeftExternalResource), "Delete", "%s", c.rec.notOurs(obj, name, *f.obs, f.granted).Error())
		return ctrl.Result{}, c.gone(ctx, req, f.now)
	}
	keepStatus(obj, target)
	switch d.action {
	case actDeleteBackoff:
		// Delete failed lately: report its error until its backoff is over.
		return ctrl.Result{}, f.memo.delete.err
	case actDeleteWait:
		// Delete was asked for lately: let the external system work, and
		// look again when the next one is due.
		c.setDeleting(obj)
		return ctrl.Result{RequeueAfter: d.wait}, nil
	}
	_, fenced := f.ann[annotationDeletePending]
	return c.delete(ctx, req, cl, name, fenced, f.now)
}

// waitFinalizers says in the Synced condition that the deletion of the
// external resource name waits for the object's other finalizers
// (DeletionOrderLast). Their removal is a change of the object, which
// brings the next pass.
func (c *cleaner[T]) waitFinalizers(req *bosun.Pass[T], name string) {
	obj := req.Object
	fins := obj.GetFinalizers()
	c.rec.unsynced(obj, ReasonWaitingForFinalizers,
		fmt.Sprintf("the deletion order is %q: %s is deleted once the object's other finalizers are gone (it holds %s, one of them the operator's own)",
			DeletionOrderLast, describe(name), strings.Join(fins, ", ")))
	req.Log.V(1).Info("waiting for the object's other finalizers before deleting the external resource", "externalName", name, "finalizers", fins)
}

// joinDeletingLast records the pass's controller in
// annotationDeletingLast (this pass's write saves it) when other
// finalizers hold the object: the steps of the other controllers that
// delete last then count its finalizer as a peer's (see othersHold).
func (c *cleaner[T]) joinDeletingLast(req *bosun.Pass[T]) {
	obj := req.Object
	if len(obj.GetFinalizers()) <= 1 || req.Controller == "" {
		return
	}
	last := deletingLast(obj)
	if slices.Contains(last, req.Controller) {
		return
	}
	last = append(last, req.Controller)
	slices.Sort(last)
	setAnnotations(obj, map[string]string{annotationDeletingLast: strings.Join(last, ",")})
}

// delete commits the delete fence, annotationDeletePending at now, and,
// the object still the one the pass read, asks the external system to
// delete the resource name. deleting tells whether a Delete was asked for
// before.
func (c *cleaner[T]) delete(ctx context.Context, req *bosun.Pass[T], cl ExternalClient[T], name string, deleting bool, now time.Time) (ctrl.Result, error) {
	obj := req.Object
	uid := obj.GetUID()
	// The fence: no Delete on the strength of a stale copy. The
	// resourceVersion guard fails for any other object of the same name
	// (resource versions are never reused); the UID check says so again.
	if err := c.write.commit(ctx, req, map[string]string{annotationDeletePending: formatTime(now)}); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			req.Log.V(1).Info("object changed or gone since it was read, not deleting", "externalName", name)
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, c.rec.fail(ReasonDeleteFailed, fmt.Errorf("recording a pending delete: %w", err))
	}
	if got := req.Object.GetUID(); got != uid {
		return ctrl.Result{}, apierrors.NewConflict(schema.GroupResource{}, obj.GetName(),
			fmt.Errorf("the object was made again (UID %s, was %s): not deleting", got, uid))
	}
	obj = req.Object
	if !deleting {
		req.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, string(ReasonDeletingExternalResource), "Delete", "deleting external resource %q", name)
	}
	_, err := callExternal(ctx, c.calls, req, opDelete, obj, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, cl.Delete(ctx, obj)
	})
	c.log.add(req, opDelete, name, outcomeOf(err), err)
	if err != nil {
		err = c.rec.fail(ReasonDeleteFailed, fmt.Errorf("deleting %s: %w", describe(name), err))
		c.memory.change(obj, func(m *memo) { m.delete = failed(m.delete, c.now(), obj.GetGeneration(), false, err) })
		return ctrl.Result{}, err
	}
	c.memory.change(obj, func(m *memo) { m.delete = nil })
	c.setDeleting(obj)
	return ctrl.Result{RequeueAfter: c.short}, nil
}

// setDeleting reports a Delete asked for and a resource still there.
func (c *cleaner[T]) setDeleting(obj T) {
	c.rec.unavailable(obj, ReasonDeleting, "waiting for the external resource to be deleted")
	c.rec.setSynced(obj, "")
}

// leaveDeletingLast removes the pass's controller from
// annotationDeletingLast: its Cleanup is done, and the engine removes its
// finalizer with the same write.
func (c *cleaner[T]) leaveDeletingLast(req *bosun.Pass[T]) {
	last := deletingLast(req.Object)
	if !slices.Contains(last, req.Controller) {
		return
	}
	last = slices.DeleteFunc(last, func(c string) bool { return c == req.Controller })
	setAnnotations(req.Object, map[string]string{annotationDeletingLast: strings.Join(last, ",")})
}

// gone finishes a cleanup whose resource no longer exists, or is not the
// object's: the engine lets the object go, so the step forgets it.
func (c *cleaner[T]) gone(ctx context.Context, req *bosun.Pass[T], now time.Time) error {
	if err := c.secret.unpublish(ctx, req); err != nil {
		return err
	}
	c.memory.forget(req.Object)
	if ts := req.Object.GetDeletionTimestamp(); ts != nil {
		c.meters.of(req).deletion.Observe(now.Sub(ts.Time).Seconds())
	}
	req.Log.V(1).Info("external resource gone", "externalName", c.keys.name(req.Object))
	return nil
}
