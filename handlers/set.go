package handlers

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/internal/panics"
	"github.com/bosunkit/bosun/internal/register"
)

// phaseRemove is the phase label of the metrics of the handlers a Set
// runs for objects that are gone (Set.OnRemove).
const phaseRemove = "remove"

// stepName is the name of the engine step that runs the OnChange handlers
// of a Set, in order; no handler may take it.
const stepName = "handlers"

// ErrStarted is wrapped by the error of OnChange, OnRemove and Configure
// once the controller of the Set is built, when the manager has started.
var ErrStarted = errors.New("the handlers already run")

// ChangeFunc handles an object of a Set's kind that exists: it
// runs as a step of the engine (see bosun.Step), so it changes p.Object and the
// engine writes what changed once every handler ran.
type ChangeFunc[T client.Object] func(ctx context.Context, p *bosun.Pass[T]) (ctrl.Result, error)

// RemoveFunc handles the key of an object of a Set's kind that is
// gone.
type RemoveFunc func(ctx context.Context, key client.ObjectKey) error

// Set is the registry of the named handlers of one kind on one
// manager, run by one controller: independent pieces of an operator,
// from different packages if need be, that each react to the objects of
// a kind without a controller each. Make it with New.
//
// On each request for an object that exists, the OnChange handlers run as
// steps of one engine Reconciler, in the order they were registered, all
// of them even when some fail (as bosun.OrderedJoin runs steps): their errors
// are joined, each prefixed with its handler's name, and the shortest
// requeue wins. Each handler logs with the key "handler", and has the
// engine's step metrics under its name (phase "do").
//
// On each request for an object that is gone, the OnRemove handlers run
// with its key, in order, all of them; their errors are joined and the
// request is retried with the controller's backoff. They have the same
// metrics, with phase "remove". An object is gone when neither the cache
// nor the API server (a read of its metadata through the Reconciler's
// APIReader) has it: a cache may lack live objects, those of other
// replicas when each caches a share (package shard), or one just made,
// and keys of such objects reach the controller through its watches, its
// Enqueuer or a share that moves; for them no handler runs. OnRemove
// handlers are for operators that hold no finalizer on the objects: they
// run after a deletion was seen, and for keys enqueued of objects that do
// not exist; an object deleted while no replica ran is never seen. They
// must be idempotent: a handler that succeeded runs again when another
// one failed, and a key may reach more than one replica. To act before an
// object is gone, write a bosun.Cleaner step on a Reconciler instead.
//
// Register every handler before the manager starts: the controller is
// built when it starts, with the handlers registered by then.
type Set[T client.Object] struct {
	mgr  ctrl.Manager
	gvk  schema.GroupVersionKind
	name string

	mu      sync.Mutex
	err     error
	changes []namedChange[T]
	removes []namedRemove
	configs []func(b *bosun.Builder[T], r *bosun.Reconciler[T])
	names   map[string]bool
	rmNames map[string]bool
	started bool
	// builder is the Builder of the set's controller, made with the set so
	// that its Enqueuer can be handed out before the controller is built.
	builder *bosun.Builder[T]
}

type namedChange[T client.Object] struct {
	name string
	fn   ChangeFunc[T]
}

type namedRemove struct {
	name string
	fn   RemoveFunc
}

// New returns a new Set of T's kind on mgr, and registers with mgr the
// runnable that builds its controller when the manager starts. Make one
// Set per kind and hand it to every part of the operator that adds
// handlers for that kind, so that one controller runs them all; two Sets
// of one kind on one manager make two controllers of the same name, which
// the manager refuses when it starts.
//
// The controller is named after the kind ("widget.test.bosun.dev-handlers",
// "configmap-handlers"); its options, predicates, watches, the WhenServed
// gate and the fields of its Reconciler (DefaultPolicy, Instance, its
// Name...) are set with Configure.
//
// A kind the manager's scheme does not know is an error of every
// registration.
func New[T client.Object](mgr ctrl.Manager) *Set[T] {
	if mgr == nil {
		return &Set[T]{err: errors.New("bosun: handlers: manager is nil")}
	}
	obj := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(client.Object)
	gvk, err := apiutil.GVKForObject(obj, mgr.GetScheme())
	if err != nil {
		return &Set[T]{err: fmt.Errorf("bosun: handlers: finding the kind of %T: %w", obj, err)}
	}
	hs := &Set[T]{
		mgr:     mgr,
		gvk:     gvk,
		name:    strings.ToLower(gvk.GroupKind().String()) + "-handlers",
		names:   map[string]bool{},
		rmNames: map[string]bool{},
		builder: bosun.ControllerManagedBy[T](mgr),
	}
	if err := mgr.Add(handlerRunnable(hs.start)); err != nil {
		hs.err = fmt.Errorf("bosun: handlers of %s: %w", gvk.GroupKind(), err)
	}
	return hs
}

