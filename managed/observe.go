package managed

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/internal/statusfield"
)

// observer is the first stage of a pass: it reads the policies, connects,
// polls a long operation under way and observes, and gathers the facts
// the decision needs.
type observer[T client.Object] struct {
	names  naming[T]
	calls  *caller[T]
	ops    *poller[T]
	batch  *batcher[T]
	secret *secrets[T]
	rec    *recorder[T]
	memory *memory
	// The step's policies, which annotations override per object;
	// adoptAll grants every object adoption (WithAdoptionGranted).
	defaultPolicies Policies
	defaultDeletion DeletionPolicy
	defaultOrder    DeletionOrder
	adoptAll        bool
	// grace and short are the creation grace period and the short
	// interval the decision uses; syncedType is the type of the
	// condition that reports a policy that does not parse.
	grace, short time.Duration
	syncedType   string
	now          func() time.Time
}

// newObserver returns the observer of a step configured by cfg, made of
// its other stages; it remembers in m.
func newObserver[T client.Object](cfg *config, names naming[T], calls *caller[T], ops *poller[T], batch *batcher[T], secret *secrets[T], rec *recorder[T], m *memory) *observer[T] {
	return &observer[T]{
		names: names, calls: calls, ops: ops, batch: batch, secret: secret, rec: rec, memory: m,
		defaultPolicies: cfg.policies, defaultDeletion: cfg.deletion, defaultOrder: cfg.order, adoptAll: cfg.adoptAll,
		grace: cfg.grace, short: cfg.short, syncedType: cfg.synced, now: cfg.now,
	}
}

// observed is what the observe stage of Do hands on.
type observed[T client.Object] struct {
	facts facts
	// cl is the connected client, nil when the observation came from a
	// batch round; done disconnects it.
	cl   ExternalClient[T]
	done func()
	// target is the copy of the object Observe worked on, name the
	// external name it carries, obs what Observe reported.
	target T
	name   string
	obs    Observation
}

// observe is Do's observe stage, at now. It returns nil, with the pass's
// result, when the pass ends before a decision: a bad policy or Secret
// name, a failed Connect or Observe, or a long operation still running.
// With batch (paceBatch), it takes a batch round's observation when that
// finds nothing to do (fromBatch), and observes on its own otherwise.
func (o *observer[T]) observe(ctx context.Context, req *bosun.Pass[T], now time.Time, batch bool) (*observed[T], ctrl.Result, error) {
	obj := req.Object
	pol, err := o.policies(obj)
	if err != nil {
		return nil, ctrl.Result{}, err
	}
	if err := o.secret.checkName(obj); err != nil {
		return nil, ctrl.Result{}, err
	}
	if batch {
		if p := o.fromBatch(ctx, req, now, pol); p != nil {
			return p, ctrl.Result{}, nil
		}
	}
	cl, done, err := o.calls.connect(ctx, req)
	if err != nil {
		return nil, ctrl.Result{}, err
	}
	if wait, res, err := o.ops.poll(ctx, req, cl); wait {
		done()
		return nil, res, err
	}
	m := o.memory.get(obj)
	ann := recorded(o.names.keys, obj, m)
	// Observe works on a copy: the status it writes is kept unless the
	// resource is another object's; the spec it fills in only if the
	// resource proves to be the object's and the policies allow
	// LateInitialize.
	target := o.names.named(obj)
	obs, err := o.calls.observe(ctx, req, cl, target)
	if err != nil {
		done()
		return nil, ctrl.Result{}, err
	}
	p := &observed[T]{cl: cl, done: done, target: target, name: o.names.keys.name(target), obs: obs}
	p.facts = o.facts(obj, now, ann, pol, m)
	p.facts.obs = &p.obs
	if p.facts.granted, err = o.grant(ctx, req, p.facts, obs); err != nil {
		done()
		return nil, ctrl.Result{}, err
	}
	return p, ctrl.Result{}, nil
}

// grant returns whether adoption is granted to the pass's object, when
// the decision on obs needs it (see facts.needsGrant), and false
// otherwise: WithAdoptionGranted, or AnnotationAdoptExternal "true" on the
// object's Namespace, whose metadata it reads from the manager's cache (as
// the engine does for the reconcile policy).
func (o *observer[T]) grant(ctx context.Context, req *bosun.Pass[T], f facts, obs Observation) (bool, error) {
	if !f.needsGrant(obs) {
		return false, nil
	}
	if o.adoptAll {
		return true, nil
	}
	name := req.Object.GetNamespace()
	if name == "" {
		return false, nil
	}
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	if err := req.Client.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, o.rec.fail(ReasonObserveFailed, fmt.Errorf("reading the adoption grant of namespace %s: %w", name, err))
	}
	return strings.EqualFold(strings.TrimSpace(ns.Annotations[AnnotationAdoptExternal]), "true"), nil
}

