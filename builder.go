package bosun

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/bosunkit/bosun/fairqueue"
	"github.com/bosunkit/bosun/internal/plumbing"
	"github.com/bosunkit/bosun/tuning"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Builder sets up a Reconciler[T] with a manager, like controller-runtime's
// builder, which it wraps. Make one with ControllerManagedBy. Steps that
// implement Setuper add their own watches and indexes to it when Complete
// runs.
type Builder[T client.Object] struct {
	mgr     ctrl.Manager
	inner   *builder.Builder
	watches *forWatchManager
	forSet  bool
	forOpts []builder.ForOption
	forObj  T
	name    string
	owned   map[schema.GroupVersionKind]bool
	errs    []error

	// scheme and collected are set, and mgr and inner nil, in the builder
	// FieldIndexes sets steps up with: it keeps the field indexes and
	// ignores the rest.
	scheme    *runtime.Scheme
	collected []FieldIndex

	once map[any]bool

	// gate, when set, makes the controller wait for its kinds (WhenServed).
	gate *gate
	// watched are the kinds the controller watches besides T's (Owns,
	// Watches, WatchesMetadata), in the order first watched.
	watched []schema.GroupVersionKind
	// deferIndexes is set while the controller waits for its kind: the
	// field indexes then wait in pending until it is built.
	deferIndexes bool
	pending      []FieldIndex
	// fairKey groups the objects of the fair queue (WithFairQueue).
	fairKey fairqueue.KeyFunc[reconcile.Request]
	// wrappers are the caller's (WrapReconciler), innermost first.
	wrappers []func(r reconcile.Reconciler) reconcile.Reconciler

	// mu guards enq, ctrl and inner once the controller may be built in
	// the background (WhenServed).
	mu   sync.Mutex
	enq  *Enqueuer
	ctrl controller.Controller

	// book records why keys enter the controller's queue (see Trigger).
	book *triggerBook
	// own is the record of the Reconciler's own writes, for the watches
	// made before it is built (see ownWriteHandler, notingHandler).
	own *ownEventsRef
	// ctrlOpts and logCtor are the controller options and log
	// constructor, given to controller-runtime's builder by build, which
	// wraps the queue.
	ctrlOpts controller.Options
	logCtor  func(*reconcile.Request) logr.Logger
}

// Setuper is a Step that sets up what it needs before the controller
// starts: watches of the objects it reads or makes, field indexes.
// Builder.Complete (and Build) calls SetupWithBuilder on every step of the
// reconciler's tree, composites' steps included, in step order, after the
// reconciler is validated. What each step registers adds to what the
// others and the caller did (Owns and IndexField ignore repeats), so the
// order of the calls does not matter.
type Setuper[T client.Object] interface {
	SetupWithBuilder(b *Builder[T]) error
}

// SetupFunc adapts a function to Setuper, for setup that belongs to no
// step of its own: give it to a step with WithSetup. Package watch's
// Referenced returns one.
type SetupFunc[T client.Object] func(b *Builder[T]) error

// SetupWithBuilder calls the function. A nil SetupFunc does nothing.
func (f SetupFunc[T]) SetupWithBuilder(b *Builder[T]) error {
	if f == nil {
		return nil
	}
	return f(b)
}

// ControllerManagedBy returns a Builder for a controller of objects of type
// T, run by mgr. The controller is controller-runtime's, with its queue,
// its wait for the informers to list and its logger, unless mgr was made
// with tuning.Enable: its workers then start before the informers have
// listed, and its loggers encode their keys only when a line is logged
// (docs/TUNING.md).
func ControllerManagedBy[T client.Object](mgr ctrl.Manager) *Builder[T] {
	b := &Builder[T]{mgr: mgr, owned: map[schema.GroupVersionKind]bool{}, book: newTriggerBook(), own: &ownEventsRef{}}
	if mgr == nil {
		b.inner = ctrl.NewControllerManagedBy(mgr)
		return b
	}
	base := mgr
	if tuning.Enabled(mgr) {
		base = plumbing.EarlyStart(mgr, func() time.Duration { return b.ctrlOpts.CacheSyncTimeout })
	}
	b.watches = newForWatchManager(base)
	b.inner = ctrl.NewControllerManagedBy(b.watches)
	return b
}

