package managed

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/gone"
)

// Step is the engine step that manages one external resource per object;
// make it with NewStep. It is a bosun.Step, bosun.Cleaner, bosun.Observer,
// bosun.ConditionOwner, bosun.WriteFailureReporter, bosun.Named and
// bosun.Setuper.
//
// With a connection Secret (WithConnectionSecret), the step sets up a watch
// of the Secrets the objects control (Builder.Owns), so that a Secret
// deleted or changed by hand is written again; CacheConnectionSecretsOnly
// keeps that watch from caching every other Secret. It also watches the objects
// themselves, adding nothing to the queue, to forget what it remembers of
// those that leave the manager's cache (see the package documentation).
//
// Do connects, observes, and then creates, updates or does nothing; Cleanup
// deletes and waits until Observe no longer finds the resource. The step
// returns a RequeueAfter on success (the poll interval, or a short interval
// while something is in progress), which in a Sequence (a Reconciler's
// Steps are one) ends the steps after it: put it last, or arrange the
// steps with bosun.Join.
//
// A pass goes through five stages, each a type of its own file that owns
// the state it needs and holds the stages it calls: pace (pacer, and
// batcher for batch rounds), observe (observer, with caller and poller
// for the external calls), decide (the pure functions decide and
// decideCleanup), act (actor and cleaner) and record (recorder for the
// conditions and the result, writer, secrets and changes for what is
// written).
type Step[T client.Object] struct {
	cfg config
	// names are how the step names external resources.
	names naming[T]
	// memory is what the step remembers of each object between passes:
	// the failed creates, updates and deletes it backs off from, so that
	// the watch events of its own writes do not turn into a loop of
	// calls, and the change-log entries not yet seen saved. It is
	// released when the object is gone or leaves the manager's cache.
	memory memory

	// The stages Do, Observe and Cleanup call (see NewStep).
	pace  *pacer[T]
	obs   *observer[T]
	calls *caller[T]
	act   *actor[T]
	del   *cleaner[T]
	rec   *recorder[T]
	log   *changes[T]
}

var (
	_ bosun.Step[client.Object]     = &Step[client.Object]{}
	_ bosun.Cleaner[client.Object]  = &Step[client.Object]{}
	_ bosun.Observer[client.Object] = &Step[client.Object]{}
	_ bosun.ConditionOwner          = &Step[client.Object]{}
	_ bosun.Named                   = &Step[client.Object]{}
	_ bosun.Setuper[client.Object]  = &Step[client.Object]{}

	_ bosun.WriteFailureReporter[client.Object] = &Step[client.Object]{}
)

// NewStep returns the step that manages, through c, the external resource
// of each object. Durations that are not positive keep their defaults. It
// panics if c is nil, a programming error.
func NewStep[T client.Object](c Connector[T], opts ...Option) *Step[T] {
	if c == nil {
		panic("managed: NewStep: nil Connector")
	}
	cfg := defaults()
	for _, o := range opts {
		o(&cfg)
	}
	cfg.fill()
	if p := cfg.keys.prefix; p != "" {
		if errs := validation.IsDNS1123Subdomain(p); len(errs) > 0 {
			panic(fmt.Sprintf("managed: NewStep: annotation prefix %q: %s", p, strings.Join(errs, "; ")))
		}
	}
	s := &Step[T]{cfg: cfg, names: naming[T]{choose: cfg.nameFn, provider: cfg.providerNames, keys: cfg.keys}}
	ps := &s.memory.polls
	ps.objs = &s.memory.objs
	if _, ok := c.(BatchObserver[T]); ok {
		ps.batching.Store(true)
	}
	// Each stage is made after the stages it calls.
	meters, write := newMeters[T](cfg.name), newWriter[T](&cfg)
	s.rec = newRecorder(&cfg, meters, ps)
	s.calls = newCaller(&cfg, c, meters, s.rec, ps)
	s.log = newChanges[T](&cfg, &s.memory)
	secret := newSecrets(&cfg, &ps.keys, s.rec)
	ops := newPoller(&cfg, s.calls, s.rec, s.log, write, secret)
	batch := newBatcher(&cfg, ps, s.calls, s.names)
	s.pace = newPacer(&cfg, ps, secret)
	s.obs = newObserver(&cfg, s.names, s.calls, ops, batch, secret, s.rec, &s.memory)
	s.act = newActor(&cfg, s.calls, ops, write, secret, s.log, s.rec, meters, &s.memory)
	s.del = newCleaner(&cfg, s.obs, s.calls, write, secret, s.log, s.rec, meters, &s.memory)
	return s
}

// SetupWithBuilder watches the connection Secrets, which the objects
// control, when the step publishes them; and watches the objects for the
// moment they leave the manager's cache (deleted, or handed to another
// replica), to forget what the step remembers of them. That watch adds
// nothing to the queue. It also takes the controller's bosun.Enqueuer,
// through which Wake reaches the queue.
func (s *Step[T]) SetupWithBuilder(b *bosun.Builder[T]) error {
	if s.cfg.secretName != nil {
		b.Owns(&corev1.Secret{})
	}
	watchLeaving(b, &s.memory)
	s.memory.polls.enq.Store(b.Enqueuer())
	return nil
}