// Name returns the name of the set's controller.
func (h *Set[T]) Name() string { return h.name }

// register runs add under the set's lock after the checks every
// registration shares.
func (h *Set[T]) register(what string, isNil bool, add func() error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.err != nil:
		return h.err
	case h.started:
		return fmt.Errorf("bosun: handlers of %s: registering %s: %w; register before the manager starts", h.gvk.GroupKind(), what, ErrStarted)
	case isNil:
		return fmt.Errorf("bosun: handlers of %s: %w: %s is nil", h.gvk.GroupKind(), bosun.ErrInvalidConfig, what)
	}
	if err := add(); err != nil {
		return fmt.Errorf("bosun: handlers of %s: %w: %w", h.gvk.GroupKind(), bosun.ErrInvalidConfig, err)
	}
	return nil
}

// OnChange registers fn, named name, to run on every request for an
// object of the kind that exists, after the handlers registered before
// it. name must be unique among the set's OnChange handlers and not
// stepName; it names the handler in logs, metrics and errors.
func (h *Set[T]) OnChange(name string, fn ChangeFunc[T]) error {
	return h.register(fmt.Sprintf("OnChange handler %q", name), fn == nil, func() error {
		if err := checkHandlerName(name, h.names); err != nil {
			return err
		}
		h.names[name] = true
		h.changes = append(h.changes, namedChange[T]{name: name, fn: fn})
		return nil
	})
}

// OnRemove registers fn, named name, to run with the key of every request
// whose object is gone, neither in the cache nor on the API server (see
// Set), after the handlers registered before it.
// name must be unique among the set's OnRemove handlers; it names the
// handler in logs, metrics and errors.
func (h *Set[T]) OnRemove(name string, fn RemoveFunc) error {
	return h.register(fmt.Sprintf("OnRemove handler %q", name), fn == nil, func() error {
		if err := checkHandlerName(name, h.rmNames); err != nil {
			return err
		}
		h.rmNames[name] = true
		h.removes = append(h.removes, namedRemove{name: name, fn: fn})
		return nil
	})
}

// Configure registers fn to configure the set's controller when it is
// built: the Builder (predicates with For(nil, ...), watches, options,
// WhenServed) and the Reconciler (its policy fields; its Name, which is
// the controller's, the Builder's Named being the same; its Steps hold the
// step that runs the OnChange handlers, and fn may add others).
// The functions run in the order they were registered.
func (h *Set[T]) Configure(fn func(b *bosun.Builder[T], r *bosun.Reconciler[T])) error {
	return h.register("a configuration", fn == nil, func() error {
		h.configs = append(h.configs, fn)
		return nil
	})
}

// Enqueuer returns the Enqueuer of the set's controller (see
// bosun.Builder.Enqueuer).
func (h *Set[T]) Enqueuer() *bosun.Enqueuer {
	if h.builder == nil {
		return nil
	}
	return h.builder.Enqueuer()
}

func checkHandlerName(name string, taken map[string]bool) error {
	switch {
	case name == "":
		return errors.New("a handler has an empty name")
	case name == stepName:
		return fmt.Errorf("handler name %q is the engine's step that runs the handlers", name)
	case taken[name]:
		return fmt.Errorf("two handlers are named %q", name)
	}
	return nil
}

// start builds the set's controller with the handlers registered so far,
// when the manager starts, and forgets the set when it stops.
func (h *Set[T]) start(ctx context.Context) error {
	h.mu.Lock()
	h.started = true
	changes, removes, configs := slices.Clone(h.changes), slices.Clone(h.removes), slices.Clone(h.configs)
	h.mu.Unlock()

	r := &bosun.Reconciler[T]{Name: h.name}
	if len(changes) > 0 {
		steps := make([]bosun.Step[T], len(changes))
		for i, c := range changes {
			steps[i] = handlerStep[T](c)
		}
		r.Steps = []bosun.Step[T]{bosun.OrderedJoin(steps...).Named(stepName)}
	} else {
		// Present objects are left alone; the engine still wants a step.
		r.Steps = []bosun.Step[T]{bosun.NewStep[T](stepName, nil)}
	}
	b := h.builder
	// The handlers' reconciler is the innermost wrapper of the engine, so
	// that the wrappers of the configurations (shard.Member.Wrap) see the
	// OnRemove handlers' requests too.
	var rms *removers
	b.WrapReconciler(func(inner reconcile.Reconciler) reconcile.Reconciler {
		return &handlerReconciler[T]{r: r, gvk: h.gvk, engine: inner, changes: len(changes) > 0, removers: rms}
	})
	for _, fn := range configs {
		fn(b, r)
	}
	// One name for the controller, the engine and the metrics: the
	// Reconciler's.
	if r.Name == "" {
		r.Name = h.name
	}
	b.Named(r.Name)
	rms, err := newRemovers(r.Options.Metrics, r.Name, removes)
	if err != nil {
		return fmt.Errorf("bosun: handlers of %s: %w", h.gvk.GroupKind(), err)
	}
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("bosun: handlers of %s: %w", h.gvk.GroupKind(), err)
	}
	<-ctx.Done()
	return nil
}

