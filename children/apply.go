package children

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
)

// createOnly is the resourceVersion of the apply that creates a child. No
// object has it (resource versions are etcd revisions, which stay below
// the largest int64), and the API server checks the resourceVersion an
// apply carries against the object it would change: when an object of the
// child's name exists, the apply fails with a 409 Conflict instead of
// taking it over, and otherwise it creates the child.
const createOnly = "18446744073709551615"

// applyChildren applies, with server-side apply as the step's field owner and
// forcing ownership, the children of the pass that are missing or differ
// from the live ones. An apply only ever writes the object the pass read:
// that of a missing child only creates it (see createOnly), and that of a
// live child carries its UID, which fails on an object made under the
// same name since (see reportTaken). What each apply returns becomes the
// child's live form, for its readiness, and is remembered for cacheGrace.
// It reports gone, and applies nothing more, when the parent turns out to
// be gone or being deleted (parentGone): the pass then has nothing to do.
func applyChildren[T client.Object](ctx context.Context, s *Step[T], req *bosun.Pass[T], p *pass) (gone bool, err error) {
	owner := s.fieldOwner(req)
	checked := false
	for _, c := range p.children {
		if !c.change {
			continue
		}
		recheck := (c.live == nil && madeAgain(req)) || adopts(c.live, c.applied, req.Object)
		if recheck && !checked {
			checked = true
			gone, err := parentGone(ctx, req)
			if err != nil {
				return false, err
			}
			if gone {
				req.Log.V(1).Info("parent gone from the API server, not making or adopting its children")
				return true, nil
			}
		}
		u := c.applied.DeepCopy()
		if c.live == nil {
			u.SetResourceVersion(createOnly)
		} else if uid := c.live.GetUID(); uid != "" {
			u.SetUID(uid)
		}
		live, err := applyOne(ctx, req, c.kind, u, owner)
		if err != nil {
			if replaced(err) {
				switch err := reportTaken(ctx, s, req, p, c, err); {
				case isConflict(err):
					p.blockChild(c, err)
				case err != nil:
					return false, err
				}
				continue
			}
			err = fmt.Errorf("applying %s: %w", c.ref, err)
			if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
				// The API server refuses the child as it is: retrying
				// cannot help until the parent changes.
				return false, conditions.Terminal(ReasonInvalidChildren, err)
			}
			return false, conditions.Warning(ReasonApplyFailed, err)
		}
		c.live = live
		s.mem.rememberApply(req.Object, c.id, write{hash: c.applied.GetAnnotations()[annotationHash], at: s.mem.clock(), live: live})
		req.Log.V(1).Info("applied child", "child", c.ref.String())
	}
	return false, nil
}

