package children

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
)

// SetupWithBuilder registers the declared kinds with b, as
// bosun.Builder.Complete asks every step to: Owns for owned children, for
// unowned ones a watch that maps a child's owner annotations back to its
// parent. Events on children pass the predicates of WithPredicates, if
// any, first. It fails when a kind is not in the manager's scheme.
func (s *Step[T]) SetupWithBuilder(b *bosun.Builder[T]) error {
	ks, err := s.kinds(b.Scheme())
	if err != nil {
		return fmt.Errorf("children step %q: %w", s.name, err)
	}
	filter := builder.WithPredicates(s.cfg.preds...)
	for _, k := range ks {
		if s.unowned {
			b.Watches(k.Object, s.ownerHandler(), filter)
		} else {
			b.Owns(k.Object, filter)
		}
	}
	return nil
}

// ownerHandler enqueues the parent named by the owner annotations of a
// child of this set.
func (s *Step[T]) ownerHandler() handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		if obj.GetLabels()[LabelSet] != s.name {
			return nil
		}
		ann := obj.GetAnnotations()
		name := ann[AnnotationOwnerName]
		if name == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ann[AnnotationOwnerNamespace], Name: name}}}
	})
}
