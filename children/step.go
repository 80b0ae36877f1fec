package children

import (
	"context"
	"fmt"
	"reflect"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/flow"
)

// Labels and annotations the step puts on children.
const (
	// LabelSet holds the name of the set (the step's name) a child
	// belongs to.
	LabelSet = "bosun.dev/set"
	// LabelOwner holds the UID of the parent whose set a child belongs
	// to.
	LabelOwner = "bosun.dev/owner"
	// AnnotationHash holds the hash of the desired child last applied.
	AnnotationHash = "bosun.dev/applied-hash"
	// AnnotationPrune set to "false" on a child keeps it when it is no
	// longer desired: the step leaves it alone instead of deleting it.
	AnnotationPrune = "bosun.dev/prune"
	// AnnotationOwnerNamespace and AnnotationOwnerName hold the key of the
	// parent of an unowned child (see NewUnownedStep).
	AnnotationOwnerNamespace = "bosun.dev/owner-namespace"
	// AnnotationOwnerName: see AnnotationOwnerNamespace.
	AnnotationOwnerName = "bosun.dev/owner-name"
)

// Reasons of the conditions and errors of the step.
const (
	// ReasonReady is the reason of a True kind condition.
	ReasonReady = "Ready"
	// ReasonNotReady is the reason of a False kind condition.
	ReasonNotReady = "NotReady"
	// ReasonInvalidChildren is the reason of a pass whose desired children
	// cannot be applied as they are (undeclared kind, duplicate, a
	// namespace the step may not use).
	ReasonInvalidChildren = "InvalidChildren"
	// ReasonChildConflict is the reason of a pass that found a desired
	// child controlled by another object.
	ReasonChildConflict = "ChildConflict"
	// ReasonChildExists is the reason of a kind's condition, and of Ready,
	// when the name of a desired child is taken by an object the set did
	// not create (no controller, no set label): the step leaves that object
	// alone and retries with backoff, so the set heals once the object is
	// removed. WithAdoption takes such objects over instead.
	ReasonChildExists = "ChildExists"
	// ReasonApplyFailed is the reason of a pass whose apply or delete of a
	// child failed.
	ReasonApplyFailed = "ApplyFailed"
)

// EventChildrenChanged is the reason of the event a pass records when it
// created, updated or deleted children.
const EventChildrenChanged = "ChildrenChanged"

// DefaultCleanupInterval is how soon the Cleanup of an unowned step looks
// again after deleting children, until none is left.
const DefaultCleanupInterval = time.Second

// CacheGrace is how long after the step applied or deleted a child it
// takes a cache that does not show the change yet for one lagging behind:
// the pass waits for it (looking again after CacheRetry) instead of writing
// the same thing again. After CacheGrace the cache is believed.
const CacheGrace = 5 * time.Second

// CacheRetry is how soon a pass that waits for the cache looks again.
const CacheRetry = time.Second

// DesiredFunc returns the children that the object of req should have.
// Children without a namespace go to the parent's; names are required.
type DesiredFunc[T client.Object] func(ctx context.Context, req *bosun.Request[T]) ([]client.Object, error)

// Option configures a step.
type Option func(*config)

type config struct {
	fieldOwner string
	cleanup    time.Duration
	adopt      bool
}

// WithAdoption lets the step take over an existing object that holds the
// name of a desired child and that nothing controls (no controller
// reference, no set label): it is applied over, labelled, owned, and from
// then on pruned and deleted with the parent like any member. Without it
// such an object is left untouched and reported with ReasonChildExists.
// Objects controlled by something else, or members of another set, are
// never taken over.
func WithAdoption() Option { return func(c *config) { c.adopt = true } }

// WithFieldOwner sets the field manager of the step's server-side applies.
// The default is the reconciler's name (bosun.Request.Controller).
func WithFieldOwner(name string) Option { return func(c *config) { c.fieldOwner = name } }

// WithCleanupInterval sets how soon the Cleanup of an unowned step looks
// again after deleting children (default DefaultCleanupInterval).
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

	// written remembers the children this step applied (by childID, the
	// hash and when) and deleted (by UID, when) lately, so that a pass
	// working on a cache that lags behind does not write them again.
	written sync.Map
}

// write is an entry of Step.written.
type write struct {
	hash string
	at   time.Time
	live client.Object // the child as the apply returned it
}

// forgetOld drops the entries of s.written older than CacheGrace.
func (s *Step[T]) forgetOld() {
	s.written.Range(func(k, v any) bool {
		if time.Since(v.(write).at) >= CacheGrace {
			s.written.Delete(k)
		}
		return true
	})
}

