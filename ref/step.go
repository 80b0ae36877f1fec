package ref

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
)

// Step resolves the reference of the reconciled object, of type T, to an
// object of type R, and hands it to the later steps of the pass. Make one
// with Resolve.
//
// While the reference does not resolve to a ready object, Do sets the
// condition the step owns False, with the reason and a message saying
// why, and ends the pass quietly (bosun.ErrStop): no error is logged, no
// event recorded, and the pass is not retried; the watch the step sets up
// brings the next pass when the referenced object appears, changes or
// goes. Once the reference resolves, the condition is True ("Resolved")
// and the object is in Pass.Values under Key.
type Step[T client.Object, R client.Object] struct {
	name     string
	cond     string
	refOf    func(T) Reference
	ready    func(R) (bool, string)
	key      bosun.Key[R]
	field    string
	cross    bool
	optional bool
	recheck  time.Duration
	watch    []builder.WatchesOption
	err      error
}

var (
	_ bosun.Step[client.Object]     = (*Step[client.Object, client.Object])(nil)
	_ bosun.Observer[client.Object] = (*Step[client.Object, client.Object])(nil)
	_ bosun.Setuper[client.Object]  = (*Step[client.Object, client.Object])(nil)
	_ bosun.ConditionOwner          = (*Step[client.Object, client.Object])(nil)
	_ bosun.Named                   = (*Step[client.Object, client.Object])(nil)
)

// Option configures a Step.
type Option interface {
	apply(*settings)
}

// settings are what the options set.
type settings struct {
	cond      string
	readiness any
	cross     bool
	optional  bool
	recheck   time.Duration
	watch     []builder.WatchesOption
}

type optionFunc func(*settings)

func (f optionFunc) apply(s *settings) { f(s) }

// WithCondition names the condition the step owns. The default is the
// step's name with its first letter in upper case and "Resolved"
// appended: "OwnerResolved" for a step named "owner".
func WithCondition(condType string) Option {
	return optionFunc(func(s *settings) { s.cond = condType })
}

// ReadyWhen says when a referenced object is ready: fn returns whether it
// is and, when it is not, why, in words that end the condition message
// `Role "team-a/owner" is not ready: why`. R must be the step's R, or
// setting the step up fails. Without it an object whose type keeps
// conditions is ready when its Ready condition is True and describes its
// current generation (the condition's observedGeneration, else the
// object's status.observedGeneration, else the condition counts as
// current), and an object of any other type as soon as it exists. A
// function that returns true takes any object that exists.
func ReadyWhen[R client.Object](fn func(obj R) (ready bool, why string)) Option {
	return optionFunc(func(s *settings) {
		if fn == nil {
			s.readiness = nilReadiness{}
			return
		}
		s.readiness = fn
	})
}

// nilReadiness marks a ReadyWhen given a nil function.
type nilReadiness struct{}

// AllowCrossNamespace lets references lead into namespaces other than the
// referring object's. Without it such a reference is refused
// ("ReferenceNotAllowed"): whoever may write the referring object could
// otherwise make the operator read, and act on, objects of namespaces
// they have no access to. References of cluster-scoped objects and to
// cluster-scoped kinds are always allowed.
func AllowCrossNamespace() Option {
	return optionFunc(func(s *settings) { s.cross = true })
}

// Optional makes a zero Reference fine: the condition is True with
// reason "NoReference", the pass goes on, and Key holds no object.
func Optional() Option {
	return optionFunc(func(s *settings) { s.optional = true })
}

// WithRecheck makes a pass that ends because the reference does not
// resolve look again after d. The watch makes that needless when
// readiness depends on the referenced object alone; a readiness that
// looks further (the clock, another object) needs it.
func WithRecheck(d time.Duration) Option {
	return optionFunc(func(s *settings) { s.recheck = d })
}

// WithWatchOptions adds options, such as predicates, to the watch of the
// referenced kind.
func WithWatchOptions(opts ...builder.WatchesOption) Option {
	return optionFunc(func(s *settings) { s.watch = append(s.watch, opts...) })
}

// steps numbers the steps made, so that each registers a field index of
// its own.
var steps atomic.Uint64