// Manager returns the manager the controller is set up with, for code that
// registers watches needing its client or cache. It is nil in the builder
// FieldIndexes uses; setup code that needs only the scheme uses Scheme.
func (b *Builder[T]) Manager() ctrl.Manager { return b.mgr }

// Once reports whether this is the first call with key on this builder,
// for setup that several steps share and that must run once per
// controller: the generated steps of one bosun document use it. key must
// be comparable.
func (b *Builder[T]) Once(key any) bool {
	if b.once[key] {
		return false
	}
	if b.once == nil {
		b.once = map[any]bool{}
	}
	b.once[key] = true
	return true
}

// Scheme returns the scheme of the manager the controller is set up with.
func (b *Builder[T]) Scheme() *runtime.Scheme {
	if b.mgr != nil {
		return b.mgr.GetScheme()
	}
	return b.scheme
}

// For sets the object type the controller reconciles, with options such as
// predicates. It is optional: without it the controller watches T with no
// options. obj may be nil.
func (b *Builder[T]) For(obj T, opts ...builder.ForOption) *Builder[T] {
	b.forSet = true
	b.forObj = obj
	b.forOpts = opts
	return b
}

// Owns watches objects of another type that the reconciled objects
// control, as builder.Builder.Owns does. Owning a type again (a step and
// the caller, or two steps, owning ConfigMaps) adds nothing: the first
// call's options stand.
func (b *Builder[T]) Owns(obj client.Object, opts ...builder.OwnsOption) *Builder[T] {
	if b.inner == nil {
		return b
	}
	if b.mgr != nil {
		gvk, err := apiutil.GVKForObject(obj, b.mgr.GetScheme())
		if err != nil {
			b.errs = append(b.errs, fmt.Errorf("owning %T: %w", obj, err))
			return b
		}
		if b.owned[gvk] {
			return b
		}
		b.owned[gvk] = true
		b.watch(gvk)
	}
	b.inner = b.inner.Owns(obj, opts...)
	return b
}

// Watches watches objects of another type and maps them to requests with
// h, as builder.Builder.Watches does.
func (b *Builder[T]) Watches(obj client.Object, h handler.EventHandler, opts ...builder.WatchesOption) *Builder[T] {
	b.watchObject(obj)
	if b.inner != nil {
		b.inner = b.inner.Watches(obj, b.noting(obj, h, triggerSourceWatches), opts...)
	}
	return b
}

// watch records that the controller watches gvk, whose serving it then
// checks (see WhenServed).
func (b *Builder[T]) watch(gvk schema.GroupVersionKind) {
	if !slices.Contains(b.watched, gvk) {
		b.watched = append(b.watched, gvk)
	}
}

// watchObject records the kind of obj, when the scheme knows it.
func (b *Builder[T]) watchObject(obj client.Object) {
	if b.mgr == nil || obj == nil {
		return
	}
	if gvk, err := apiutil.GVKForObject(obj, b.mgr.GetScheme()); err == nil {
		b.watch(gvk)
	}
}

// noting wraps h so that the keys it enqueues get the event as their
// trigger.
func (b *Builder[T]) noting(obj client.Object, h handler.EventHandler, src string) handler.EventHandler {
	if b.book == nil || h == nil {
		return h
	}
	nh := &notingHandler{inner: h, book: b.book, own: b.own, source: src}
	if b.mgr != nil {
		if gvk, err := apiutil.GVKForObject(obj, b.mgr.GetScheme()); err == nil {
			nh.gvk = gvk
		}
	}
	return nh
}

