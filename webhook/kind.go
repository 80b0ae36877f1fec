package webhook

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	crconversion "sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	crwebhookconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
)

// Warnings are messages the API server passes back to the client (kubectl
// prints them) with an admitted or refused request.
type Warnings = admission.Warnings

// Kind is the webhooks of one kind T: defaulting, validation and, when T is
// the hub of several versions, conversion. At least one must be set.
//
// Default and Validate must have no side effects outside the object: the
// API server calls them for dry runs too (see DryRun), and may call them
// more than once for one request. The configurations say sideEffects=None.
type Kind[T client.Object] struct {
	// Default fills in what obj leaves unset, on create and update. It
	// runs before Validate. An error refuses the request: an
	// apierrors.APIStatus error keeps its code, any other is a 403 with
	// its message.
	Default func(ctx context.Context, obj T) error
	// Validate checks obj on create (old is nil) and update (old is the
	// object before it). Field errors refuse the request with 422 Invalid,
	// whose message names each field path and what is wrong with it;
	// warnings reach the client either way.
	Validate func(ctx context.Context, old, obj T) (Warnings, field.ErrorList)
	// ValidateDelete, when set, may refuse a delete of obj: the error's
	// message reaches the client with 403 Forbidden, or an
	// apierrors.APIStatus error keeps its own code. Nil admits every
	// delete; a configuration must list the delete verb to call it.
	ValidateDelete func(ctx context.Context, obj T) (Warnings, error)
}

// SetupWithManager registers the webhooks with mgr's webhook server:
// defaulting at /mutate-<group>-<version>-<kind> and validation at
// /validate-<group>-<version>-<kind> (dots in the group become dashes and
// the kind is lower case, the paths controller-gen's markers use), and, if
// T is a conversion.Hub with spokes in mgr's scheme, conversion at
// /convert. Register the webhooks of a kind of several versions on its
// hub: the API server converts what it sends them to the hub's version.
func (k *Kind[T]) SetupWithManager(mgr ctrl.Manager) error {
	obj := newObject[T]()
	gvk, err := apiutil.GVKForObject(obj, mgr.GetScheme())
	if err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	if _, spoke := any(obj).(crconversion.Convertible); spoke {
		return fmt.Errorf("webhook: %s %s is a spoke version; register the webhooks of a kind on its hub", gvk.Kind, gvk.GroupVersion())
	}
	hub, err := crwebhookconversion.IsConvertible(mgr.GetScheme(), obj)
	if err != nil {
		return fmt.Errorf("webhook: %s: %w", gvk.Kind, err)
	}
	if k.Default == nil && k.Validate == nil && k.ValidateDelete == nil && !hub {
		return fmt.Errorf("webhook: Kind[%s] sets none of Default, Validate and ValidateDelete, and %s has no other version to convert to", gvk.Kind, gvk.Kind)
	}
	b := ctrl.NewWebhookManagedBy(mgr, obj).RecoverPanic(true)
	if k.Default != nil {
		b = b.WithDefaulter(defaulter[T]{kind: k, gk: gvk.GroupKind()})
	}
	if k.Validate != nil || k.ValidateDelete != nil {
		b = b.WithValidator(validator[T]{kind: k, gk: gvk.GroupKind()})
	}
	if hub {
		b = b.WithConverter(func(s *runtime.Scheme) (crwebhookconversion.Converter, error) {
			return converter{scheme: s}, nil
		})
	}
	if err := b.Complete(); err != nil {
		return fmt.Errorf("webhook: registering the webhooks of %s: %w", gvk.Kind, err)
	}
	return nil
}

// DryRun reports whether the admission request ctx carries is a dry run,
// which must change nothing outside the object: a webhook that records or
// counts what it admits checks it first.
func DryRun(ctx context.Context) bool {
	req, err := admission.RequestFromContext(ctx)
	return err == nil && req.DryRun != nil && *req.DryRun
}

// newObject returns a new, empty T, which is a pointer to a struct.
func newObject[T client.Object]() T {
	var zero T
	return reflect.New(reflect.TypeOf(zero).Elem()).Interface().(T)
}

// defaulter adapts Kind.Default to controller-runtime's Defaulter.
type defaulter[T client.Object] struct {
	kind *Kind[T]
	gk   schema.GroupKind
}

// Default implements admission.Defaulter.
func (d defaulter[T]) Default(ctx context.Context, obj T) (err error) {
	if obj.GetDeletionTimestamp() != nil {
		return nil
	}
	defer recoverInto(&err, "defaulting", d.gk, obj)
	return d.kind.Default(ctx, obj)
}

// validator adapts Kind.Validate and Kind.ValidateDelete to
// controller-runtime's Validator.
type validator[T client.Object] struct {
	kind *Kind[T]
	gk   schema.GroupKind
}

// ValidateCreate implements admission.Validator.
func (v validator[T]) ValidateCreate(ctx context.Context, obj T) (Warnings, error) {
	var none T
	return v.validate(ctx, none, obj)
}

// ValidateUpdate implements admission.Validator.
func (v validator[T]) ValidateUpdate(ctx context.Context, old, obj T) (Warnings, error) {
	if obj.GetDeletionTimestamp() != nil {
		// Releasing a finalizer must always be possible.
		return nil, nil
	}
	return v.validate(ctx, old, obj)
}

// validate runs Kind.Validate and turns its field errors into an Invalid
// error.
func (v validator[T]) validate(ctx context.Context, old, obj T) (warnings Warnings, err error) {
	if v.kind.Validate == nil {
		return nil, nil
	}
	defer recoverInto(&err, "validating", v.gk, obj)
	warnings, errs := v.kind.Validate(ctx, old, obj)
	if len(errs) > 0 {
		return warnings, apierrors.NewInvalid(v.gk, nameOf(obj), errs)
	}
	return warnings, nil
}

// ValidateDelete implements admission.Validator.
func (v validator[T]) ValidateDelete(ctx context.Context, obj T) (warnings Warnings, err error) {
	if v.kind.ValidateDelete == nil {
		return nil, nil
	}
	defer recoverInto(&err, "validating", v.gk, obj)
	warnings, err = v.kind.ValidateDelete(ctx, obj)
	var status apierrors.APIStatus
	if err != nil && !errors.As(err, &status) {
		err = apierrors.NewForbidden(schema.GroupResource{Group: v.gk.Group, Resource: v.gk.Kind}, nameOf(obj), err)
	}
	return warnings, err
}

// recoverInto turns a panic of a webhook into an internal error that names
// the webhook and the object, stored in *err.
func recoverInto(err *error, webhook string, gk schema.GroupKind, obj client.Object) {
	if r := recover(); r != nil {
		*err = apierrors.NewInternalError(fmt.Errorf("panic in the %s webhook of %s %s: %v", webhook, gk.String(), objectRef(obj), r))
	}
}

// nameOf returns obj's name, or its generateName when the API server has
// not chosen the name yet.
func nameOf(obj client.Object) string {
	if obj.GetName() != "" {
		return obj.GetName()
	}
	return obj.GetGenerateName()
}

// objectRef returns obj as namespace/name, or name alone for a
// cluster-scoped object.
func objectRef(obj client.Object) string {
	if obj.GetNamespace() == "" {
		return nameOf(obj)
	}
	return obj.GetNamespace() + "/" + nameOf(obj)
}