// Resolve returns a step named name that resolves the reference refOf
// returns for the reconciled object to an object of type R (a pointer to a
// struct type of the manager's scheme).
//
//	owner := ref.Resolve[*v1.Database, *v1.Role]("owner",
//		func(d *v1.Database) ref.Reference { return ref.ByName(d.Spec.Owner) })
//	steps := []bosun.Step[*v1.Database]{owner, createDatabase{owner: owner}}
//	// in createDatabase.Do:
//	role, _ := s.owner.Resolved(req)
//
// Mistakes in name, refOf or opts are reported when the controller is set
// up (SetupWithBuilder).
func Resolve[T client.Object, R client.Object](name string, refOf func(T) Reference, opts ...Option) *Step[T, R] {
	var set settings
	for _, o := range opts {
		if o != nil {
			o.apply(&set)
		}
	}
	s := &Step[T, R]{
		name:     name,
		cond:     set.cond,
		refOf:    refOf,
		ready:    readyCondition[R],
		key:      bosun.NewKey[R](name),
		field:    fmt.Sprintf("bosun.dev/ref.%s.%d", name, steps.Add(1)),
		cross:    set.cross,
		optional: set.optional,
		recheck:  set.recheck,
		watch:    set.watch,
	}
	if s.cond == "" {
		s.cond = conditionType(name)
	}
	var errs []error
	if name == "" {
		errs = append(errs, errors.New("the name is empty"))
	}
	if refOf == nil {
		errs = append(errs, errors.New("the reference function is nil"))
	}
	if msgs := validation.IsQualifiedName(s.cond); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("condition type %q: %s", s.cond, strings.Join(msgs, "; ")))
	}
	if s.recheck < 0 {
		errs = append(errs, fmt.Errorf("the recheck interval must not be negative, got %s", s.recheck))
	}
	switch r := set.readiness.(type) {
	case nil:
	case nilReadiness:
		errs = append(errs, errors.New("the readiness function is nil"))
	case func(R) (bool, string):
		s.ready = r
	default:
		errs = append(errs, fmt.Errorf("the readiness function is a %T, not one of %s", r, reflect.TypeFor[R]()))
	}
	for _, err := range []error{structPointer[T](), structPointer[R]()} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	s.err = errors.Join(errs...)
	return s
}

// conditionType returns the default condition type of a step named name:
// name with its first letter in upper case, and "Resolved".
func conditionType(name string) string {
	r, size := utf8.DecodeRuneInString(name)
	if size == 0 {
		return "Resolved"
	}
	return string(unicode.ToUpper(r)) + name[size:] + "Resolved"
}

// structPointer checks that V is a pointer to a struct type.
func structPointer[V any]() error {
	t := reflect.TypeFor[V]()
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("type %s is not a pointer to a struct", t)
	}
	return nil
}

// newObject returns a new, empty V; V is a pointer to a struct type.
func newObject[V client.Object]() V {
	return reflect.New(reflect.TypeFor[V]().Elem()).Interface().(V)
}

// PolicyRules returns the RBAC rules the step needs beyond the engine's
// (see bosun.Reconciler.PolicyRules): get, list and watch on the
// referenced kind, which it reads through the cache and watches.
func (s *Step[T, R]) PolicyRules(scheme *runtime.Scheme) ([]rbacv1.PolicyRule, error) {
	gvk, err := apiutil.GVKForObject(reflect.New(reflect.TypeFor[R]().Elem()).Interface().(R), scheme)
	if err != nil {
		return nil, err
	}
	res, _ := meta.UnsafeGuessKindToResource(gvk)
	return []rbacv1.PolicyRule{{APIGroups: []string{gvk.Group}, Resources: []string{res.Resource}, Verbs: []string{"get", "list", "watch"}}}, nil
}

// Name returns the step's name.
func (s *Step[T, R]) Name() string { return s.name }

// Key returns the key under which Do leaves the resolved object in
// Pass.Values.
func (s *Step[T, R]) Key() bosun.Key[R] { return s.key }

// Resolved returns the object the step resolved in this pass, and whether
// it did: later steps of the pass call it. It is false under an Optional
// reference that names nothing, and in Cleanup (the step does not run
// then; use Lookup).
func (s *Step[T, R]) Resolved(p *bosun.Pass[T]) (R, bool) { return s.key.Get(p.Values) }

// Condition returns the type of the condition the step owns.
func (s *Step[T, R]) Condition() string { return s.cond }