// WatchesMetadata watches only the metadata of objects of another type, as
// builder.Builder.WatchesMetadata does: the cache keeps
// metav1.PartialObjectMetadata, which is lighter for kinds with large
// objects.
func (b *Builder[T]) WatchesMetadata(obj client.Object, h handler.EventHandler, opts ...builder.WatchesOption) *Builder[T] {
	b.watchObject(obj)
	if b.inner != nil {
		b.inner = b.inner.WatchesMetadata(obj, b.noting(obj, h, triggerSourceWatches), opts...)
	}
	return b
}

// WatchesRawSource adds any source of requests, such as a channel source
// fed by a system outside Kubernetes, as builder.Builder.WatchesRawSource
// does.
func (b *Builder[T]) WatchesRawSource(src source.TypedSource[reconcile.Request]) *Builder[T] {
	if b.inner != nil {
		b.inner = b.inner.WatchesRawSource(b.book.wrapSource(src, Trigger{Kind: triggerWatch, Source: triggerSourceRaw}))
	}
	return b
}

// WithEventFilter adds a predicate that every watched event must pass, as
// builder.Builder.WithEventFilter does.
func (b *Builder[T]) WithEventFilter(p predicate.Predicate) *Builder[T] {
	if b.inner != nil {
		b.inner = b.inner.WithEventFilter(p)
	}
	return b
}

// WithLogConstructor sets how the logger of each reconcile is made, as
// builder.Builder.WithLogConstructor does, whether it is called before or
// after WithOptions. The engine adds its own keys (the policy, the trace
// ids) to that logger. With tuning (tuning.Enable), the keys added after
// fn (the reconcile ID, the engine's) reach its sink only when a line is
// logged, once per logger.
func (b *Builder[T]) WithLogConstructor(fn func(*reconcile.Request) logr.Logger) *Builder[T] {
	b.logCtor = fn
	return b
}

