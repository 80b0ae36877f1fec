package children

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
)

// apply applies, with server-side apply as the step's field owner and
// forcing ownership, the children of the pass that are missing or differ
// from the live ones. What each apply returns becomes the child's live
// form, for its readiness, and is remembered for CacheGrace (see recent).
func (s *Step[T]) apply(ctx context.Context, req *bosun.Pass[T], p *pass) error {
	owner := s.fieldOwner(req)
	for _, c := range p.children {
		if !c.change {
			continue
		}
		u := c.applied.DeepCopy()
		if err := req.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(owner), client.ForceOwnership); err != nil {
			err = fmt.Errorf("applying %s: %w", c.ref, err)
			if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
				// The API server refuses the child as it is: retrying
				// cannot help until the parent changes.
				return conditions.Terminal(ReasonInvalidChildren, err)
			}
			return conditions.Warning(ReasonApplyFailed, err)
		}
		live, err := typed(u, c.kind)
		if err != nil {
			return err
		}
		c.live = live
		s.written.Store(c.id, write{hash: c.applied.GetAnnotations()[AnnotationHash], at: time.Now(), live: live})
		req.Log.V(1).Info("applied child", "child", c.ref.String())
	}
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