// Wake asks for a pass of the object key as soon as a worker is free, one
// that observes its external resource afresh: whenever its poll is due,
// and whatever a batch round observed of it. An external system that can
// tell when a resource changed (a notification, a webhook, a message)
// calls it, so that drift is repaired within seconds rather than at the
// next poll; the polls go on at their interval, for the changes nobody
// tells of.
// It is safe to call from any goroutine, before or after the manager
// starts. It reaches the queue once the step is set up with a
// bosun.Builder (SetupWithBuilder); a key the controller does not have
// costs a pass that finds nothing, and several Wakes of one key before its
// pass make one pass.
func (s *Step[T]) Wake(key client.ObjectKey) {
	s.memory.polls.wake(key, time.Now())
	if e := s.memory.polls.enq.Load(); e != nil {
		e.Enqueue(key)
	}
}

// PolicyRules returns the RBAC rules the step needs beyond the engine's
// (see bosun.Reconciler.PolicyRules): get, list and watch on Namespaces,
// whose adoption grant it reads (AnnotationAdoptExternal; none with
// WithAdoptionGranted); with a connection Secret, get, list,
// watch, create, update and delete on Secrets (the Secret is read from the
// cache and the API server, made, repaired and removed), and update on the
// object's finalizers subresource, which the Secret's owner reference with
// blockOwnerDeletion needs. The external system's own credentials are the
// Connector's business.
func (s *Step[T]) PolicyRules(scheme *runtime.Scheme) ([]rbacv1.PolicyRule, error) {
	var rules []rbacv1.PolicyRule
	if !s.cfg.adoptAll {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch"}})
	}
	if s.cfg.secretName == nil {
		return rules, nil
	}
	gvk, err := apiutil.GVKForObject(reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T), scheme)
	if err != nil {
		return nil, err
	}
	res, _ := meta.UnsafeGuessKindToResource(gvk)
	return append(rules,
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch", "create", "update", "delete"}},
		rbacv1.PolicyRule{APIGroups: []string{gvk.Group}, Resources: []string{res.Resource + "/finalizers"}, Verbs: []string{"update"}},
	), nil
}

// Name returns the step's name (see WithName).
func (s *Step[T]) Name() string { return s.cfg.name }

// ExternalName returns the name of obj's external resource as the step
// records it: what the package function ExternalName returns for a step
// of the default annotation prefix, and the name under the step's own
// prefix for one with WithAnnotationPrefix. It is for code outside the
// step's calls, such as an index of the objects by external name that
// routes notifications to Wake; empty when nothing is recorded yet.
func (s *Step[T]) ExternalName(obj client.Object) string { return s.cfg.keys.name(obj) }

// Conditions returns the types of the conditions the step owns: Synced and
// Available (see WithConditionTypes). The engine derives Ready from them:
// while the resource is being created, deleted or is unavailable, Ready is
// False with reason Creating, Deleting or Unavailable; when an error stops
// the step, Synced and Ready are False with the error's reason.
func (s *Step[T]) Conditions() []string { return []string{s.cfg.synced, s.cfg.available} }

// Do connects, observes, and creates, updates or leaves the external
// resource alone as the management policies allow: it paces (pacer),
// observes (observer), decides (decide) and acts (actor), and records the
// outcome (recorder). Pacing may end the pass before anything is called,
// or let it take a batch round's observation (see the package
// documentation).
// A resource under the external name that is not the object's (see the
// package documentation) is left alone, and reported in Synced with reason
// ExternalResourceConflict, or ReasonAdoptionNotGranted for an unmarked
// one where adoption is not granted.
func (s *Step[T]) Do(ctx context.Context, req *bosun.Pass[T]) (ctrl.Result, error) {
	s.memory.objs.Back(req.Object.GetUID(), gone.PassBegan(ctx))
	pace, res, end := s.pace.pace(ctx, req)
	if end {
		return res, nil
	}
	s.log.restore(req)
	now := s.cfg.now()
	s.rec.noteFirstReconcile(req, now)
	o, res, err := s.obs.observe(ctx, req, now, pace == paceBatch)
	if o == nil {
		return res, err
	}
	defer o.done()
	d := decide(o.facts)
	obj := req.Object
	if !o.obs.Exists {
		keepStatus(obj, o.target)
	}
	switch d.action {
	case actCreateIncomplete:
		return ctrl.Result{}, s.rec.incomplete(obj)
	case actCreateWait:
		return s.rec.creationWindow(req, o.name), nil
	case actCreateBackoff:
		// Meanwhile the pass reports the same error, so nothing is
		// written and controller-runtime's backoff applies.
		return ctrl.Result{}, o.facts.memo.create.err
	case actNotFound:
		return s.rec.notFound(req, o.name, o.facts.pol), nil
	case actCreate:
		return s.act.create(ctx, req, o.cl, o.name)
	case actConflict:
		s.rec.unavailable(obj, ReasonUnavailable, "the resource under the external name is not this object's")
		return ctrl.Result{}, s.rec.notOurs(obj, o.name, o.obs, o.facts.granted)
	case actNotGranted:
		return s.rec.notGranted(req, o.name), nil
	}
	s.act.adopt(req, o.target, o.name, d.lateInit)
	again, err := s.act.sync(ctx, req, o, d)
	if err != nil {
		return ctrl.Result{}, err
	}
	return s.rec.synced(req, o.obs, o.name, o.facts.now, d, again), nil
}

