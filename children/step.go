package children

import (
	"context"
	"reflect"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/gone"
)

// Labels and annotations the step puts on children.
const (
	// LabelSet holds the name of the set (the step's name) a child
	// belongs to.
	LabelSet = "bosun.dev/set"
	// LabelOwner holds the UID of the parent whose set a child belongs
	// to.
	LabelOwner = "bosun.dev/owner"
	// annotationHash holds the hash of the desired child last applied.
	annotationHash = "bosun.dev/applied-hash"
	// AnnotationPrune set to "false" on a child keeps it when it is no
	// longer desired: the step leaves it alone instead of deleting it.
	AnnotationPrune = "bosun.dev/prune"
	// annotationOwnerNamespace and annotationOwnerName hold the key of the
	// parent of an unowned child (see NewUnownedStep).
	annotationOwnerNamespace = "bosun.dev/owner-namespace"
	// annotationOwnerName: see annotationOwnerNamespace.
	annotationOwnerName = "bosun.dev/owner-name"
	// annotationAdopted marks a child WithAdoption took over from someone
	// else: no longer desired, it is released, not deleted.
	annotationAdopted = "bosun.dev/adopted"
)

// Reasons of the conditions and errors of the step, and of its event.
const (
	// ReasonReady is the reason of a True kind condition.
	ReasonReady conditions.Reason = "Ready"
	// ReasonNotReady is the reason of a False kind condition, and of Ready
	// when a kind's condition makes it False.
	ReasonNotReady conditions.Reason = "NotReady"
	// ReasonInvalidChildren is the reason of a pass whose desired children
	// cannot be applied as they are (undeclared kind, duplicate, a
	// namespace the step may not use).
	ReasonInvalidChildren conditions.Reason = "InvalidChildren"
	// ReasonChildConflict is the reason of a pass that found a desired
	// child controlled by another object.
	ReasonChildConflict conditions.Reason = "ChildConflict"
	// ReasonChildExists is the reason of a kind's condition, and of Ready,
	// when the name of a desired child is taken by an object the set did
	// not create (no controller, no set label): the step leaves that object
	// alone and watches it, so the set heals as soon as the object is
	// removed. WithAdoption takes such objects over instead.
	ReasonChildExists conditions.Reason = "ChildExists"
	// ReasonApplyFailed is the reason of a pass whose apply or delete of a
	// child failed.
	ReasonApplyFailed conditions.Reason = "ApplyFailed"
	// ReasonRollingUpdate is the reason of a kind's condition, and of
	// Ready, while a pass holds back changes of children of the kind under
	// its MaxUnavailable.
	ReasonRollingUpdate conditions.Reason = "RollingUpdate"
	// ReasonChildrenChanged is the reason of the Normal event a pass
	// records when it created, updated or deleted children.
	ReasonChildrenChanged conditions.Reason = "ChildrenChanged"
)

// defaultCleanupInterval is how soon the Cleanup of an unowned step looks
// again after deleting children, until none is left.
const defaultCleanupInterval = time.Second

// DesiredFunc returns the children that the object of req should have.
// Children without a namespace go to the parent's; names are required.
type DesiredFunc[T client.Object] func(ctx context.Context, req *bosun.Pass[T]) ([]client.Object, error)

// Option configures a step.
type Option func(*config)

type config struct {
	fieldOwner string
	cleanup    time.Duration
	adopt      bool
	preds      []predicate.Predicate
}

// WithPredicates filters the events of the children's watches, which the
// step registers itself (see Step.SetupWithBuilder): only those that pass
// every predicate wake the parent.
func WithPredicates(preds ...predicate.Predicate) Option {
	return func(c *config) { c.preds = append(c.preds, preds...) }
}

// WithAdoption lets the step take over an existing object that holds the
// name of a desired child and that nothing controls (no controller
// reference, no set label): it is applied over, labelled, owned, marked
// adopted (annotation bosun.dev/adopted), and deleted with the parent
// like any member. When it is no longer desired it is given back rather
// than deleted: the step gives up every field it applied (an apply of
// nothing), so its labels, owner reference and data go, and what only the
// object's maker wrote stays (a value the step took over from the maker
// goes with the step's fields; where the kind requires it, such as a
// Deployment's image, the object keeps the step's values and loses only
// the set's labels and annotations and the owner reference). Without
// WithAdoption such an object is left untouched and reported with the
// reason "ChildExists".
// Objects controlled by something else, or members of another set, are
// never taken over.
func WithAdoption() Option { return func(c *config) { c.adopt = true } }

// WithFieldOwner sets the field manager of the step's server-side applies.
// The default is the reconciler's name (bosun.Pass.Controller).
func WithFieldOwner(name string) Option { return func(c *config) { c.fieldOwner = name } }

// WithCleanupInterval sets how soon the Cleanup of an unowned step looks
// again after deleting children (default one second).
func WithCleanupInterval(d time.Duration) Option { return func(c *config) { c.cleanup = d } }

