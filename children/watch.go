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

// setupWatches is Step.SetupWithBuilder.
func setupWatches[T client.Object](s *Step[T], b *bosun.Builder[T]) error {
	ks, err := s.kinds(b.Scheme())
	if err != nil {
		return fmt.Errorf("children step %q: %w", s.name, err)
	}
	filter := builder.WithPredicates(s.cfg.preds...)
	for _, k := range ks {
		// A MetadataOnly kind is watched, and cached, as metadata only.
		obj := k.Object
		if k.MetadataOnly {
			obj = k.newObject()
		}
		if s.unowned {
			b.Watches(obj, ownerHandler(s), filter)
		} else {
			b.Owns(obj, filter)
		}
		b.Watches(obj, blockerHandler(s, k.gvk), filter)
	}
	if parent, ok := newParent[T](); ok {
		b.Watches(parent, s.mem.forgetOnDelete())
	}
	if mgr := b.Manager(); mgr != nil {
		b.WatchesRawSource(blockerPoller(s, mgr.GetAPIReader()))
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
func ownerHandler[T client.Object](s *Step[T]) handler.EventHandler {
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