// IndexField returns the name of the field index the step registers on
// T's kind. Its values are internal to the step.
func (s *Step[T, R]) IndexField() string { return s.field }

// Conditions returns the condition the step owns, when T keeps
// conditions (conditions.Object); otherwise none.
func (s *Step[T, R]) Conditions() []string {
	if s.err != nil {
		return nil // SetupWithBuilder reports why
	}
	if _, ok := any(newObject[T]()).(conditions.Object); !ok {
		return nil
	}
	return []string{s.cond}
}

// Do resolves the reference, sets the condition, and leaves the object in
// Pass.Values; it ends the pass quietly while the reference does not
// resolve to a ready object.
func (s *Step[T, R]) Do(ctx context.Context, p *bosun.Pass[T]) (ctrl.Result, error) {
	if s.err != nil {
		return ctrl.Result{}, conditions.Terminal(conditions.ReasonError, fmt.Errorf("ref %q: %w", s.name, s.err))
	}
	obj, err := s.Lookup(ctx, p)
	var unresolved *Error
	switch {
	case errors.Is(err, ErrNoReference) && s.optional:
		s.set(p, metav1.ConditionTrue, ReasonNoReference, "no object is referred to")
		return ctrl.Result{}, nil
	case errors.As(err, &unresolved):
		return s.stop(p, unresolved.Reason(), unresolved.Message)
	case err != nil:
		return ctrl.Result{}, &conditions.Error{Type: s.cond, Reason: ReasonReferenceReadFailed, Err: err}
	}
	desc := s.describe(p.Client, obj)
	if !obj.GetDeletionTimestamp().IsZero() {
		return s.stop(p, ReasonReferenceNotReady, desc+" is being deleted")
	}
	if ok, why := s.ready(obj); !ok {
		msg := desc + " is not ready"
		if why != "" {
			msg += ": " + why
		}
		return s.stop(p, ReasonReferenceNotReady, msg)
	}
	s.key.Set(p.Values, obj)
	s.set(p, metav1.ConditionTrue, ReasonResolved, "resolved to "+desc)
	return ctrl.Result{}, nil
}

// Observe does what Do does: resolving a reference changes nothing.
func (s *Step[T, R]) Observe(ctx context.Context, p *bosun.Pass[T]) (ctrl.Result, error) {
	return s.Do(ctx, p)
}

// stop reports an unresolved reference in the condition and ends the
// pass without an error.
func (s *Step[T, R]) stop(p *bosun.Pass[T], reason conditions.Reason, msg string) (ctrl.Result, error) {
	s.set(p, metav1.ConditionFalse, reason, msg)
	p.Log.V(1).Info("reference does not resolve", "step", s.name, "reason", reason, "detail", msg)
	return ctrl.Result{RequeueAfter: s.recheck}, bosun.ErrStop
}

// set sets the step's condition on the object, when it keeps conditions.
func (s *Step[T, R]) set(p *bosun.Pass[T], status metav1.ConditionStatus, reason conditions.Reason, msg string) {
	p.UpdateConditions(func(conds *[]metav1.Condition) {
		conditions.Set(conds, metav1.Condition{
			Type: s.cond, Status: status, Reason: string(reason), Message: msg, ObservedGeneration: p.Object.GetGeneration(),
		}, metav1.Now())
	})
}

// Lookup finds the object the reference of p.Object names, through
// p.Client, without checking that it is ready and without touching the
// conditions: for a Cleanup, which runs when Do does not. A reference that
// does not resolve gives an *Error wrapping ErrNoReference, ErrNotFound,
// ErrAmbiguous, ErrInvalid or ErrNotAllowed; a failed read gives the
// read's error, wrapped.
func (s *Step[T, R]) Lookup(ctx context.Context, p *bosun.Pass[T]) (R, error) {
	var zero R
	if s.err != nil {
		return zero, fmt.Errorf("ref %q: %w", s.name, s.err)
	}
	return s.lookup(ctx, p.Client, p.Object, s.refOf(p.Object))
}