// Step is the bosun step that makes the children of T match a desired set.
// Make one with NewStep.
type Step[T client.Object] struct {
	name     string
	desired  DesiredFunc[T]
	declared []Kind
	cfg      config
	unowned  bool
	conds    bool

	mu       sync.Mutex
	scheme   *runtime.Scheme
	resolved []kind
	// refused holds the kinds the operator may not list in every
	// namespace (see lookUpUnseen).
	refused map[schema.GroupVersionKind]bool

	// mem remembers, per parent, the children this step applied and
	// deleted lately, so that a pass working on a cache that lags behind
	// does not write them again, and what blocks the parent's children.
	mem memory
}

var (
	_ bosun.Step[client.Object]    = (*Step[client.Object])(nil)
	_ bosun.Named                  = (*Step[client.Object])(nil)
	_ bosun.ConditionOwner         = (*Step[client.Object])(nil)
	_ bosun.Setuper[client.Object] = (*Step[client.Object])(nil)
	_ bosun.Cleaner[client.Object] = (*UnownedStep[client.Object])(nil)
)

// NewStep returns a step named name, which is also the name of the set
// (LabelSet), that keeps the children desired returns, of the given kinds,
// in the parent's namespace and owned by it. A parent whose type has
// conditions gets one per kind.
func NewStep[T client.Object](name string, desired DesiredFunc[T], kinds []Kind, opts ...Option) *Step[T] {
	s := &Step[T]{name: name, desired: desired, declared: kinds, cfg: config{cleanup: defaultCleanupInterval}}
	for _, o := range opts {
		o(&s.cfg)
	}
	_, s.conds = reflect.New(reflect.TypeFor[T]().Elem()).Interface().(conditions.Object)
	return s
}

// UnownedStep is a Step for children in any namespace, or cluster-scoped,
// that carry no owner reference: the step deletes them in Cleanup. Make
// one with NewUnownedStep; its reconciler needs a finalizer.
type UnownedStep[T client.Object] struct {
	*Step[T]
}

// NewUnownedStep is NewStep for children in other namespaces than the
// parent's or cluster-scoped: they get the parent's key in
// the annotations bosun.dev/owner-namespace and bosun.dev/owner-name
// instead of an owner
// reference, and Cleanup deletes them (but those annotated AnnotationPrune
// "false") before the parent goes.
func NewUnownedStep[T client.Object](name string, desired DesiredFunc[T], kinds []Kind, opts ...Option) *UnownedStep[T] {
	s := NewStep(name, desired, kinds, opts...)
	s.unowned = true
	return &UnownedStep[T]{Step: s}
}

// Name returns the step's name, which is also the set's.
func (s *Step[T]) Name() string { return s.name }

// Conditions returns the condition type of each declared kind, when T has
// conditions.
func (s *Step[T]) Conditions() []string {
	if !s.conds {
		return nil
	}
	out := make([]string, 0, len(s.declared))
	for _, k := range s.declared {
		out = append(out, conditionType(k))
	}
	return out
}

// conditionType returns the condition type of k without a scheme: the
// declared one, else the kind of an unstructured object or the Go type's
// name, followed by "Ready".
func conditionType(k Kind) string {
	if k.Condition != "" {
		return k.Condition
	}
	if k.Object == nil || reflect.ValueOf(k.Object).IsNil() {
		return "Ready"
	}
	if u, ok := k.Object.(*unstructured.Unstructured); ok {
		return u.GetKind() + "Ready"
	}
	return reflect.TypeOf(k.Object).Elem().Name() + "Ready"
}

// PolicyRules returns the RBAC rules the step needs (see
// bosun.Reconciler.PolicyRules): get, list, watch, create, patch and delete
// on every declared kind (the cache, reads of the API server before a
// create, server-side apply, pruning) and, for children owned by the
// parent, update on the parent's finalizers subresource, which an owner
// reference with blockOwnerDeletion needs.
func (s *Step[T]) PolicyRules(scheme *runtime.Scheme) ([]rbacv1.PolicyRule, error) {
	ks, err := s.kinds(scheme)
	if err != nil {
		return nil, err
	}
	rules := make([]rbacv1.PolicyRule, 0, len(ks)+1)
	for _, k := range ks {
		res, _ := meta.UnsafeGuessKindToResource(k.gvk)
		rules = append(rules, rbacv1.PolicyRule{
			APIGroups: []string{k.gvk.Group}, Resources: []string{res.Resource},
			Verbs: []string{"get", "list", "watch", "create", "patch", "delete"},
		})
	}
	if !s.unowned {
		parent, err := apiutil.GVKForObject(reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T), scheme)
		if err != nil {
			return nil, err
		}
		res, _ := meta.UnsafeGuessKindToResource(parent)
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{parent.Group}, Resources: []string{res.Resource + "/finalizers"}, Verbs: []string{"update"}})
	}
	return rules, nil
}

// kinds returns the declared kinds resolved against scheme, once per
// scheme.
func (s *Step[T]) kinds(scheme *runtime.Scheme) ([]kind, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.scheme == scheme && s.resolved != nil {
		return s.resolved, nil
	}
	ks, err := resolve(s.declared, scheme)
	if err != nil {
		return nil, err
	}
	s.scheme, s.resolved = scheme, ks
	return ks, nil
}

