package ref

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
)

// onceKey is the key of Builder.Once for one step's setup.
type onceKey struct{ field string }

// SetupWithBuilder checks the step's configuration, and makes a change of
// an object of R reconcile every T that refers to it: it registers a field
// index on T (IndexField) that holds where each T's reference leads, and
// watches R with a handler that looks the changed object up in it. It
// does so once per builder (Builder.Once). Name references are found in
// the index at once; selector references are found per namespace in the
// index, then matched against the object's labels, old and new.
func (s *Step[T, R]) SetupWithBuilder(b *bosun.Builder[T]) error {
	if s.err != nil {
		return fmt.Errorf("ref %q: %w", s.name, s.err)
	}
	if b == nil {
		return fmt.Errorf("ref %q: the builder is nil", s.name)
	}
	if !b.Once(onceKey{s.field}) {
		return nil
	}
	scheme := b.Scheme()
	if scheme == nil {
		return fmt.Errorf("ref %q: the builder has no scheme", s.name)
	}
	referrer, target := newObject[T](), newObject[R]()
	list, err := listOf(scheme, referrer)
	if err != nil {
		return fmt.Errorf("ref %q: %w", s.name, err)
	}
	if _, err := listOf(scheme, target); err != nil {
		return fmt.Errorf("ref %q: %w", s.name, err)
	}
	b.IndexField(referrer, s.field, func(o client.Object) []string {
		t, ok := o.(T)
		if !ok {
			return nil
		}
		return indexValues(s.refOf(t), t.GetNamespace())
	})
	if mgr := b.Manager(); mgr != nil {
		b.Watches(target, handler.EnqueueRequestsFromMapFunc(s.mapper(mgr.GetCache(), list)), s.watch...)
	}
	return nil
}

// mapper returns the mapping of an event on an object of R to the objects
// of T that refer to it, listed from c into copies of list.
func (s *Step[T, R]) mapper(c client.Reader, list client.ObjectList) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		byName, bySelector := lookupKeys(obj.GetNamespace(), obj.GetName())
		var reqs []reconcile.Request
		seen := map[client.ObjectKey]bool{}
		for _, key := range []string{byName, bySelector} {
			referrers := list.DeepCopyObject().(client.ObjectList)
			if err := c.List(ctx, referrers, client.MatchingFields{s.field: key}); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "cannot list the objects that refer to the changed object",
					"step", s.name, "object", klog.KObj(obj))
				continue
			}
			_ = meta.EachListItem(referrers, func(o runtime.Object) error {
				t, ok := o.(T)
				if !ok {
					return nil
				}
				if key == bySelector && !selects(s.refOf(t), obj) {
					return nil
				}
				k := client.ObjectKeyFromObject(t)
				if !seen[k] {
					seen[k] = true
					reqs = append(reqs, reconcile.Request{NamespacedName: k})
				}
				return nil
			})
		}
		return reqs
	}
}

// selects reports whether the selector of r matches the labels of obj. A
// selector that does not parse matches nothing.
func selects(r Reference, obj client.Object) bool {
	if r.Selector == nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(r.Selector)
	if err != nil {
		return false
	}
	return sel.Matches(labels.Set(obj.GetLabels()))
}

// listOf returns an empty list of obj's kind, made by scheme.
func listOf(scheme *runtime.Scheme, obj client.Object) (client.ObjectList, error) {
	if scheme == nil {
		return nil, errors.New("no scheme")
	}
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return nil, fmt.Errorf("the kind of %T: %w", obj, err)
	}
	listKind := gvk.GroupVersion().WithKind(gvk.Kind + "List")
	made, err := scheme.New(listKind)
	if err != nil {
		return nil, fmt.Errorf("the list type of %s: %w", gvk.Kind, err)
	}
	list, ok := made.(client.ObjectList)
	if !ok {
		return nil, fmt.Errorf("the list type of %s: %T is not a list", gvk.Kind, made)
	}
	return list, nil
}
