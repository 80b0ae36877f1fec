package bosun

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Builder sets up a Reconciler[T] with a manager, like controller-runtime's
// builder, which it wraps. Make one with ControllerManagedBy.
type Builder[T client.Object] struct {
	mgr     ctrl.Manager
	inner   *builder.Builder
	forSet  bool
	forOpts []builder.ForOption
	forObj  T
	name    string
}

// ControllerManagedBy returns a Builder for a controller of objects of type
// T, run by mgr.
func ControllerManagedBy[T client.Object](mgr ctrl.Manager) *Builder[T] {
	return &Builder[T]{mgr: mgr, inner: ctrl.NewControllerManagedBy(mgr)}
}

// Manager returns the manager the controller is set up with, for code that
// registers watches needing its client or cache.
func (b *Builder[T]) Manager() ctrl.Manager { return b.mgr }

// For sets the object type the controller reconciles, with options such as
// predicates. It is optional: without it the controller watches T with no
// options. obj may be nil.
func (b *Builder[T]) For(obj T, opts ...builder.ForOption) *Builder[T] {
	b.forSet = true
	b.forObj = obj
	b.forOpts = opts
	return b
}

// Owns watches objects of another type that the reconciled objects own,
// as builder.Builder.Owns does.
func (b *Builder[T]) Owns(obj client.Object, opts ...builder.OwnsOption) *Builder[T] {
	b.inner = b.inner.Owns(obj, opts...)
	return b
}

// Watches watches objects of another type and maps them to requests with
// h, as builder.Builder.Watches does.
func (b *Builder[T]) Watches(obj client.Object, h handler.EventHandler, opts ...builder.WatchesOption) *Builder[T] {
	b.inner = b.inner.Watches(obj, h, opts...)
	return b
}

// Named sets the controller's name. Without it the Reconciler's Name is used;
// a Reconciler without a Name takes this one.
func (b *Builder[T]) Named(name string) *Builder[T] {
	b.name = name
	return b
}

// WithOptions sets controller options such as MaxConcurrentReconciles.
func (b *Builder[T]) WithOptions(opts controller.Options) *Builder[T] {
	b.inner = b.inner.WithOptions(opts)
	return b
}

// Complete fills in r's Client, APIReader and Recorder from the manager
// where they are unset, validates r (see Reconciler.Validate) and registers
// the controller. It returns an error, naming the offending step or field,
// before anything runs.
func (b *Builder[T]) Complete(r *Reconciler[T]) error {
	if r == nil {
		return fmt.Errorf("bosun: %w: reconciler is nil", ErrInvalidConfig)
	}
	if b.mgr == nil {
		return errors.New("bosun: ControllerManagedBy: manager is nil")
	}
	if r.Name == "" {
		r.Name = b.name
	}
	name := b.name
	if name == "" {
		name = r.Name
	}
	if r.Client == nil {
		r.Client = b.mgr.GetClient()
	}
	if r.APIReader == nil {
		r.APIReader = b.mgr.GetAPIReader()
	}
	if r.Recorder == nil && r.Name != "" {
		r.Recorder = b.mgr.GetEventRecorder(r.Name)
	}
	if err := r.Validate(); err != nil {
		return err
	}
	forObj := client.Object(b.forObj)
	if !b.forSet || reflect.ValueOf(b.forObj).IsNil() {
		forObj = reflect.New(reflect.TypeFor[T]().Elem()).Interface().(client.Object)
	}
	inner := b.inner.For(forObj, b.forOpts...).Named(name)
	namespaced, err := apiutil.IsObjectNamespaced(forObj, b.mgr.GetScheme(), b.mgr.GetRESTMapper())
	if err != nil {
		return fmt.Errorf("bosun: reconciler %q: finding the scope of %T: %w", r.Name, forObj, err)
	}
	if namespaced {
		h, err := namespacePolicyHandler(b.mgr, forObj)
		if err != nil {
			return fmt.Errorf("bosun: reconciler %q: %w", r.Name, err)
		}
		inner = inner.Watches(&corev1.Namespace{}, h, builder.WithPredicates(namespacePolicyChanged()))
	}
	if err := inner.Complete(r); err != nil {
		return fmt.Errorf("bosun: reconciler %q: %w", r.Name, err)
	}
	return nil
}

// namespacePolicyChanged passes the updates of a Namespace that change its
// reconcile policy annotation; an empty value is the same as none.
func namespacePolicyChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			if e.ObjectOld == nil || e.ObjectNew == nil {
				return false
			}
			return e.ObjectOld.GetAnnotations()[PolicyAnnotation] != e.ObjectNew.GetAnnotations()[PolicyAnnotation]
		},
	}
}

// namespacePolicyHandler maps a Namespace to requests for every object of
// obj's kind in it, listed from the manager's cache.
func namespacePolicyHandler(mgr ctrl.Manager, obj client.Object) (handler.EventHandler, error) {
	scheme := mgr.GetScheme()
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return nil, fmt.Errorf("finding the kind of %T: %w", obj, err)
	}
	listGVK := gvk.GroupVersion().WithKind(gvk.Kind + "List")
	if _, err := scheme.New(listGVK); err != nil {
		return nil, fmt.Errorf("the scheme has no list type %s for the namespace policy watch: %w", listGVK, err)
	}
	c := mgr.GetClient()
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, ns client.Object) []reconcile.Request {
		o, err := scheme.New(listGVK)
		if err != nil {
			return nil
		}
		list := o.(client.ObjectList)
		if err := c.List(ctx, list, client.InNamespace(ns.GetName())); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing objects for a namespace policy change", "namespace", ns.GetName())
			return nil
		}
		var reqs []reconcile.Request
		_ = meta.EachListItem(list, func(item runtime.Object) error {
			if m, ok := item.(client.Object); ok {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(m)})
			}
			return nil
		})
		return reqs
	}), nil
}