// handlerRunnable adapts the start of a Set to a manager runnable
// that every replica runs: the controller it builds waits for the
// leadership itself.
type handlerRunnable func(ctx context.Context) error

var (
	_ manager.Runnable               = handlerRunnable(nil)
	_ manager.LeaderElectionRunnable = handlerRunnable(nil)
)

// Start calls the function.
func (f handlerRunnable) Start(ctx context.Context) error { return f(ctx) }

// NeedLeaderElection is false; see handlerRunnable.
func (f handlerRunnable) NeedLeaderElection() bool { return false }

// handlerStep runs one OnChange handler as a step, with its name in the
// logger and in its error.
type handlerStep[T client.Object] namedChange[T]

func (s handlerStep[T]) Name() string { return s.name }

func (s handlerStep[T]) Do(ctx context.Context, p *bosun.Pass[T]) (ctrl.Result, error) {
	log := p.Log
	p.Log = log.WithValues("handler", s.name)
	defer func() { p.Log = log }()
	res, err := s.fn(ctrl.LoggerInto(ctx, p.Log), p)
	if err != nil && !errors.Is(err, bosun.ErrStop) {
		err = fmt.Errorf("handler %q: %w", s.name, err)
	}
	return res, err
}

// removers are the OnRemove handlers of a set, with their metrics.
type removers struct {
	list     []namedRemove
	duration []prometheus.Observer
	errors   []prometheus.Counter
}

func newRemovers(reg prometheus.Registerer, controller string, list []namedRemove) (*removers, error) {
	c, err := register.Steps(reg)
	if err != nil {
		return nil, err
	}
	rs := &removers{list: list}
	for _, h := range list {
		rs.duration = append(rs.duration, c.Duration.WithLabelValues(controller, h.name, phaseRemove))
		rs.errors = append(rs.errors, c.Errors.WithLabelValues(controller, h.name, phaseRemove))
	}
	return rs, nil
}

// run runs every handler with key and joins their errors.
func (rs *removers) run(ctx context.Context, key client.ObjectKey) error {
	var errs []error
	for i, h := range rs.list {
		log := ctrl.LoggerFrom(ctx).WithValues("handler", h.name)
		start := time.Now()
		err := callRemove(ctrl.LoggerInto(ctx, log), h, key)
		rs.duration[i].Observe(time.Since(start).Seconds())
		if err != nil {
			rs.errors[i].Inc()
			errs = append(errs, fmt.Errorf("handler %q: %w", h.name, err))
		}
	}
	return errors.Join(errs...)
}

// callRemove calls h, recovering a panic into a *conditions.PanicError.
func callRemove(ctx context.Context, h namedRemove, key client.ObjectKey) (err error) {
	if pe := panics.Catch(h.name, func() { err = h.fn(ctx, key) }); pe != nil {
		ctrl.LoggerFrom(ctx).Error(pe, "handler panicked", "stack", string(pe.Stack))
		return pe
	}
	return err
}

// handlerReconciler runs the OnRemove handlers for objects that are gone,
// and the engine, with the OnChange handlers, for those in the cache.
type handlerReconciler[T client.Object] struct {
	r        *bosun.Reconciler[T]
	gvk      schema.GroupVersionKind
	engine   reconcile.Reconciler
	changes  bool
	removers *removers
}

func (x *handlerReconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
	err := x.r.Client.Get(ctx, req.NamespacedName, obj)
	switch {
	case apierrors.IsNotFound(err):
		switch gone, err := x.gone(ctx, req.NamespacedName); {
		case err != nil:
			return ctrl.Result{}, err
		case !gone:
			// Live, but not in this cache: another replica's, or one
			// whose event has yet to reach the cache.
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, x.removers.run(ctx, req.NamespacedName)
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("loading %s: %w", req.NamespacedName, err)
	case !x.changes:
		return ctrl.Result{}, nil
	}
	return x.engine.Reconcile(ctx, req)
}

// gone reports whether the API server has no object key, reading its
// metadata through the Reconciler's APIReader.
func (x *handlerReconciler[T]) gone(ctx context.Context, key client.ObjectKey) (bool, error) {
	reader := x.r.APIReader
	if reader == nil {
		reader = x.r.Client
	}
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(x.gvk)
	switch err := reader.Get(ctx, key, obj); {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("reading %s from the API server: %w", key, err)
	}
	return false, nil
}
