package watch

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// BySelector returns a handler that, for an event on an object (the related
// object), enqueues the objects of type T whose label selector matches the
// related object's labels: the objects of list's type in the related
// object's namespace (every namespace for a cluster-scoped related object)
// for which selector returns a selector that matches. On an update, parents
// that matched the labels before or after the change are both enqueued, so
// an object that leaves a selection wakes its former parent.
//
// selector returns the label selector of a parent, for example its
// spec.selector through metav1.LabelSelectorAsSelector. A nil selector
// matches nothing; a parent whose selector fails is logged and skipped.
// Note that labels.SelectorFromSet of an empty map matches everything:
// return nil for a parent whose selector map is empty if, like a Service's,
// it should select nothing.
//
// Each event lists every parent in the namespace from c (use the manager's
// cache) and evaluates its selector. list is only a template; each event
// lists into a copy. BySelector panics when c, list or selector is nil or
// list does not hold T, so a mistake shows when the controller is set up.
func BySelector[T client.Object](c client.Reader, list client.ObjectList, selector func(T) (labels.Selector, error)) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(selectorMapper(c, list, selector))
}

// selectorMapper is the mapping of BySelector.
func selectorMapper[T client.Object](c client.Reader, list client.ObjectList, selector func(T) (labels.Selector, error)) handler.MapFunc {
	switch {
	case c == nil:
		panic("watch: BySelector: reader is nil")
	case list == nil:
		panic("watch: BySelector: list is nil")
	case selector == nil:
		panic("watch: BySelector: selector is nil")
	}
	if err := checkItems[T](list); err != nil {
		panic(fmt.Sprintf("watch: BySelector: %v", err))
	}
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		log := ctrl.LoggerFrom(ctx)
		parents := list.DeepCopyObject().(client.ObjectList)
		if err := c.List(ctx, parents, client.InNamespace(obj.GetNamespace())); err != nil {
			log.Error(err, "cannot list the objects that may select the changed object", "object", klog.KObj(obj))
			return nil
		}
		set := labels.Set(obj.GetLabels())
		reqs, err := requestsOf(parents, func(item runtime.Object) bool {
			parent, ok := item.(T)
			if !ok {
				return false
			}
			sel, err := selector(parent)
			if err != nil {
				log.Error(err, "cannot read the label selector of an object", "parent", klog.KObj(parent))
				return false
			}
			return sel != nil && sel.Matches(set)
		})
		if err != nil {
			log.Error(err, "cannot read the objects that may select the changed object", "object", klog.KObj(obj))
		}
		return reqs
	}
}

// ByLabels returns a handler that, for an event on an object that names its
// parent in its labels, enqueues that parent: the object whose name is the
// value of the label nameLabel and whose namespace is the value of the
// label namespaceLabel. When namespaceLabel is empty, or the object does
// not carry it, the parent is in the object's own namespace. An object
// without nameLabel (or with an empty value) enqueues nothing. On an
// update, the parents named before and after the change are both enqueued.
//
// ByLabels panics when nameLabel is empty, so a mistake shows when the
// controller is set up.
func ByLabels(nameLabel, namespaceLabel string) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(labelMapper(nameLabel, namespaceLabel))
}

// labelMapper is the mapping of ByLabels.
func labelMapper(nameLabel, namespaceLabel string) handler.MapFunc {
	if nameLabel == "" {
		panic("watch: ByLabels: name label is empty")
	}
	return func(_ context.Context, obj client.Object) []reconcile.Request {
		l := obj.GetLabels()
		name := l[nameLabel]
		if name == "" {
			return nil
		}
		ns := obj.GetNamespace()
		if v, ok := l[namespaceLabel]; ok && namespaceLabel != "" {
			ns = v
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
	}
}