// lookup resolves r, made by obj, reading through c.
func (s *Step[T, R]) lookup(ctx context.Context, c client.Client, obj T, r Reference) (R, error) {
	var zero R
	fail := func(sentinel error, format string, args ...any) (R, error) {
		return zero, &Error{Err: sentinel, Message: fmt.Sprintf(format, args...)}
	}
	target := newObject[R]()
	kind := kindOf(c, target)
	switch {
	case r.IsZero():
		return fail(ErrNoReference, "no %s is referred to", kind)
	case r.Name != "" && r.Selector != nil:
		return fail(ErrInvalid, "the reference to a %s has both a name (%q) and a selector (%s); give one", kind, r.Name, selectorString(r.Selector))
	}
	namespaced, err := c.IsObjectNamespaced(target)
	if err != nil {
		return zero, fmt.Errorf("finding the scope of %s: %w", kind, err)
	}
	ns := ""
	if namespaced {
		ns = r.Namespace
		if ns == "" {
			ns = obj.GetNamespace()
		}
		own := obj.GetNamespace()
		switch {
		case ns == "":
			return fail(ErrInvalid, "the reference %s names no namespace, and %s is namespaced", r, kind)
		case own != "" && ns != own && !s.cross:
			return fail(ErrNotAllowed, "the reference %s leads out of namespace %q, which is not allowed", r, own)
		}
	}
	if r.Name != "" {
		key := client.ObjectKey{Namespace: ns, Name: r.Name}
		if err := c.Get(ctx, key, target); err != nil {
			if apierrors.IsNotFound(err) {
				return fail(ErrNotFound, "%s %q does not exist", kind, keyString(key))
			}
			return zero, fmt.Errorf("reading %s %s: %w", kind, keyString(key), err)
		}
		return target, nil
	}
	return s.selectOne(ctx, c, kind, ns, r.Selector)
}

// selectOne lists the objects of R in ns (all, for a cluster-scoped kind)
// that sel matches, and returns the only one.
func (s *Step[T, R]) selectOne(ctx context.Context, c client.Client, kind, ns string, sel *metav1.LabelSelector) (R, error) {
	var zero R
	where := ""
	if ns != "" {
		where = fmt.Sprintf(" in namespace %q", ns)
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return zero, &Error{Err: ErrInvalid, Message: fmt.Sprintf("the selector of the reference to a %s does not parse: %v", kind, err)}
	}
	list, err := listOf(c.Scheme(), newObject[R]())
	if err != nil {
		return zero, err
	}
	if err := c.List(ctx, list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return zero, fmt.Errorf("listing %s%s matching %s: %w", kind, where, selectorString(sel), err)
	}
	var found []R
	var names []string
	err = meta.EachListItem(list, func(o runtime.Object) error {
		r, ok := o.(R)
		if !ok {
			return fmt.Errorf("list item %T is not a %s", o, reflect.TypeFor[R]())
		}
		// The in-memory clients of tests may not filter by labels.
		if !selector.Matches(labels.Set(r.GetLabels())) {
			return nil
		}
		found = append(found, r)
		names = append(names, r.GetName())
		return nil
	})
	if err != nil {
		return zero, fmt.Errorf("listing %s%s: %w", kind, where, err)
	}
	switch len(found) {
	case 0:
		return zero, &Error{Err: ErrNotFound, Message: fmt.Sprintf("no %s%s matches %s", kind, where, selectorString(sel))}
	case 1:
		return found[0], nil
	}
	slices.Sort(names)
	const shown = 5
	some := strings.Join(names[:min(shown, len(names))], ", ")
	if len(names) > shown {
		some += fmt.Sprintf(" and %d more", len(names)-shown)
	}
	return zero, &Error{Err: ErrAmbiguous, Message: fmt.Sprintf(
		"%d %s objects%s match %s (%s); the reference must match exactly one", len(found), kind, where, selectorString(sel), some)}
}

// describe names obj for a message: `Role "team-a/owner"`.
func (s *Step[T, R]) describe(c client.Client, obj R) string {
	return fmt.Sprintf("%s %q", kindOf(c, obj), keyString(client.ObjectKeyFromObject(obj)))
}

// keyString returns "namespace/name", or "name" for a cluster-scoped key.
func keyString(k client.ObjectKey) string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.String()
}

// kindOf returns the kind of obj, or its Go type name when c's scheme does
// not know it.
func kindOf(c client.Client, obj client.Object) string {
	if gvk, err := c.GroupVersionKindFor(obj); err == nil && gvk.Kind != "" {
		return gvk.Kind
	}
	return reflect.TypeOf(obj).Elem().Name()
}

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
