package children

import (
	"context"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
// any, first. It also registers what lets the step heal and forget: a
// watch of each kind that wakes the parents whose children an object
// blocks (reasonChildExists, reasonChildConflict) when it changes or goes,
// with the same predicates; a source that looks up, every few seconds on
// the API server, the blocking objects the cache does not hold (see
// CacheSetsOnly); and a watch of the parents' kind that forgets what the
// step remembers of a parent when it is deleted or leaves the cache. It
// fails when a kind is not in the manager's scheme.
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
		b.Watches(k.Object, s.blockerHandler(k.gvk), filter)
	}
	if parent, ok := newParent[T](); ok {
		b.Watches(parent, s.mem.forgetOnDelete())
	}
	if mgr := b.Manager(); mgr != nil {
		b.WatchesRawSource(s.poller(mgr.GetAPIReader()))
	}
	return nil
}

// newParent returns an empty T to watch the parents' kind with, and false
// when T does not tell its kind by its Go type (unstructured or metadata
// only): the memory of such parents goes only with time.
func newParent[T client.Object]() (T, bool) {
	t := reflect.TypeFor[T]()
	var zero T
	if t.Kind() != reflect.Pointer {
		return zero, false
	}
	obj, ok := reflect.New(t.Elem()).Interface().(T)
	if !ok {
		return zero, false
	}
	switch any(obj).(type) {
	case *unstructured.Unstructured, *metav1.PartialObjectMetadata:
		return zero, false
	}
	return obj, true
}

// ownerHandler enqueues the parent named by the owner annotations of a
// child of this set.
func (s *Step[T]) ownerHandler() handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		if obj.GetLabels()[LabelSet] != s.name {
			return nil
		}
		ann := obj.GetAnnotations()
		name := ann[annotationOwnerName]
		if name == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ann[annotationOwnerNamespace], Name: name}}}
	})
}