// IndexField adds a field index on obj's kind to the manager's cache, as
// client.FieldIndexer.IndexField does, for steps that list by a field.
// Indexing the same field of the same kind again, from another step or
// another controller of the manager, adds nothing. While a controller set
// up with WhenServed waits for its kind, its indexes wait with it.
func (b *Builder[T]) IndexField(obj client.Object, field string, extract client.IndexerFunc) *Builder[T] {
	if b.mgr == nil {
		b.collect(obj, field, extract)
		return b
	}
	gvk, err := apiutil.GVKForObject(obj, b.mgr.GetScheme())
	if err != nil {
		b.errs = append(b.errs, fmt.Errorf("indexing %s of %T: %w", field, obj, err))
		return b
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.deferIndexes {
		b.pending = append(b.pending, FieldIndex{Object: obj, Field: field, Extract: extract, gvk: gvk})
		return b
	}
	if err := registerIndex(context.Background(), b.mgr, FieldIndex{Object: obj, Field: field, Extract: extract, gvk: gvk}); err != nil {
		b.errs = append(b.errs, err)
	}
	return b
}

// registerIndex adds ix to mgr's cache unless it has it already: the
// cache itself knows its indexes, and refuses one it has with an "indexer
// conflict", which here means that another step or controller of the
// manager asked for the same index first.
func registerIndex(ctx context.Context, mgr ctrl.Manager, ix FieldIndex) error {
	err := mgr.GetFieldIndexer().IndexField(ctx, ix.Object, ix.Field, ix.Extract)
	if err != nil && !strings.Contains(err.Error(), "indexer conflict") {
		return fmt.Errorf("indexing %s of %s: %w", ix.Field, ix.gvk.Kind, err)
	}
	return nil
}

// collect keeps a field index for FieldIndexes, once per kind and field.
func (b *Builder[T]) collect(obj client.Object, field string, extract client.IndexerFunc) {
	if b.scheme == nil {
		return
	}
	gvk, err := apiutil.GVKForObject(obj, b.scheme)
	if err != nil {
		b.errs = append(b.errs, fmt.Errorf("indexing %s of %T: %w", field, obj, err))
		return
	}
	for _, ix := range b.collected {
		if ix.Field == field && ix.gvk == gvk {
			return
		}
	}
	b.collected = append(b.collected, FieldIndex{Object: obj, Field: field, Extract: extract, gvk: gvk})
}

// FieldIndex is a field index that a step registers with
// Builder.IndexField.
type FieldIndex struct {
	// Object is an object of the indexed kind.
	Object client.Object
	// Field is the name of the index, which field selectors use.
	Field string
	// Extract returns the values an object is indexed under.
	Extract client.IndexerFunc

	gvk schema.GroupVersionKind
}

// fieldIndexes finds the field indexes of r (see Reconciler.FieldIndexes).
func fieldIndexes[T client.Object](r *Reconciler[T], scheme *runtime.Scheme) ([]FieldIndex, error) {
	p := &prepared[T]{}
	if err := p.walk(r.Steps); err != nil {
		return nil, fmt.Errorf("bosun: reconciler %q: %w", r.Name, err)
	}
	b := &Builder[T]{scheme: scheme, owned: map[schema.GroupVersionKind]bool{}}
	for i, s := range p.steps {
		if su, ok := s.(Setuper[T]); ok {
			if err := su.SetupWithBuilder(b); err != nil {
				return nil, fmt.Errorf("bosun: reconciler %q: setting up step %q: %w", r.Name, p.names[i], err)
			}
		}
	}
	if err := errors.Join(b.errs...); err != nil {
		return nil, fmt.Errorf("bosun: reconciler %q: %w", r.Name, err)
	}
	return b.collected, nil
}

// Named sets the controller's name. Without it the Reconciler's Name is used;
// a Reconciler without a Name takes this one.
func (b *Builder[T]) Named(name string) *Builder[T] {
	b.name = name
	return b
}

// WithOptions sets controller options such as MaxConcurrentReconciles. A
// NewQueue given here makes the queue as usual; the engine wraps it to
// learn why keys enter it (see Trigger). Without one, the queue is the
// one controller-runtime makes: its priority queue, unless
// UsePriorityQueue (here or in the manager's options) is false, which
// asks for client-go's plain queue; WithFairQueue asks for a fair one.
func (b *Builder[T]) WithOptions(opts controller.Options) *Builder[T] {
	b.ctrlOpts = opts
	return b
}

// controllerOptions returns the options of the controller: those of
// WithOptions and WithLogConstructor, with a queue that records the
// triggers of its keys, and with tuning a logger per reconcile that
// encodes its keys only when a line is logged (plumbing.LogConstructor);
// gvk is the kind of the controller's objects.
func (b *Builder[T]) controllerOptions(name string, gvk schema.GroupVersionKind) controller.Options {
	opts := b.ctrlOpts
	if b.logCtor != nil {
		opts.LogConstructor = b.logCtor
	}
	if tuning.Enabled(b.mgr) {
		opts.LogConstructor = plumbing.LogConstructor(b.mgr, name, gvk, opts.LogConstructor)
	}
	newQueue := opts.NewQueue
	if newQueue == nil {
		defaults := b.mgr.GetControllerOptions()
		usePQ := ptr.Deref(opts.UsePriorityQueue, ptr.Deref(defaults.UsePriorityQueue, true))
		key := b.fairKey
		log := defaults.Logger
		if log.GetSink() == nil {
			log = b.mgr.GetLogger()
		}
		newQueue = func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
			switch {
			case key != nil:
				return fairqueue.New(name, fairqueue.Options[reconcile.Request]{Key: key, RateLimiter: rl})
			case usePQ:
				// controller-runtime's own default.
				return priorityqueue.New(name, func(o *priorityqueue.Opts[reconcile.Request]) {
					o.Log = log.WithValues("controller", name)
					o.RateLimiter = rl
				})
			}
			return workqueue.NewTypedRateLimitingQueueWithConfig(rl, workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Name: name})
		}
	}
	book := b.book
	opts.NewQueue = func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		return book.wrapQueue(newQueue(name, rl))
	}
	return opts
}

