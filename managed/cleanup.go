package managed

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
)

// Cleanup deletes the external resource, unless the deletion or management
// policies say to leave it, and waits until Observe no longer finds it. The
// connection Secret is removed in every case.
//
// A resource under the external name that is not the object's is left in
// place. Before each Delete the step commits AnnotationDeletePending,
// guarded by the resourceVersion it read: a pass working on a stale copy
// of the object (one deleted and made again under the same name, whose old
// version the cache still shows) fails that write and deletes nothing.
// While the resource goes, Delete is called again at most once per short
// interval (after a failure, once per backoff), and the passes in between,
// such as the one the fence's own write brings, only observe.
func (s *Step[T]) Cleanup(ctx context.Context, req *bosun.Pass[T]) (ctrl.Result, error) {
	s.restoreChanges(req)
	res, err := s.cleanup(ctx, req)
	if err == nil && res == (ctrl.Result{}) {
		// Done: the engine lets the object go, with this pass's write.
		s.leaveDeletingLast(req)
	}
	return res, err
}

// cleanup is Cleanup but for the record of the controllers that delete
// last.
func (s *Step[T]) cleanup(ctx context.Context, req *bosun.Pass[T]) (ctrl.Result, error) {
	obj := req.Object
	now := s.cfg.now()
	uid := obj.GetUID()
	pol, err := s.policies(obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	del, err := s.deletionPolicy(obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	if del == DeletionOrphan || !pol.Delete {
		req.Log.V(1).Info("leaving the external resource in place", "deletionPolicy", string(del), "managementPolicies", pol.String())
		if err := s.unpublish(ctx, req); err != nil {
			return ctrl.Result{}, err
		}
		s.memory.forget(uid)
		return ctrl.Result{}, nil
	}
	m := s.memory.get(uid)
	g := s.createGuard(obj, m, now)
	if g == guardIncomplete {
		return ctrl.Result{}, s.incomplete(obj)
	}
	name := ExternalName(obj)
	if name == "" {
		// Nothing was ever named, so nothing was made.
		return ctrl.Result{}, s.gone(ctx, req, now)
	}
	if wait, err := s.waitForOthers(req, name); err != nil || wait {
		if err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: s.poll(req)}, nil
	}
	c := claimOf(recorded(obj, m))
	cl, done, err := s.connect(ctx, req)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer done()
	target := obj.DeepCopyObject().(T)
	obs, err := s.observe(ctx, req, cl, target)
	if err != nil {
		return ctrl.Result{}, err
	}
	// The delete fence tells whether Delete was asked for already, not
	// the Available condition: conditions only inform.
	_, deleting := obj.GetAnnotations()[AnnotationDeletePending]
	// "Not found" right after a create may be the external system lagging:
	// then Delete is asked for once anyway, and "not found" after that is
	// believed.
	if !obs.Exists && (g != guardWait || deleting) {
		keepStatus(obj, target)
		return ctrl.Result{}, s.gone(ctx, req, now)
	}
	if obs.Exists {
		if err := s.ours(obj, name, obs, pol, c); err != nil {
			req.Log.Info("leaving in place an external resource that is not this object's", "externalName", name)
			req.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, EventLeftInPlace, "Delete", "%s", err.Error())
			return ctrl.Result{}, s.gone(ctx, req, now)
		}
	}
	keepStatus(obj, target)
	if wait := s.deleteWait(obj, m.delete, now); wait > 0 {
		// Delete was asked for lately: let the external system work, and
		// look again when the next one is due.
		if m.delete != nil {
			return ctrl.Result{}, m.delete.err
		}
		s.setDeleting(obj)
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	return s.delete(ctx, req, cl, name, deleting, now)
}

// waitForOthers reports whether the deletion of the external resource name
// waits for the object's other finalizers (DeletionOrderLast), and says so
// in the Synced condition. Their removal is a change of the object, which
// brings the next pass.
func (s *Step[T]) waitForOthers(req *bosun.Pass[T], name string) (bool, error) {
	obj := req.Object
	order, err := s.deletionOrder(obj)
	if err != nil {
		return false, err
	}
	if order != DeletionOrderLast || !s.othersHold(req) {
		return false, nil
	}
	fins := obj.GetFinalizers()
	s.setCondition(obj, s.cfg.synced, metav1.ConditionFalse, ReasonWaitingForFinalizers,
		fmt.Sprintf("the deletion order is %q: %s is deleted once the object's other finalizers are gone (it holds %s, one of them the operator's own)",
			order, describe(name), strings.Join(fins, ", ")))
	req.Log.V(1).Info("waiting for the object's other finalizers before deleting the external resource", "externalName", name, "finalizers", fins)
	return true, nil
}

// delete commits the delete fence, AnnotationDeletePending at now, and,
// the object still the one the pass read, asks the external system to
// delete the resource name. deleting tells whether a Delete was asked for
// before.
func (s *Step[T]) delete(ctx context.Context, req *bosun.Pass[T], cl ExternalClient[T], name string, deleting bool, now time.Time) (ctrl.Result, error) {
	obj := req.Object
	uid := obj.GetUID()
	// The fence: no Delete on the strength of a stale copy. The
	// resourceVersion guard fails for any other object of the same name
	// (resource versions are never reused); the UID check says so again.
	if err := s.commit(ctx, req, map[string]string{AnnotationDeletePending: formatTime(now)}); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			req.Log.V(1).Info("object changed or gone since it was read, not deleting", "externalName", name)
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, s.fail(ReasonDeleteFailed, fmt.Errorf("recording a pending delete: %w", err))
	}
	if got := req.Object.GetUID(); got != uid {
		return ctrl.Result{}, apierrors.NewConflict(schema.GroupResource{}, obj.GetName(),
			fmt.Errorf("the object was made again (UID %s, was %s): not deleting", got, uid))
	}
	obj = req.Object
	if !deleting {
		req.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, EventDeleting, "Delete", "deleting external resource %q", name)
	}
	_, err := callExternal(ctx, s, req, OpDelete, obj, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, cl.Delete(ctx, obj)
	})
	s.logChange(req, OpDelete, name, outcomeOf(err), err)
	if err != nil {
		err = s.fail(ReasonDeleteFailed, fmt.Errorf("deleting %s: %w", describe(name), err))
		s.memory.change(uid, func(m *memo) { m.delete = failed(m.delete, s.cfg.now(), obj.GetGeneration(), false, err) })
		return ctrl.Result{}, err
	}
	s.memory.change(uid, func(m *memo) { m.delete = nil })
	s.setDeleting(obj)
	return ctrl.Result{RequeueAfter: s.cfg.short}, nil
}