// recent returns the entry of key if it was written lately, with hash if
// hash is not empty.
func (s *Step[T]) recent(key, hash string) (write, bool) {
	v, ok := s.written.Load(key)
	if !ok {
		return write{}, false
	}
	w := v.(write)
	if time.Since(w.at) >= CacheGrace || hash != "" && w.hash != hash {
		return write{}, false
	}
	return w, true
}

var (
	_ bosun.Step[client.Object]    = (*Step[client.Object])(nil)
	_ bosun.Named                  = (*Step[client.Object])(nil)
	_ bosun.ConditionOwner         = (*Step[client.Object])(nil)
	_ bosun.Cleaner[client.Object] = (*UnownedStep[client.Object])(nil)
)

// NewStep returns a step named name, which is also the name of the set
// (LabelSet), that keeps the children desired returns, of the given kinds,
// in the parent's namespace and owned by it. A parent whose type has
// conditions gets one per kind.
func NewStep[T client.Object](name string, desired DesiredFunc[T], kinds []Kind, opts ...Option) *Step[T] {
	s := &Step[T]{name: name, desired: desired, declared: kinds, cfg: config{cleanup: DefaultCleanupInterval}}
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
// AnnotationOwnerNamespace and AnnotationOwnerName instead of an owner
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

// Watch registers the declared kinds with b: Owns for owned children, for
// unowned ones a watch that maps a child's owner annotations back to its
// parent. Events on children pass preds, if any, first. It fails when a
// kind is not in the manager's scheme.
func (s *Step[T]) Watch(b *bosun.Builder[T], preds ...predicate.Predicate) error {
	ks, err := s.kinds(b.Manager().GetScheme())
	if err != nil {
		return fmt.Errorf("children step %q: %w", s.name, err)
	}
	filter := builder.WithPredicates(preds...)
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

// Ref names a child in a Plan.
type Ref struct {
	// Kind is the child's kind, such as "ConfigMap".
	Kind string
	// Namespace is empty for a cluster-scoped child.
	Namespace string
	// Name is the child's name.
	Name string
}

// String returns "Kind namespace/name", or "Kind name" without a namespace.
func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// Plan is what a pass does to the children: the desired ones that are
// missing (Create) or differ from the live ones (Update), and the members
// of the set that are no longer desired (Delete). Each list is sorted.
type Plan struct {
	Create []Ref
	Update []Ref
	Delete []Ref
}

// Empty reports whether the plan changes nothing.
func (p Plan) Empty() bool { return len(p.Create)+len(p.Update)+len(p.Delete) == 0 }

// child is one desired child in a pass.
type child struct {
	kind    *kind
	ref     Ref
	applied *unstructured.Unstructured // the form to apply, stamped
	live    client.Object              // nil when missing
	change  bool
	id      string // unique within the pass and across parents
}

// pass is what a pass works out before it changes anything.
type pass struct {
	children []*child
	prune    []client.Object
	keep     []Ref
	plan     Plan
	// lagging is set when the cache does not show a write of this step
	// yet: the pass looks again after CacheRetry.
	lagging bool
}

// Plan works out what Do would do for req, reading from the cache (and,
// for a desired child the cache does not show, from the API server), and
// does nothing: a dry run.
func (s *Step[T]) Plan(ctx context.Context, req *bosun.Request[T]) (Plan, error) {
	p, err := s.prepare(ctx, req)
	if err != nil {
		return Plan{}, err
	}
	return p.plan, nil
}

// Do applies the desired children that are missing or differ, deletes the
// members no longer desired, and reports each kind's health.
func (s *Step[T]) Do(ctx context.Context, req *bosun.Request[T]) (ctrl.Result, error) {
	p, err := s.prepare(ctx, req)
	if err != nil {
		return ctrl.Result{}, err
	}
	owner := s.cfg.fieldOwner
	if owner == "" {
		owner = req.Controller
	}
	if owner == "" {
		owner = "bosun"
	}
	for _, c := range p.children {
		if !c.change {
			continue
		}
		u := c.applied.DeepCopy()
		if err := req.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(owner), client.ForceOwnership); err != nil {
			err = fmt.Errorf("applying %s: %w", c.ref, err)
			if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
				// The API server refuses the child as it is: retrying
				// cannot help until the parent changes.
				return ctrl.Result{}, conditions.Terminal(ReasonInvalidChildren, err)
			}
			return ctrl.Result{}, conditions.Warning(ReasonApplyFailed, err)
		}
		live, err := typed(u, c.kind)
		if err != nil {
			return ctrl.Result{}, err
		}
		c.live = live
		s.written.Store(c.id, write{hash: c.applied.GetAnnotations()[AnnotationHash], at: time.Now(), live: live})
		req.Log.V(1).Info("applied child", "child", c.ref.String())
	}
	for _, obj := range p.prune {
		if err := deleteChild(ctx, req.Client, obj); err != nil {
			return ctrl.Result{}, conditions.Warning(ReasonApplyFailed, err)
		}
		s.written.Store(string(obj.GetUID()), write{at: time.Now()})
		req.Log.V(1).Info("pruned child", "child", refOf(obj).String())
	}
	for _, r := range p.keep {
		req.Log.V(1).Info("keeping a child no longer desired", "child", r.String(), "annotation", AnnotationPrune)
	}
	if !p.plan.Empty() {
		req.Log.Info("children changed", "set", s.name, "created", len(p.plan.Create), "updated", len(p.plan.Update), "deleted", len(p.plan.Delete))
		req.Recorder.Eventf(req.Object, nil, corev1.EventTypeNormal, EventChildrenChanged, "Apply",
			"set %s: created %d, updated %d, deleted %d", s.name, len(p.plan.Create), len(p.plan.Update), len(p.plan.Delete))
	}
	s.report(req, p)
	if p.lagging {
		req.Log.V(1).Info("cache behind the children's writes, looking again", "set", s.name)
		return ctrl.Result{RequeueAfter: CacheRetry}, nil
	}
	return ctrl.Result{}, nil
}