// Observe reports the external resource under the skip reconcile policy:
// it connects and observes, sets the conditions, and changes nothing else.
// Synced is False with conditions.ReasonReconcilePaused, Available reports
// what Observe found, and so Ready follows availability.
func (s *Step[T]) Observe(ctx context.Context, req *bosun.Pass[T]) (ctrl.Result, error) {
	// Observe records nothing new in the memory (restore keeps what is
	// there, Do and Cleanup record), so it calls no Back: a value of an
	// object that went and came back is made again by Do.
	s.log.restore(req)
	obj := req.Object
	now := s.cfg.now()
	s.rec.noteFirstReconcile(req, now)
	paused := fmt.Sprintf("the reconcile policy %q only observes the external resource: nothing is created, updated or deleted", req.Policy)
	if s.cfg.keys.name(obj) == "" && s.names.provider {
		s.rec.unavailable(obj, ReasonUnavailable, "the external resource has no name yet")
		s.rec.setPaused(obj, paused)
		return ctrl.Result{RequeueAfter: s.rec.poll(req)}, nil
	}
	target := s.names.named(obj)
	cl, done, err := s.calls.connect(ctx, req)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer done()
	obs, err := s.calls.observe(ctx, req, cl, target)
	if err != nil {
		return ctrl.Result{}, err
	}
	// Observing is all the skip policy does, so the resource is the
	// object's as it is to observe-only policies.
	m := s.memory.get(obj)
	f := s.obs.facts(obj, now, recorded(s.cfg.keys, obj, m), ObserveOnly(), m)
	if f.granted, err = s.obs.grant(ctx, req, f, obs); err != nil {
		return ctrl.Result{}, err
	}
	switch {
	case !obs.Exists:
		keepStatus(obj, target)
		s.rec.unavailable(obj, ReasonUnavailable, "the external resource does not exist")
	case !f.owns(obs) && refused(obs, f.granted) == actNotGranted:
		return s.rec.notGranted(req, s.cfg.keys.name(target)), nil
	case !f.owns(obs):
		s.rec.unavailable(obj, ReasonUnavailable, "the resource under the external name is not this object's")
		return ctrl.Result{}, s.rec.notOurs(obj, s.cfg.keys.name(target), obs, f.granted)
	default:
		// The status Observe wrote is kept; the spec never is.
		keepStatus(obj, target)
		s.rec.setAvailability(req, obj, obs.Available, now, false)
	}
	s.rec.setPaused(obj, paused)
	return ctrl.Result{RequeueAfter: s.rec.poll(req)}, nil
}

// Cleanup deletes the external resource, unless the deletion or management
// policies say to leave it, and waits until Observe no longer finds it. The
// connection Secret is removed in every case.
//
// A resource under the external name that is not the object's is left in
// place. Before each Delete the step commits the delete fence (annotation
// bosun.dev/external-delete-pending), guarded by the resourceVersion it
// read: a pass working on a stale copy of the object (one deleted and made
// again under the same name, whose old version the cache still shows)
// fails that write and deletes nothing. While the resource goes, Delete is
// called again at most once per short interval (after a failure, once per
// backoff), and the passes in between, such as the one the fence's own
// write brings, only observe.
func (s *Step[T]) Cleanup(ctx context.Context, req *bosun.Pass[T]) (ctrl.Result, error) {
	s.memory.objs.Back(req.Object.GetUID(), gone.PassBegan(ctx))
	s.log.restore(req)
	res, err := s.del.run(ctx, req)
	if err == nil && res == (ctrl.Result{}) {
		// Done: the engine lets the object go, with this pass's write.
		s.del.leaveDeletingLast(req)
	}
	return res, err
}

// WriteFailed reports in Synced, with reason ("SaveFailed", ...), that one
// of the engine's writes of the object failed with err: for instance a
// spec that Observe late-initialised and the API server refused. The
// engine calls it before it writes the status.
func (s *Step[T]) WriteFailed(req *bosun.Pass[T], reason conditions.Reason, err error) {
	s.rec.unsynced(req.Object, reason,
		fmt.Sprintf("the engine could not write the object (%s): %v", strings.TrimSuffix(string(reason), "Failed"), err))
}