// fromBatch returns what a batch round observed of the pass's object, as
// the observe stage hands it on, when the decision on it is to do nothing
// (actReport, without late initialisation) and the resource is
// available: the pass then calls nothing, and its client is nil. It
// returns nil when the pass must observe on its own: no round observed the
// object (see batcher.observation), or what the round found calls for
// something (a resource missing, out of date, not the object's, not
// available), which the pass acts on only after an Observe of its own.
func (o *observer[T]) fromBatch(ctx context.Context, req *bosun.Pass[T], now time.Time, pol Policies) *observed[T] {
	e := o.batch.observation(ctx, req)
	if e == nil {
		return nil
	}
	obj := req.Object
	target := e.out.DeepCopyObject().(T)
	p := &observed[T]{done: func() {}, target: target, name: o.names.keys.name(target), obs: e.obs}
	m := o.memory.get(obj)
	p.facts = o.facts(obj, now, recorded(o.names.keys, obj, m), pol, m)
	p.facts.obs = &p.obs
	if d := decide(p.facts); d.action != actReport || d.lateInit || !p.obs.Available {
		req.Log.V(1).Info("a batch found something to do, observing on its own", "externalName", p.name)
		return nil
	}
	return p
}

// facts returns the facts about obj that both Do and Cleanup decide from.
func (o *observer[T]) facts(obj T, now time.Time, ann map[string]string, pol Policies, m memo) facts {
	return facts{
		now: now, gen: obj.GetGeneration(), identity: Identity(obj), ann: ann, named: o.names.keys.name(obj) != "",
		chosen:        o.names.chosen(obj),
		providerNames: o.names.provider, grace: o.grace, short: o.short, pol: pol, memo: m,
	}
}

// cleanupFacts returns the facts Cleanup decides from before it observes.
// A deletion order that does not parse is kept in the facts: it counts
// only when the decision reaches it.
func (o *observer[T]) cleanupFacts(req *bosun.Pass[T]) (facts, error) {
	obj := req.Object
	pol, err := o.policies(obj)
	if err != nil {
		return facts{}, err
	}
	del, err := o.deletionPolicy(obj)
	if err != nil {
		return facts{}, err
	}
	m := o.memory.get(obj)
	f := o.facts(obj, o.now(), recorded(o.names.keys, obj, m), pol, m)
	order, err := o.deletionOrder(obj)
	f.orphan, f.last, f.orderErr = del == DeletionOrphan, order == DeletionOrderLast, err
	f.finalizers, f.controller, f.deletingLast = len(obj.GetFinalizers()), req.Controller, deletingLast(obj)
	f.lastCleanup = req.LastCleanup()
	return f, nil
}

// policies returns the management policies of obj.
func (o *observer[T]) policies(obj T) (Policies, error) {
	v, ok := obj.GetAnnotations()[AnnotationManagementPolicies]
	if !ok {
		return o.defaultPolicies, nil
	}
	p, err := ParsePolicies(v)
	if err != nil {
		return Policies{}, invalidPolicy(o.syncedType, fmt.Errorf("annotation %s: %w", AnnotationManagementPolicies, err))
	}
	return p, nil
}

// deletionPolicy returns the deletion policy of obj.
func (o *observer[T]) deletionPolicy(obj T) (DeletionPolicy, error) {
	v, ok := obj.GetAnnotations()[AnnotationDeletionPolicy]
	if !ok {
		return o.defaultDeletion, nil
	}
	p, err := ParseDeletionPolicy(v)
	if err != nil {
		return "", invalidPolicy(o.syncedType, fmt.Errorf("annotation %s: %w", AnnotationDeletionPolicy, err))
	}
	return p, nil
}

// deletionOrder returns the deletion order of obj.
func (o *observer[T]) deletionOrder(obj T) (DeletionOrder, error) {
	v, ok := obj.GetAnnotations()[AnnotationDeletionOrder]
	if !ok {
		return o.defaultOrder, nil
	}
	d, err := ParseDeletionOrder(v)
	if err != nil {
		return "", invalidPolicy(o.syncedType, fmt.Errorf("annotation %s: %w", AnnotationDeletionOrder, err))
	}
	return d, nil
}

// keepStatus sets the status of dst to that of src, the copy Observe
// worked on, when their type has a Status field: what Observe wrote there
// of the external resource (status.atProvider, by convention) is kept,
// whatever it did to the copy's spec.
func keepStatus[T client.Object](dst, src T) {
	statusfield.Copy(dst, src)
}
