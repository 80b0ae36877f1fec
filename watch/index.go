package watch

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
)

// IndexField registers, in the cache of mgr, a field index named field on
// objects of type T: each object is indexed under the names extract
// returns for it (empty names are left out). ByIndex lists by such an
// index. T must be a pointer to a struct type of the manager's scheme.
// Register a field once per manager and type, before the manager starts.
//
// Any string may name the index; a path such as "spec.secretName" says
// what it holds.
func IndexField[T client.Object](ctx context.Context, mgr ctrl.Manager, field string, extract func(T) []string) error {
	if field == "" {
		return errors.New("watch: IndexField: field is empty")
	}
	if extract == nil {
		return fmt.Errorf("watch: IndexField %q: extract is nil", field)
	}
	obj, err := newObject[T]()
	if err != nil {
		return fmt.Errorf("watch: IndexField %q: %w", field, err)
	}
	if mgr == nil {
		return fmt.Errorf("watch: IndexField %q: manager is nil", field)
	}
	err = mgr.GetFieldIndexer().IndexField(ctx, obj, field, func(o client.Object) []string {
		t, ok := o.(T)
		if !ok {
			return nil
		}
		return nonEmpty(extract(t))
	})
	if err != nil {
		return fmt.Errorf("watch: indexing %T by %q: %w", obj, field, err)
	}
	return nil
}

// nonEmpty returns names without its empty strings.
func nonEmpty(names []string) []string {
	out := names[:0:0]
	for _, n := range names {
		if n != "" {
			out = append(out, n)
		}
	}
	return out
}

// ByIndex returns a handler that, for an event on an object (the related
// object), enqueues the objects of list's type that name it: those in the
// related object's namespace whose field index (see IndexField) holds its
// name. A cluster-scoped related object is looked up in every namespace.
// On an update, parents that named the object before or after the change
// are both enqueued.
//
// c reads the parents, and must serve the index: the manager's cache
// (mgr.GetCache()) does. list is only a template; each event lists into a
// copy of it. ByIndex panics when c or list is nil or field is empty, so a
// mistake shows when the controller is set up.
func ByIndex(c client.Reader, list client.ObjectList, field string) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(indexMapper(c, list, field))
}

// indexMapper is the mapping of ByIndex.
func indexMapper(c client.Reader, list client.ObjectList, field string) handler.MapFunc {
	switch {
	case c == nil:
		panic("watch: ByIndex: reader is nil")
	case list == nil:
		panic("watch: ByIndex: list is nil")
	case field == "":
		panic("watch: ByIndex: field is empty")
	}
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		parents := list.DeepCopyObject().(client.ObjectList)
		err := c.List(ctx, parents, client.InNamespace(obj.GetNamespace()), client.MatchingFields{field: obj.GetName()})
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "cannot list the objects that name the changed object",
				"index", field, "object", klog.KObj(obj))
			return nil
		}
		reqs, err := requestsOf(parents, nil)
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "cannot read the objects that name the changed object",
				"index", field, "object", klog.KObj(obj))
		}
		return reqs
	}
}

// Referenced returns the setup that makes a controller reconcile an object
// of type T whenever an object of related's kind that it names changes.
// extract returns the names of the related objects an object of type T
// refers to, in its own namespace (for example the Secret named in its
// spec). Give it to the step that reads them, with bosun.WithSetup, and
// Builder.Complete wires it:
//
//	bosun.WithSetup(render, watch.Referenced(&corev1.Secret{}, "spec.themeSecret", themeOf))
//
// It registers extract as the field index field on T (Builder.IndexField)
// and watches related with ByIndex, reading T from the manager's cache;
// the list type comes from the manager's scheme (T's kind with "List"
// appended). opts apply to the watch, for example predicates.
func Referenced[T client.Object](related client.Object, field string, extract func(T) []string, opts ...builder.WatchesOption) bosun.SetupFunc[T] {
	return func(b *bosun.Builder[T]) error {
		if b == nil {
			return errors.New("watch: Referenced: builder is nil")
		}
		if related == nil {
			return fmt.Errorf("watch: Referenced %q: related object is nil", field)
		}
		if extract == nil {
			return fmt.Errorf("watch: Referenced %q: extract is nil", field)
		}
		obj, err := newObject[T]()
		if err != nil {
			return fmt.Errorf("watch: Referenced %q: %w", field, err)
		}
		scheme := b.Scheme()
		if scheme == nil {
			return fmt.Errorf("watch: Referenced %q: builder has no manager", field)
		}
		list, err := listFor(scheme, obj)
		if err != nil {
			return fmt.Errorf("watch: Referenced %q: %w", field, err)
		}
		b.IndexField(obj, field, func(o client.Object) []string {
			t, ok := o.(T)
			if !ok {
				return nil
			}
			return nonEmpty(extract(t))
		})
		if mgr := b.Manager(); mgr != nil {
			b.Watches(related, ByIndex(mgr.GetCache(), list, field), opts...)
		}
		return nil
	}
}

// listFor returns an empty list of obj's kind, made by scheme.
func listFor(scheme *runtime.Scheme, obj client.Object) (client.ObjectList, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return nil, fmt.Errorf("kind of %T: %w", obj, err)
	}
	listKind := gvk.GroupVersion().WithKind(gvk.Kind + "List")
	made, err := scheme.New(listKind)
	if err != nil {
		return nil, fmt.Errorf("list of %s: %w", gvk.Kind, err)
	}
	list, ok := made.(client.ObjectList)
	if !ok {
		return nil, fmt.Errorf("list of %s: %T is not a list", gvk.Kind, made)
	}
	return list, nil
}
