package children

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
)

// pruneChildren deletes the members of the set the pass found no longer desired,
// and remembers each deletion for cacheGrace. The members
// annotated AnnotationPrune "false" were set aside by preparePass: they are
// only logged.
func pruneChildren[T client.Object](ctx context.Context, s *Step[T], req *bosun.Pass[T], p *pass) error {
	for _, obj := range p.prune {
		if err := deleteChild(ctx, req.Client, obj); err != nil {
			return conditions.Warning(ReasonApplyFailed, err)
		}
		s.mem.rememberDelete(req.Object, obj.GetUID())
		req.Log.V(1).Info("pruned child", "child", refOf(obj).String())
	}
	for _, obj := range p.release {
		if err := releaseChild(ctx, req.Client, obj, s.fieldOwner(req), req.Object.GetUID()); err != nil {
			return conditions.Warning(ReasonApplyFailed, err)
		}
		s.mem.rememberDelete(req.Object, obj.GetUID())
		req.Log.V(1).Info("released adopted child", "child", refOf(obj).String())
	}
	for _, r := range p.keep {
		req.Log.V(1).Info("keeping a child no longer desired", "child", r.String(), "annotation", AnnotationPrune)
	}
	return nil
}

// releaseChild gives back obj, a child WithAdoption took over that is no
// longer desired: an apply of nothing as owner gives up every field the
// step applied, which the API server removes where no other manager owns
// them (the set's labels and annotations, the owner reference, the data
// the step wrote), and leaves what only its maker wrote. Where the API
// server refuses that (the step gave up a field the kind requires, such
// as a Deployment's image, which the step took over from its maker), the
// object keeps the step's values and loses only the set's labels and
// annotations and the owner reference. Either write carries the UID and
// resourceVersion read, so that it lands on that object as read and
// creates nothing; a child gone meanwhile is fine.
func releaseChild(ctx context.Context, c client.Client, obj client.Object, owner string, parent types.UID) error {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return fmt.Errorf("releasing %s: %w", refOf(obj), err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(obj.GetNamespace())
	u.SetName(obj.GetName())
	u.SetUID(obj.GetUID())
	u.SetResourceVersion(obj.GetResourceVersion())
	err = c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(owner))
	if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
		err = detachChild(ctx, c, obj, parent)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("releasing %s: %w", refOf(obj), err)
	}
	return nil
}

// detachChild takes off obj the set's labels and annotations and the
// parent's owner reference, and nothing else, if obj is still as read.
func detachChild(ctx context.Context, c client.Client, obj client.Object, parent types.UID) error {
	cur, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("detaching %s: not an object", refOf(obj))
	}
	labels, ann := cur.GetLabels(), cur.GetAnnotations()
	for _, k := range []string{LabelSet, LabelOwner} {
		delete(labels, k)
	}
	for _, k := range []string{annotationHash, annotationAdopted, annotationOwnerNamespace, annotationOwnerName} {
		delete(ann, k)
	}
	cur.SetLabels(labels)
	cur.SetAnnotations(ann)
	cur.SetOwnerReferences(slices.DeleteFunc(cur.GetOwnerReferences(), func(r metav1.OwnerReference) bool { return r.UID == parent }))
	return c.Patch(ctx, cur, client.MergeFromWithOptions(obj, client.MergeFromWithOptimisticLock{}))
}

// Cleanup deletes the unowned children of the set, except those annotated
// AnnotationPrune "false", and looks again until none is left. It lists
// them from the API server, not the cache, so a child applied just before
// the parent's deletion, which the cache may not show yet, is deleted too
// before the finalizer is released.
func (s *UnownedStep[T]) Cleanup(ctx context.Context, req *bosun.Pass[T]) (ctrl.Result, error) {
	ks, err := s.kinds(req.Client.Scheme())
	if err != nil {
		return ctrl.Result{}, conditions.Terminal(ReasonInvalidChildren, err)
	}
	reader := req.APIReader
	if reader == nil {
		reader = req.Client
	}
	left := 0
	for i := range ks {
		members, err := listMembersFrom(ctx, s.Step, reader, req, &ks[i])
		if err != nil {
			return ctrl.Result{}, err
		}
		for _, m := range members {
			if m.GetAnnotations()[AnnotationPrune] == "false" {
				continue
			}
			left++
			if !m.GetDeletionTimestamp().IsZero() {
				continue
			}
			if err := deleteChild(ctx, req.Client, m); err != nil {
				return ctrl.Result{}, err
			}
			req.Log.V(1).Info("deleted child", "child", refOf(m).String())
		}
	}
	if left > 0 {
		return ctrl.Result{RequeueAfter: s.cfg.cleanup}, nil
	}
	return ctrl.Result{}, nil
}

// deleteChild deletes obj, in the background, if it is still the object
// that was read; a child already gone is fine.
func deleteChild(ctx context.Context, c client.Client, obj client.Object) error {
	uid := obj.GetUID()
	err := c.Delete(ctx, obj, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s: %w", refOf(obj), err)
	}
	return nil
}