// applyOne applies u, the applied form of a child of kind k, as owner,
// forcing ownership, and returns what the API server answered as k's
// type, for readiness checks. The answer of a MetadataOnly kind's apply is
// asked for as metadata only (the metadata client's
// metav1.PartialObjectMetadata), as the cache holds it: a child of data is
// then neither sent back by the API server nor decoded.
func applyOne[T client.Object](ctx context.Context, req *bosun.Pass[T], k *kind, u *unstructured.Unstructured, owner string) (client.Object, error) {
	if !k.MetadataOnly {
		if err := req.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(owner), client.ForceOwnership); err != nil {
			return nil, err
		}
		return typed(u, k)
	}
	body, err := json.Marshal(u.Object)
	if err != nil {
		return nil, fmt.Errorf("encoding %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	live := k.newObject()
	live.SetNamespace(u.GetNamespace())
	live.SetName(u.GetName())
	if err := req.Client.Patch(ctx, live, client.RawPatch(types.ApplyPatchType, body), client.FieldOwner(owner), client.ForceOwnership); err != nil {
		return nil, err
	}
	return live, nil
}

// madeAgain reports whether a pass that makes a missing child should first
// make sure its parent is still there (parentGone): a pass that the
// deletion of another object brought (a child's, most often, which may
// have the parent's name). The garbage collector deletes the children of
// a deleted parent, and their delete events may come before the parent's,
// while the cache still holds it; making those children again would only
// leave objects for the collector to delete once more. The parent's own
// delete is not checked.
func madeAgain[T client.Object](req *bosun.Pass[T]) bool {
	key := client.ObjectKeyFromObject(req.Object)
	own := req.Trigger.Source == "For" && req.Trigger.Object == key
	return req.Trigger.Event == "Delete" && !own
}

// adopts reports whether applying desired to the live child adds an owner
// reference to parent that live does not have. Before such an apply the
// pass makes sure the parent is still there (parentGone), as Kubernetes'
// own controllers do before they adopt: a parent deleted with orphan
// propagation has its children's owner references removed by the garbage
// collector, and that removal may reach the cache before the parent's
// deletion does. Putting the reference back would point the child at a
// parent being deleted, and the collector would delete the child it was
// asked to keep.
func adopts(live client.Object, desired *unstructured.Unstructured, parent client.Object) bool {
	if live == nil {
		return false
	}
	has := func(refs []metav1.OwnerReference) bool {
		return slices.ContainsFunc(refs, func(r metav1.OwnerReference) bool { return r.UID == parent.GetUID() })
	}
	return has(desired.GetOwnerReferences()) && !has(live.GetOwnerReferences())
}

// parentGone reports whether the parent of the pass is gone from the API
// server, is being deleted, or is another object of its name now. It
// reads the parent through the APIReader; without one it reports false.
func parentGone[T client.Object](ctx context.Context, req *bosun.Pass[T]) (bool, error) {
	if req.APIReader == nil {
		return false, nil
	}
	key := client.ObjectKeyFromObject(req.Object)
	// A new object of the parent's type, not a copy of the parent: in a
	// ParallelJoin, the other steps change the parent's conditions while
	// this one runs (bosun.Pass.UpdateConditions).
	live := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
	live.GetObjectKind().SetGroupVersionKind(req.Object.GetObjectKind().GroupVersionKind())
	switch err := req.APIReader.Get(ctx, key, live); {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("reading the parent %s: %w", key, err)
	}
	return live.GetUID() != req.Object.GetUID() || !live.GetDeletionTimestamp().IsZero(), nil
}

// replaced reports whether err, the error of an apply, says that the
// object of the child's name is not the one the pass read: one exists
// where the pass found none (409 Conflict on createOnly), none exists
// with the UID the pass read (409), or another does (422 on metadata.uid).
func replaced(err error) bool {
	if apierrors.IsConflict(err) {
		return true
	}
	if !apierrors.IsInvalid(err) {
		return false
	}
	var st apierrors.APIStatus
	if !errors.As(err, &st) || st.Status().Details == nil {
		return false
	}
	for _, cause := range st.Status().Details.Causes {
		if cause.Field == "metadata.uid" {
			return true
		}
	}
	return false
}

// reportTaken handles the child c whose apply failed with applyErr because the
// object of its name is not the one the pass read (see replaced). It reads
// the object from the API server: one the set may not write (check) is a
// blocker of the pass, and its error is returned (ReasonChildExists, as
// for an object the pass had found, or ReasonChildConflict); one of the
// set's own (made by an earlier pass the cache does not show yet, or by
// another replica) or one WithAdoption takes over is not written in this
// pass, which looks again after cacheRetry, and counts as not ready in
// its kind's condition while it differs from the desired form (waiting);
// and when there is none, the pass is retried quietly, as after any 409
// Conflict.
func reportTaken[T client.Object](ctx context.Context, s *Step[T], req *bosun.Pass[T], p *pass, c *child, applyErr error) error {
	reader := req.APIReader
	if reader == nil {
		reader = req.Client
	}
	live := c.kind.newObject()
	if err := reader.Get(ctx, client.ObjectKey{Namespace: c.ref.Namespace, Name: c.ref.Name}, live); err != nil {
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading %s: %w", c.ref, err)
		}
		if !apierrors.IsConflict(applyErr) {
			applyErr = apierrors.NewConflict(schema.GroupResource{Group: c.kind.gvk.Group, Resource: c.kind.gvk.Kind}, c.ref.Name, applyErr)
		}
		return fmt.Errorf("applying %s: %w", c.ref, applyErr)
	}
	if err := checkLive(s, req, c, live, false); err != nil {
		p.block(c, live, true)
		return err
	}
	waiting, err := driftedLive(ctx, s, req, c, live)
	if err != nil {
		return err
	}
	req.Log.V(1).Info("child changed since it was read, looking again", "child", c.ref.String())
	c.live, c.change, c.waiting = live, false, waiting
	p.lagging = true
	p.plan.Create = slices.DeleteFunc(p.plan.Create, func(r Ref) bool { return r == c.ref })
	p.plan.Update = slices.DeleteFunc(p.plan.Update, func(r Ref) bool { return r == c.ref })
	return nil
}

// typed returns the applied object u as k's type, for readiness checks.
func typed(u *unstructured.Unstructured, k *kind) (client.Object, error) {
	obj := k.newObject()
	if ou, ok := obj.(*unstructured.Unstructured); ok {
		ou.Object = u.Object
		return ou, nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return nil, fmt.Errorf("converting the applied %s: %w", u.GetKind(), err)
	}
	return obj, nil
}