// Cleanup deletes the unowned children of the set, except those annotated
// AnnotationPrune "false", and looks again until none is left. It lists
// them from the API server, not the cache, so a child applied just before
// the parent's deletion, which the cache may not show yet, is deleted too
// before the finalizer is released.
func (s *UnownedStep[T]) Cleanup(ctx context.Context, req *bosun.Request[T]) (ctrl.Result, error) {
	ks, err := s.kinds(req.Client.Scheme())
	if err != nil {
		return ctrl.Result{}, conditions.Terminal(ReasonInvalidChildren, err)
	}
	reader := req.APIReader
	if reader == nil {
		reader = req.Client
	}
	left := 0
	for i := range ks {
		members, err := s.membersFrom(ctx, reader, req, &ks[i])
		if err != nil {
			return ctrl.Result{}, err
		}
		for _, m := range members {
			if m.GetAnnotations()[AnnotationPrune] == "false" {
				continue
			}
			left++
			if !m.GetDeletionTimestamp().IsZero() {
				continue
			}
			if err := deleteChild(ctx, req.Client, m); err != nil {
				return ctrl.Result{}, err
			}
			req.Log.V(1).Info("deleted child", "child", refOf(m).String())
		}
	}
	if left > 0 {
		return ctrl.Result{RequeueAfter: s.cfg.cleanup}, nil
	}
	return ctrl.Result{}, nil
}

// callDesired calls the DesiredFunc, recovering a panic into a
// *flow.PanicError, so that Plan, which runs outside the engine, reports
// it as an error like Do does.
func (s *Step[T]) callDesired(ctx context.Context, req *bosun.Request[T]) (objs []client.Object, err error) {
	if s.desired == nil {
		return nil, nil
	}
	defer func() {
		if v := recover(); v != nil {
			objs, err = nil, &flow.PanicError{Action: s.name + " desired", Value: v, Stack: debug.Stack()}
		}
	}()
	return s.desired(ctx, req)
}