// WrapReconciler has the controller run w(reconciler) rather than the
// engine itself: w sees every request and the context of every pass
// before the engine does, and may refuse a request, cancel a pass or
// change its result. shard.Member.Wrap is one: it cancels a pass when the
// member's right to run it lapses. Each call wraps what the calls before
// it made. A nil w is ignored.
func (b *Builder[T]) WrapReconciler(w func(reconcile.Reconciler) reconcile.Reconciler) *Builder[T] {
	if w != nil {
		b.wrappers = append(b.wrappers, w)
	}
	return b
}

// WithFairQueue makes the controller's queue a fair queue (package
// fairqueue) whose objects are grouped by key: objects of one group take
// turns with those of every other, so that a namespace with thousands of
// objects does not make the objects of another wait for all of them at a
// start or a resync. fairqueue.ByNamespace groups by namespace; a label
// of the object or a tenant looked up from its namespace are other common
// choices. It has no effect when WithOptions gives a NewQueue.
func (b *Builder[T]) WithFairQueue(key fairqueue.KeyFunc[reconcile.Request]) *Builder[T] {
	b.fairKey = key
	return b
}

// Complete sets up r as Build does and registers the controller with the
// manager.
func (b *Builder[T]) Complete(r *Reconciler[T]) error {
	_, err := b.Build(r)
	return err
}

// Build fills in r's Client, APIReader and Recorder from the manager where
// they are unset, validates r (see Reconciler.Validate), lets every step
// that is a Setuper add its watches and indexes, and registers the
// controller, which it returns (for tests, or for watches added after
// setup). It returns an error, naming the offending step or field, before
// anything runs; one wrapping errKindNotServed when the API server does
// not serve T's kind or a kind the controller watches. With WhenServed and
// a kind not served yet, it returns a nil controller and builds it once
// every kind is served.
func (b *Builder[T]) Build(r *Reconciler[T]) (controller.Controller, error) {
	if r == nil {
		return nil, fmt.Errorf("bosun: %w: reconciler is nil", ErrInvalidConfig)
	}
	if b.mgr == nil {
		return nil, errors.New("bosun: ControllerManagedBy: manager is nil")
	}
	b.fillIn(r)
	if err := r.Validate(); err != nil {
		return nil, err
	}
	forObj := client.Object(b.forObj)
	if !b.forSet || reflect.ValueOf(b.forObj).IsNil() {
		forObj = reflect.New(reflect.TypeFor[T]().Elem()).Interface().(client.Object)
	}
	gvk, err := apiutil.GVKForObject(forObj, b.mgr.GetScheme())
	switch {
	case err != nil && b.gate != nil:
		return nil, fmt.Errorf("bosun: reconciler %q: finding the kind of %T: %w", r.Name, forObj, err)
	case err == nil:
		// Before the steps' setup, whose indexes of the kind would
		// otherwise fail less clearly.
		missing, err := b.missing(r, gvk)
		if err != nil {
			return nil, err
		}
		if missing {
			b.mu.Lock()
			b.deferIndexes = true
			b.mu.Unlock()
		}
	}
	for i, s := range r.prep.steps {
		if su, ok := s.(Setuper[T]); ok {
			if err := su.SetupWithBuilder(b); err != nil {
				return nil, fmt.Errorf("bosun: reconciler %q: setting up step %q: %w", r.Name, r.prep.names[i], err)
			}
		}
	}
	if err := errors.Join(b.errs...); err != nil {
		return nil, fmt.Errorf("bosun: reconciler %q: %w", r.Name, err)
	}
	kinds, err := b.unserved(r, gvk)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(kinds) > 0 {
		return nil, b.buildWhenServed(r, kinds, forObj)
	}
	return b.build(r, forObj)
}

