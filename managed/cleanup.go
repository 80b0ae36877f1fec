package managed

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"

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
func (s *Step[T]) Cleanup(ctx context.Context, req *bosun.Pass[T]) (ctrl.Result, error) {
	obj := req.Object
	now := s.cfg.now()
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
		return ctrl.Result{}, s.unpublish(ctx, req)
	}
	g := decideCreate(obj.GetAnnotations(), now, s.cfg.grace, !s.cfg.providerNames)
	if g == guardIncomplete {
		return ctrl.Result{}, s.incomplete(obj)
	}
	name := ExternalName(obj)
	if name == "" {
		// Nothing was ever named, so nothing was made.
		return ctrl.Result{}, s.gone(ctx, req, now)
	}
	order, err := s.deletionOrder(obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	if fins := obj.GetFinalizers(); order == DeletionOrderLast && len(fins) > 1 {
		// The engine runs Cleanup only while its own finalizer holds the
		// object, so any further one is another's. Its removal is a
		// change of the object, which brings the next pass.
		s.setCondition(obj, s.cfg.synced, metav1.ConditionFalse, ReasonWaitingForFinalizers,
			fmt.Sprintf("the deletion order is %q: %s is deleted once the object's other finalizers are gone (it holds %s, one of them the operator's own)",
				order, describe(name), strings.Join(fins, ", ")))
		req.Log.V(1).Info("waiting for the object's other finalizers before deleting the external resource", "externalName", name, "finalizers", fins)
		return ctrl.Result{RequeueAfter: s.poll(req)}, nil
	}
	c := claimOf(obj.GetAnnotations())
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
	// The fence: no Delete on the strength of a stale copy. The
	// resourceVersion guard fails for any other object of the same name
	// (resource versions are never reused); the UID check says so again.
	uid := obj.GetUID()
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
	_, err = callExternal(ctx, s, req, OpDelete, obj, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, cl.Delete(ctx, obj)
	})
	s.logChange(req, OpDelete, name, outcomeOf(err), err)
	if err != nil {
		return ctrl.Result{}, s.fail(ReasonDeleteFailed, fmt.Errorf("deleting %s: %w", describe(name), err))
	}
	s.setCondition(obj, s.cfg.available, metav1.ConditionFalse, ReasonDeleting, "waiting for the external resource to be deleted")
	s.setSynced(obj, "")
	return ctrl.Result{RequeueAfter: s.cfg.short}, nil
}

// gone finishes a cleanup whose resource no longer exists, or is not the
// object's.
func (s *Step[T]) gone(ctx context.Context, req *bosun.Pass[T], now time.Time) error {
	if err := s.unpublish(ctx, req); err != nil {
		return err
	}
	s.failures.Delete(req.Object.GetUID())
	if ts := req.Object.GetDeletionTimestamp(); ts != nil {
		s.metricsFor(req).deletion.Observe(now.Sub(ts.Time).Seconds())
	}
	req.Log.V(1).Info("external resource gone", "externalName", ExternalName(req.Object))
	return nil
}