// prepare reads the desired children, stamps them, compares them with the
// live ones and finds the members to prune.
func (s *Step[T]) prepare(ctx context.Context, req *bosun.Request[T]) (*pass, error) {
	scheme := req.Client.Scheme()
	ks, err := s.kinds(scheme)
	if err != nil {
		return nil, conditions.Terminal(ReasonInvalidChildren, err)
	}
	desired, err := s.callDesired(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("computing the desired children: %w", err)
	}
	parent := req.Object
	parentGVK, err := apiutil.GVKForObject(parent, scheme)
	if err != nil {
		return nil, fmt.Errorf("looking up the parent's kind: %w", err)
	}
	s.forgetOld()
	p := &pass{}
	// The members of the set, one list per kind: the live form of the
	// desired children that exist, and the candidates for pruning.
	members := map[string]client.Object{}
	var order []string
	for i := range ks {
		ms, err := s.members(ctx, req, &ks[i])
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			id := ks[i].gvk.String() + " " + m.GetNamespace() + "/" + m.GetName()
			members[id] = m
			order = append(order, id)
		}
	}
	wanted := map[string]bool{}
	for i, obj := range desired {
		c, err := s.stamp(req, obj, i, ks, parentGVK)
		if err != nil {
			return nil, err
		}
		id := c.kind.gvk.String() + " " + c.ref.Namespace + "/" + c.ref.Name
		c.id = string(parent.GetUID()) + " " + id
		if wanted[id] {
			return nil, conditions.Terminal(ReasonInvalidChildren, fmt.Errorf("%s is desired twice", c.ref))
		}
		wanted[id] = true
		if err := s.compare(ctx, req, c, members[id]); err != nil {
			return nil, err
		}
		if w, ok := s.recent(c.id, c.applied.GetAnnotations()[AnnotationHash]); ok && c.change {
			// Applied just now: the cache has not caught up. The health
			// of the child is judged from what the apply returned.
			c.change, c.live = false, w.live
			p.lagging = true
		}
		p.children = append(p.children, c)
		switch {
		case c.live == nil:
			p.plan.Create = append(p.plan.Create, c.ref)
		case c.change:
			p.plan.Update = append(p.plan.Update, c.ref)
		}
	}
	for _, id := range order {
		m := members[id]
		if wanted[id] || !m.GetDeletionTimestamp().IsZero() {
			continue
		}
		if m.GetAnnotations()[AnnotationPrune] == "false" {
			p.keep = append(p.keep, refOf(m))
			continue
		}
		if _, ok := s.recent(string(m.GetUID()), ""); ok {
			// Deleted just now: the cache has not caught up.
			p.lagging = true
			continue
		}
		p.prune = append(p.prune, m)
		p.plan.Delete = append(p.plan.Delete, refOf(m))
	}
	for _, l := range []*[]Ref{&p.plan.Create, &p.plan.Update, &p.plan.Delete} {
		sort.Slice(*l, func(i, j int) bool { return (*l)[i].String() < (*l)[j].String() })
	}
	return p, nil
}

// stamp checks the desired child obj (the i-th) and returns it in the form
// to apply: its namespace filled in, the set's labels, the owner reference
// or annotations, and the hash.
func (s *Step[T]) stamp(req *bosun.Request[T], obj client.Object, i int, ks []kind, parentGVK schema.GroupVersionKind) (*child, error) {
	invalid := func(format string, args ...any) error {
		return conditions.Terminal(ReasonInvalidChildren, fmt.Errorf(format, args...))
	}
	if obj == nil || reflect.ValueOf(obj).IsNil() {
		return nil, invalid("desired child %d is nil", i)
	}
	scheme := req.Client.Scheme()
	gvk, err := gvkOf(obj, scheme)
	if err != nil {
		return nil, invalid("desired child %d: %w", i, err)
	}
	var k *kind
	for j := range ks {
		if ks[j].gvk == gvk {
			k = &ks[j]
		}
	}
	if k == nil {
		return nil, invalid("desired child %s %q: %w", gvk.Kind, obj.GetName(), ErrUndeclaredKind)
	}
	if obj.GetName() == "" {
		return nil, invalid("desired child %d (%s) has no name", i, gvk.Kind)
	}
	u, err := toUnstructured(obj)
	if err != nil {
		return nil, invalid("desired child %s %q: %w", gvk.Kind, obj.GetName(), err)
	}
	u.SetGroupVersionKind(gvk)
	namespaced, err := req.Client.IsObjectNamespaced(u)
	if err != nil {
		return nil, fmt.Errorf("looking up the scope of %s: %w", gvk.Kind, err)
	}
	parent := req.Object
	switch {
	case !namespaced:
		u.SetNamespace("")
	case u.GetNamespace() == "":
		if parent.GetNamespace() == "" {
			return nil, invalid("desired child %s %q needs a namespace: the parent is cluster-scoped", gvk.Kind, u.GetName())
		}
		u.SetNamespace(parent.GetNamespace())
	}
	ref := Ref{Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelSet] = s.name
	labels[LabelOwner] = string(parent.GetUID())
	u.SetLabels(labels)
	if s.unowned {
		ann := u.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[AnnotationOwnerNamespace] = parent.GetNamespace()
		ann[AnnotationOwnerName] = parent.GetName()
		u.SetAnnotations(ann)
	} else {
		if parent.GetNamespace() != "" && ref.Namespace != parent.GetNamespace() {
			where := "cluster-scoped"
			if ref.Namespace != "" {
				where = "in namespace " + ref.Namespace
			}
			return nil, invalid("desired child %s is %s, and an owned child must be in the parent's namespace (use NewUnownedStep)", ref, where)
		}
		u.SetOwnerReferences([]metav1.OwnerReference{{
			APIVersion:         parentGVK.GroupVersion().String(),
			Kind:               parentGVK.Kind,
			Name:               parent.GetName(),
			UID:                parent.GetUID(),
			Controller:         ptr.To(true),
			BlockOwnerDeletion: ptr.To(true),
		}})
	}
	hash, err := hashOf(u)
	if err != nil {
		return nil, err
	}
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotationHash] = hash
	u.SetAnnotations(ann)
	return &child{kind: k, ref: ref, applied: u}, nil
}