// fillIn sets what r leaves empty from the manager: its name (the
// builder's), client, API reader and event recorder.
func (b *Builder[T]) fillIn(r *Reconciler[T]) {
	if r.Name == "" {
		r.Name = b.name
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
}

// buildWhenServed adds to the manager a runnable that builds the
// controller of r once the API server serves kinds, registering the
// indexes deferred until then first. The caller holds b.mu.
func (b *Builder[T]) buildWhenServed(r *Reconciler[T], kinds []schema.GroupVersionKind, forObj client.Object) error {
	g := &gateRunnable{
		gate:   *b.gate,
		gvks:   kinds,
		mapper: b.mgr.GetRESTMapper(),
		log:    b.mgr.GetLogger().WithValues("controller", b.controllerName(r), "gvk", gvkNames(kinds)),
		build: func(ctx context.Context) error {
			b.mu.Lock()
			defer b.mu.Unlock()
			for _, ix := range b.pending {
				if err := registerIndex(ctx, b.mgr, ix); err != nil {
					return fmt.Errorf("bosun: reconciler %q: %w", r.Name, err)
				}
			}
			b.pending, b.deferIndexes = nil, false
			_, err := b.build(r, forObj)
			return err
		},
	}
	if err := b.mgr.Add(g); err != nil {
		return fmt.Errorf("bosun: reconciler %q: waiting for %s: %w", r.Name, gvkNames(kinds), err)
	}
	return nil
}

// unserved returns the kinds the controller watches that the API server
// does not serve: T's kind forGVK (empty when the scheme does not know
// it), when the Builder already found it missing, then those of Owns and
// Watches. Without WhenServed, a missing kind is an error wrapping
// errKindNotServed: the controller could not start.
func (b *Builder[T]) unserved(r *Reconciler[T], forGVK schema.GroupVersionKind) ([]schema.GroupVersionKind, error) {
	var kinds []schema.GroupVersionKind
	if b.deferIndexes {
		kinds = append(kinds, forGVK)
	}
	for _, gvk := range b.watched {
		if gvk == forGVK || gvk.Empty() {
			continue
		}
		missing, err := b.missing(r, gvk)
		if err != nil {
			return nil, err
		}
		if missing {
			kinds = append(kinds, gvk)
		}
	}
	return kinds, nil
}

// missing reports whether the API server does not serve gvk, for a
// controller that waits for it (WhenServed); without WhenServed, a kind
// not served is an error wrapping errKindNotServed. Failing to ask is an
// error with WhenServed only: without it, the controller's start tells.
func (b *Builder[T]) missing(r *Reconciler[T], gvk schema.GroupVersionKind) (bool, error) {
	ok, err := served(b.mgr.GetRESTMapper(), gvk)
	switch {
	case err != nil && b.gate != nil:
		return false, fmt.Errorf("bosun: reconciler %q: looking for %s in the API server's discovery: %w", r.Name, gvk, err)
	case err == nil && !ok && b.gate == nil:
		return false, notServedError(r.Name, gvk, &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}})
	}
	return err == nil && !ok, nil
}

// gvkNames lists kinds for a log or an error.
func gvkNames(kinds []schema.GroupVersionKind) string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.String()
	}
	return strings.Join(names, ", ")
}

// controllerName is the name of the controller of r: the Builder's, else
// the Reconciler's.
func (b *Builder[T]) controllerName(r *Reconciler[T]) string {
	if b.name != "" {
		return b.name
	}
	return r.Name
}