// Do carries out a pass: it works out the plan (preparePass), reads from
// the API server the children the cache shows behind the step's own
// applies (confirmRecalled), applies
// the desired children that are missing or differ, but those held back by
// their kind's MaxUnavailable (applyChildren), deletes
// the members no longer desired (pruneChildren), and reports each kind's
// health (reportKinds).
func (s *Step[T]) Do(ctx context.Context, req *bosun.Pass[T]) (ctrl.Result, error) {
	s.mem.parents.Back(req.Object.GetUID(), gone.PassBegan(ctx))
	p := &pass{}
	// What blocks a child in this pass wakes the parent when it changes
	// or goes, until the parent's next pass.
	defer func() { s.mem.setBlockers(req.Object, p.blockers) }()
	if err := preparePass(ctx, s, req, p); err != nil {
		return ctrl.Result{}, err
	}
	if err := confirmRecalled(ctx, s, req, p); err != nil {
		return ctrl.Result{}, err
	}
	if gone, err := applyChildren(ctx, s, req, p); err != nil || gone {
		// A parent gone from the API server, or being deleted, has
		// nothing changed, pruned or reported on its behalf.
		return ctrl.Result{}, err
	}
	if err := pruneChildren(ctx, s, req, p); err != nil {
		return ctrl.Result{}, err
	}
	if len(p.plan.Held) > 0 {
		req.Log.V(1).Info("rolling update holds children back until others are ready", "set", s.name, "held", len(p.plan.Held))
	}
	if !p.plan.Empty() {
		req.Log.Info("children changed", "set", s.name, "created", len(p.plan.Create), "updated", len(p.plan.Update), "deleted", len(p.plan.Delete))
		req.Recorder.Eventf(req.Object, nil, corev1.EventTypeNormal, string(ReasonChildrenChanged), "Apply",
			"set %s: created %d, updated %d, deleted %d", s.name, len(p.plan.Create), len(p.plan.Update), len(p.plan.Delete))
	}
	// The kinds' conditions count a blocked child as not ready; the
	// pass's error reports the first.
	reportKinds(s, req, p)
	if err := p.conflictErr(); err != nil {
		return ctrl.Result{}, err
	}
	if p.lagging {
		req.Log.V(1).Info("cache behind the children's writes, looking again", "set", s.name)
		return ctrl.Result{RequeueAfter: cacheRetry}, nil
	}
	return ctrl.Result{}, nil
}

// Plan works out what Do would do for req, reading from the cache (and,
// for a desired child the cache does not show, or shows as it was before
// the step's apply of it lately, from the API server), and
// does nothing: a dry run. Under a kind's MaxUnavailable, Update lists
// the children the pass would update now and Held those it would leave
// for later passes.
func (s *Step[T]) Plan(ctx context.Context, req *bosun.Pass[T]) (Plan, error) {
	p := &pass{}
	if err := preparePass(ctx, s, req, p); err != nil {
		return Plan{}, err
	}
	if err := p.conflictErr(); err != nil {
		return Plan{}, err
	}
	if err := confirmRecalled(ctx, s, req, p); err != nil {
		return Plan{}, err
	}
	return p.plan, nil
}

// SetupWithBuilder registers the declared kinds with b, as
// bosun.Builder.Complete asks every step to: Owns for owned children, for
// unowned ones a watch that maps a child's owner annotations back to its
// parent. Events on children pass the predicates of WithPredicates, if
// any, first. It also registers what lets the step heal and forget: a
// watch of each kind that wakes the parents whose children an object
// blocks (reasons ChildExists, ChildConflict) when it changes or goes,
// with the same predicates; a source that looks up, every few seconds on
// the API server, the blocking objects the cache does not hold (see
// CacheSetsOnly); and a watch of the parents' kind that forgets what the
// step remembers of a parent when it is deleted or leaves the cache. It
// fails when a kind is not in the manager's scheme.
func (s *Step[T]) SetupWithBuilder(b *bosun.Builder[T]) error { return setupWatches(s, b) }

// fieldOwner returns the field manager of the step's applies for req: the
// one set with WithFieldOwner, else the reconciler's name, else "bosun".
func (s *Step[T]) fieldOwner(req *bosun.Pass[T]) string {
	switch {
	case s.cfg.fieldOwner != "":
		return s.cfg.fieldOwner
	case req.Controller != "":
		return req.Controller
	}
	return "bosun"
}

// listRefused reports whether the API server refused the step a list of
// gvk in every namespace.
func (s *Step[T]) listRefused(gvk schema.GroupVersionKind) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused[gvk]
}

// refuseList remembers that the API server refused the step a list of gvk
// in every namespace.
func (s *Step[T]) refuseList(gvk schema.GroupVersionKind) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refused == nil {
		s.refused = map[schema.GroupVersionKind]bool{}
	}
	s.refused[gvk] = true
}