// compare finds the live child, member if it is a member of the set, else
// read from the cache (an object the set does not hold yet), and decides
// whether it must be applied. A child the cache does not show is looked
// up on the API server before it is created, so an object the cache has
// not seen yet is not applied over.
func (s *Step[T]) compare(ctx context.Context, req *bosun.Request[T], c *child, member client.Object) error {
	live := member
	if live == nil {
		key := client.ObjectKey{Namespace: c.ref.Namespace, Name: c.ref.Name}
		live = c.kind.newObject()
		err := req.Client.Get(ctx, key, live)
		if apierrors.IsNotFound(err) && req.APIReader != nil {
			live = c.kind.newObject()
			err = req.APIReader.Get(ctx, key, live)
			if err == nil {
				req.Log.V(1).Info("child not in the cache yet, read from the API server", "child", c.ref.String())
			}
		}
		if apierrors.IsNotFound(err) {
			c.change = true
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", c.ref, err)
		}
	}
	if ctl := metav1.GetControllerOf(live); ctl != nil && ctl.UID != req.Object.GetUID() {
		return conditions.Terminal(ReasonChildConflict, fmt.Errorf("%s exists and is controlled by %s %s", c.ref, ctl.Kind, ctl.Name))
	}
	if l := live.GetLabels(); l[LabelSet] != "" && (l[LabelSet] != s.name || l[LabelOwner] != string(req.Object.GetUID())) {
		return conditions.Terminal(ReasonChildConflict, fmt.Errorf("%s exists and belongs to set %q of another object", c.ref, l[LabelSet]))
	}
	if member == nil && !s.ours(req, live) && !s.cfg.adopt {
		return &conditions.Error{
			Type:     c.kind.condition,
			Reason:   ReasonChildExists,
			Severity: conditions.SeverityWarning,
			Err: fmt.Errorf("%s exists and was not created by set %q: it is left alone; delete or rename it, or let the step adopt it (WithAdoption)",
				c.ref, s.name),
		}
	}
	c.live = live
	lu, err := liveUnstructured(live)
	if err != nil {
		return err
	}
	c.change = !upToDate(c.applied, lu)
	if !c.change {
		s.written.Delete(c.id)
	}
	return nil
}

// ours reports whether live, an object with the name of a desired child
// that is not among the members listed from the cache, was made by this
// set for the parent of req: it carries the set's labels for the parent (a
// child the cache does not show yet), or, for an owned child that lost its
// labels, has the parent as its controller. An unowned child without the
// labels cannot be told from anyone else's.
func (s *Step[T]) ours(req *bosun.Request[T], live client.Object) bool {
	uid := req.Object.GetUID()
	if l := live.GetLabels(); l[LabelSet] == s.name && l[LabelOwner] == string(uid) {
		return true
	}
	if s.unowned {
		return false
	}
	ctl := metav1.GetControllerOf(live)
	return ctl != nil && ctl.UID == uid
}

// members lists, from the cache, the children of kind k that carry the
// set's labels for the parent of req.
func (s *Step[T]) members(ctx context.Context, req *bosun.Request[T], k *kind) ([]client.Object, error) {
	return s.membersFrom(ctx, req.Client, req, k)
}