// build registers the controller of r for forObj with the manager; b.mu
// is held.
func (b *Builder[T]) build(r *Reconciler[T], forObj client.Object) (controller.Controller, error) {
	watched, forOpts := forWatch(forObj, b.forOpts, b.mgr.GetScheme())
	inner := b.inner.For(watched, forOpts...).Named(b.controllerName(r))
	namespaced, err := apiutil.IsObjectNamespaced(forObj, b.mgr.GetScheme(), b.mgr.GetRESTMapper())
	if meta.IsNoMatchError(err) {
		gvk, gerr := apiutil.GVKForObject(forObj, b.mgr.GetScheme())
		if gerr == nil {
			return nil, notServedError(r.Name, gvk, err)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("bosun: reconciler %q: finding the scope of %T: %w", r.Name, forObj, err)
	}
	if namespaced && !r.Options.IgnoreNamespacePolicy {
		h, err := namespacePolicyHandler(b.mgr, forObj)
		if err != nil {
			return nil, fmt.Errorf("bosun: reconciler %q: %w", r.Name, err)
		}
		// The engine reads only the policy annotation of a Namespace, so
		// the cache keeps Namespaces' metadata and nothing else.
		ns := namespaceMetadata()
		inner = inner.WatchesMetadata(ns, b.noting(ns, h, triggerSourceNamespace), builder.WithPredicates(namespacePolicyChanged()))
	}
	if b.enq != nil {
		inner = inner.WatchesRawSource(b.book.wrapSource(b.enq.source(), Trigger{Kind: triggerEnqueued}))
	}
	gvk, gvkErr := apiutil.GVKForObject(forObj, b.mgr.GetScheme())
	inner = inner.WithOptions(b.controllerOptions(b.controllerName(r), gvk)).WithEventFilter(b.candidates(forObj, namespaced))
	if gvkErr == nil {
		r.own.kind = gvk
		b.own.set(r.own)
		b.watches.watchFor(watched, b.own)
	}
	if r.prep.cleans && gvkErr == nil {
		if err := b.countDeletions(r, watched, gvk); err != nil {
			return nil, err
		}
	}
	r.book = b.book
	r.own.book = b.book
	r.observation = ObservationOf(b.mgr)
	if r.observation != nil {
		r.managerBuild = r.observation.Build
	}
	var rec reconcile.Reconciler = r
	for _, w := range b.wrappers {
		rec = w(rec)
	}
	c, err := inner.Build(rec)
	if err != nil {
		return nil, fmt.Errorf("bosun: reconciler %q: %w", r.Name, err)
	}
	b.ctrl = c
	r.observation.addReconciler(ReconcilerInfo{Name: r.Name, GVK: gvkOf(forObj, b.mgr.GetScheme()), Graph: r.Graph, PolicyRules: r.PolicyRules})
	return c, nil
}

// countDeletions sets up r's mass-deletion breaker: the count of the
// deletions of its kind gvk, kept by a handler of the informer of watched
// (the For watch's), and the name of the kind's
// CustomResourceDefinition.
func (b *Builder[T]) countDeletions(r *Reconciler[T], watched client.Object, gvk schema.GroupVersionKind) error {
	count := newDeletionCount()
	inf, err := b.mgr.GetCache().GetInformer(context.Background(), watched)
	if err != nil {
		return fmt.Errorf("bosun: reconciler %q: the informer of %s for the mass-deletion breaker: %w", r.Name, gvk.Kind, err)
	}
	if _, err := inf.AddEventHandler(count.handler()); err != nil {
		return fmt.Errorf("bosun: reconciler %q: the informer of %s for the mass-deletion breaker: %w", r.Name, gvk.Kind, err)
	}
	r.breaker = &breaker{count: count, crd: crdName(b.mgr.GetRESTMapper(), gvk)}
	return nil
}

// forWatch returns the object the For watch of forObj is made from, and
// the options of For for it: a copy of forObj, or for a watch of metadata
// only (builder.OnlyMetadata) an object it makes here rather than let
// controller-runtime's builder make it. The cache is asked for the
// informer of that very object by the For watch alone (see
// forWatchManager.watchFor): the caller may have given forObj itself to
// Owns or Watches, whose handlers must see the engine's own writes.
func forWatch(forObj client.Object, opts []builder.ForOption, scheme *runtime.Scheme) (client.Object, []builder.ForOption) {
	i := slices.IndexFunc(opts, func(o builder.ForOption) bool { return o == builder.ForOption(builder.OnlyMetadata) })
	if i < 0 {
		if own, ok := forObj.DeepCopyObject().(client.Object); ok {
			return own, opts
		}
		return forObj, opts
	}
	gvk, err := apiutil.GVKForObject(forObj, scheme)
	if err != nil {
		return forObj, opts
	}
	pm := &metav1.PartialObjectMetadata{}
	pm.SetGroupVersionKind(gvk)
	return pm, slices.Delete(slices.Clone(opts), i, i+1)
}

// gvkOf is the kind of obj, or the empty kind when the scheme lacks it.
func gvkOf(obj client.Object, scheme *runtime.Scheme) schema.GroupVersionKind {
	gvk, _ := apiutil.GVKForObject(obj, scheme)
	return gvk
}

// candidates returns the predicate that notes the events of the
// reconciled kind and of owned kinds as candidate triggers.
func (b *Builder[T]) candidates(forObj client.Object, namespaced bool) predicate.Predicate {
	gvk, err := apiutil.GVKForObject(forObj, b.mgr.GetScheme())
	if err != nil {
		return predicate.Funcs{}
	}
	return &candidatePredicate{book: b.book, scheme: b.mgr.GetScheme(), forGVK: gvk, owned: maps.Clone(b.owned), clusterScoped: !namespaced}
}

// Enqueuer returns the Enqueuer of the controller, made on the first
// call: keys given to it are reconciled by this controller, from any
// goroutine, before or after the manager starts (see Enqueuer). Call it
// before Complete, and keep it for later; a call after Complete returns
// the same Enqueuer, or, when there was none, one wired to the controller
// then.
func (b *Builder[T]) Enqueuer() *Enqueuer {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.enq != nil {
		return b.enq
	}
	b.enq = newEnqueuer()
	if b.ctrl != nil {
		if err := b.ctrl.Watch(b.book.wrapSource(b.enq.source(), Trigger{Kind: triggerEnqueued})); err != nil {
			b.mgr.GetLogger().Error(err, "wiring an enqueuer to a running controller")
		}
	}
	return b.enq
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
			return e.ObjectOld.GetAnnotations()[AnnotationReconcilePolicy] != e.ObjectNew.GetAnnotations()[AnnotationReconcilePolicy]
		},
	}
}