// deleteWait returns how long the object's next Delete must wait: Delete
// was last asked for at the time of its AnnotationDeletePending, and is
// asked again after the short interval, or after the backoff of the
// failures of f, the last failed Delete (nil for none). A time that is
// later than now (another replica's clock) waits one interval at most.
func (s *Step[T]) deleteWait(obj T, f *attempt, now time.Time) time.Duration {
	asked, ok := annotationTime(obj.GetAnnotations(), AnnotationDeletePending, time.Time{})
	if !ok {
		return 0
	}
	interval := s.cfg.short
	if f != nil {
		interval = backoff(s.cfg.short, f.n)
	}
	return max(min(asked.Add(interval).Sub(now), interval), 0)
}

// setDeleting reports a Delete asked for and a resource still there.
func (s *Step[T]) setDeleting(obj T) {
	s.setCondition(obj, s.cfg.available, metav1.ConditionFalse, ReasonDeleting, "waiting for the external resource to be deleted")
	s.setSynced(obj, "")
}

// othersHold reports whether finalizers other than the engine's own hold
// the object, not counting those of the controllers that delete last as
// well, which would otherwise wait for each other for ever. The engine
// runs Cleanup only while its own finalizer holds the object, so every
// further finalizer is another's. The controllers that delete last record
// themselves in AnnotationDeletingLast (this pass's write saves it), and
// each of them, but this one, accounts for one of the further finalizers:
// one finalizer per controller.
func (s *Step[T]) othersHold(req *bosun.Pass[T]) bool {
	obj := req.Object
	others := len(obj.GetFinalizers()) - 1
	if others <= 0 {
		return false
	}
	last := deletingLast(obj)
	if req.Controller != "" && !slices.Contains(last, req.Controller) {
		last = append(last, req.Controller)
		slices.Sort(last)
		setAnnotations(obj, map[string]string{AnnotationDeletingLast: strings.Join(last, ",")})
	}
	peers := 0
	for _, c := range last {
		if c != req.Controller {
			peers++
		}
	}
	return others > peers
}

// leaveDeletingLast removes the pass's controller from
// AnnotationDeletingLast: its Cleanup is done, and the engine removes its
// finalizer with the same write.
func (s *Step[T]) leaveDeletingLast(req *bosun.Pass[T]) {
	last := deletingLast(req.Object)
	if !slices.Contains(last, req.Controller) {
		return
	}
	last = slices.DeleteFunc(last, func(c string) bool { return c == req.Controller })
	setAnnotations(req.Object, map[string]string{AnnotationDeletingLast: strings.Join(last, ",")})
}

// deletingLast returns the controllers obj's AnnotationDeletingLast
// names.
func deletingLast(obj client.Object) []string {
	v := obj.GetAnnotations()[AnnotationDeletingLast]
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// gone finishes a cleanup whose resource no longer exists, or is not the
// object's: the engine lets the object go, so the step forgets it.
func (s *Step[T]) gone(ctx context.Context, req *bosun.Pass[T], now time.Time) error {
	if err := s.unpublish(ctx, req); err != nil {
		return err
	}
	s.memory.forget(req.Object.GetUID())
	if ts := req.Object.GetDeletionTimestamp(); ts != nil {
		s.metricsFor(req).deletion.Observe(now.Sub(ts.Time).Seconds())
	}
	req.Log.V(1).Info("external resource gone", "externalName", ExternalName(req.Object))
	return nil
}