// membersFrom lists, through r, the children of kind k that carry the
// set's labels for the parent of req. An object with those labels that
// something else controls was not created by the set: it is left out, so
// it is never pruned or deleted, and a desired child of its name is a
// conflict.
func (s *Step[T]) membersFrom(ctx context.Context, r client.Reader, req *bosun.Request[T], k *kind) ([]client.Object, error) {
	list, err := k.newList(req.Client.Scheme())
	if err != nil {
		return nil, err
	}
	opts := []client.ListOption{client.MatchingLabels{LabelSet: s.name, LabelOwner: string(req.Object.GetUID())}}
	if !s.unowned && req.Object.GetNamespace() != "" {
		opts = append(opts, client.InNamespace(req.Object.GetNamespace()))
	}
	if err := r.List(ctx, list, opts...); err != nil {
		return nil, fmt.Errorf("listing the %s children: %w", k.gvk.Kind, err)
	}
	items, err := apimeta.ExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("reading the %s children: %w", k.gvk.Kind, err)
	}
	out := make([]client.Object, 0, len(items))
	for _, it := range items {
		obj, ok := it.(client.Object)
		if !ok {
			return nil, fmt.Errorf("a %s list item of type %T is not an object", k.gvk.Kind, it)
		}
		if ctl := metav1.GetControllerOf(obj); ctl != nil && ctl.UID != req.Object.GetUID() {
			continue
		}
		out = append(out, obj)
	}
	return out, nil
}

// report sets the condition of each declared kind from the readiness of
// its desired children.
func (s *Step[T]) report(req *bosun.Request[T], p *pass) {
	co, ok := any(req.Object).(conditions.Object)
	if !ok {
		return
	}
	ks, _ := s.kinds(req.Client.Scheme())
	conds := co.GetConditions()
	now := metav1.Now()
	for i := range ks {
		k := &ks[i]
		var notReady []string
		total := 0
		for _, c := range p.children {
			if c.kind.gvk != k.gvk {
				continue
			}
			total++
			if c.live == nil {
				notReady = append(notReady, c.ref.Name+": not created")
				continue
			}
			if ready, msg := k.ready.Ready(c.live); !ready {
				if msg == "" {
					msg = "not ready"
				}
				notReady = append(notReady, c.ref.Name+": "+msg)
			}
		}
		cond := metav1.Condition{Type: k.condition, Status: metav1.ConditionTrue, Reason: ReasonReady, ObservedGeneration: req.Object.GetGeneration()}
		switch {
		case len(notReady) > 0:
			sort.Strings(notReady)
			cond.Status, cond.Reason = metav1.ConditionFalse, ReasonNotReady
			cond.Message = fmt.Sprintf("%d of %d %s not ready: %s", len(notReady), total, k.gvk.Kind, listSome(notReady, maxListed))
		case total == 0:
			cond.Message = "no " + k.gvk.Kind + " desired"
		default:
			cond.Message = fmt.Sprintf("%d %s ready", total, k.gvk.Kind)
		}
		conditions.Set(&conds, cond, now)
	}
	co.SetConditions(conds)
}

// maxListed is how many children a condition message names at most.
const maxListed = 20

// listSome joins the first n of items, and says how many more there are.
// Each item is cut to a few hundred bytes, so the message stays small
// whatever the children are called or their readiness checks say.
func listSome(items []string, n int) string {
	const maxItem = 256
	shown := items[:min(n, len(items))]
	parts := make([]string, len(shown), len(shown)+1)
	for i, it := range shown {
		if len(it) > maxItem {
			it = conditions.Bound(it[:maxItem]) + "..."
		}
		parts[i] = it
	}
	if more := len(items) - len(shown); more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(parts, "; ")
}

// deleteChild deletes obj, in the background, if it is still the object
// that was read; a child already gone is fine.
func deleteChild(ctx context.Context, c client.Client, obj client.Object) error {
	uid := obj.GetUID()
	err := c.Delete(ctx, obj, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s: %w", refOf(obj), err)
	}
	return nil
}

// refOf returns the Ref of a live object.
func refOf(obj client.Object) Ref {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if kind == "" {
		kind = reflect.TypeOf(obj).Elem().Name()
	}
	return Ref{Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// liveUnstructured returns the live object in unstructured form, for
// comparison.
func liveUnstructured(obj client.Object) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %T: %w", obj, err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// typed returns the applied object u as k's type, for readiness checks.
func typed(u *unstructured.Unstructured, k *kind) (client.Object, error) {
	obj := k.newObject()
	if ou, ok := obj.(*unstructured.Unstructured); ok {
		ou.Object = u.Object
		return ou, nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return nil, fmt.Errorf("converting the applied %s: %w", u.GetKind(), err)
	}
	return obj, nil
}