// namespaceMetadata is an empty Namespace of which only the metadata is
// read or watched.
func namespaceMetadata() *metav1.PartialObjectMetadata {
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	return ns
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

// WhenServed makes the controller wait for its kinds: when the API server
// does not serve T's kind, or a kind the controller watches (Owns,
// Watches, WatchesMetadata, by the caller or a step's setup), at setup,
// Complete (and Build) check the Reconciler and set its steps up as usual,
// so that mistakes still show at once, then register a runnable with the
// manager that looks at the API server's discovery (first after a second, then
// twice as long each time, up to half a minute) until every one of them is served, and only then builds and
// starts the controller. It logs once
// that it waits and once that the kind is served. When the kind is served
// at setup, WhenServed changes nothing. One operator binary can so ship
// controllers for optional APIs, whose CRDs a cluster may install later or
// never.
//
// While the controller waits, the field indexes its steps register wait
// with it, the watches they add are added when it is built, and an
// Enqueuer keeps what it is given. Build returns a nil controller in that
// case. An error building the controller once its kind is served (rare:
// most mistakes show at setup) stops the manager with that error.
//
// Without WhenServed, a kind that is not served, T's or a watched one, is
// an error at setup that wraps errKindNotServed.
func (b *Builder[T]) WhenServed() *Builder[T] {
	b.gate = &gate{first: defaultGateInterval, longest: defaultGateMaxInterval}
	return b
}
