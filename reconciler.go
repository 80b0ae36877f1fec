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
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/gone"
)

// ErrNotControlled is wrapped by the error of a state getter whose object
// is not controlled by the object being reconciled, where the state asks for
// one that is.
var ErrNotControlled = errors.New("object is not controlled by the reconciled object")

// retryPriority is the queue priority of the retry of a failed pass: below
// handler.LowPriority, at which the queue adds the objects a starting
// controller lists and the engine returns polls. A failing object's
// retries wait while fresher work is ready (a change, an object not
// reconciled yet, a poll that is due), so a batch of broken objects does
// not slow the healthy ones; its backoff still grows as the rate limiter
// says. A controller that is never idle retries when it catches up.
const retryPriority = 2 * handler.LowPriority

// staleCacheRetry is how long the engine waits before looking again at an
// object whose cached version is older than its own last write.
const staleCacheRetry = time.Second

// ErrInvalidConfig is wrapped by every error that Validate (and so
// Builder.Complete) returns for a Reconciler that cannot work.
var ErrInvalidConfig = errors.New("invalid reconciler configuration")

// Reconciler runs the lifecycle of objects of type T (a pointer to a struct)
// through its Steps. When T keeps conditions (see conditions.Object), the
// engine records Ready and the steps' own conditions in its status; other
// types, such as the built-in kinds, are reconciled the same way without
// them, and their errors show in logs, events and metrics. It implements
// reconcile.Reconciler; ControllerManagedBy sets it up with a manager.
//
// For each request the engine, in this order: loads the object from the
// cache (not found: done); leaves the object alone if another instance owns
// it; decides the policy (an unknown one is reported in Ready, and nothing
// else happens); runs the Claimers and commits its claim (finalizer,
// instance annotation, what the Claimers set) before any step acts; runs
// the Do of the steps in order, or Cleanup in reverse step order when the
// object is being deleted; runs every Post; derives the conditions; writes
// what changed; and returns the joined outcome, without ErrStop, and
// without a requeue when an error remains (controller-runtime ignores it
// then).
//
// The policy of an object without the annotation (or with an empty one)
// comes from its Namespace, read through Client: with a manager's client
// that starts a cache of Namespaces, so the operator needs permission to
// get, list and watch them. ControllerManagedBy watches Namespaces, so a
// change of a Namespace's policy reconciles its objects.
//
// After writing an object the engine remembers the versions it wrote over; a
// reconcile that finds one of them in the cache ends at once, because a pass
// on stale data would only repeat the writes. The watch event of the newer
// version usually brings the next pass; the engine also requeues after
// staleCacheRetry, for controllers whose predicates filter that event out
// (a status-only write under GenerationChangedPredicate). When the cache is
// still behind after StaleCacheLimit (its watch lost the event), the pass
// reads the object from APIReader instead.
//
// A pass that wrote nothing to the object and asks to be run again after a
// while (a poll, such as the managed step's) returns its requeue at
// handler.LowPriority, unless a step chose a priority: with
// controller-runtime's priority queue, polls then never delay the first
// pass of the objects a restarted controller lists, which the queue also
// adds at low priority.
type Reconciler[T client.Object] struct {
	// Name names the controller in logs and metrics. Required.
	Name string
	// Steps are the steps, in order: their Do runs one after the other,
	// stopping at the first that interrupts (see Sequence). Composites
	// (Join, If, ...) arrange steps otherwise; the engine looks inside them
	// (see Composite). Required.
	Steps []Step[T]
	// Finalizer is the domain-qualified finalizer ("example.com/cleanup") the
	// engine adds before any Do runs when a step is a Cleaner. Required then.
	Finalizer string
	// DefaultPolicy applies when neither the object nor its Namespace has a
	// policy annotation. Empty means PolicyManage.
	DefaultPolicy Policy
	// Instance is the name of this operator instance. When set, the engine
	// claims unclaimed objects for it through AnnotationOperatorInstance and
	// leaves objects claimed by other instances alone. Empty means no
	// ownership check: every object is reconciled and none is claimed.
	Instance string
	// Resync, when positive, reconciles every object again about this long
	// after a pass that succeeded and asked for nothing sooner, so that
	// drift nobody is told about (outside Kubernetes, or in objects the
	// controller does not watch) is found. An object's own
	// AnnotationResyncInterval overrides it ("0" turns it off for the
	// object). Zero, the default, means no periodic resync. Resyncs of
	// converged objects write nothing and go to the queue at low priority.
	Resync time.Duration
	// Client reads from the cache and writes. Required; ControllerManagedBy
	// sets it from the manager.
	Client client.Client
	// APIReader reads around the cache. Nil means Client; ControllerManagedBy
	// sets it from the manager.
	APIReader client.Reader
	// Recorder records events. Nil means events are discarded;
	// ControllerManagedBy sets it from the manager.
	Recorder events.EventRecorder
	// Options are the settings most reconcilers leave at their defaults.
	Options Options

	// book holds why keys entered the controller's queue; set by Build.
	book *triggerBook
	// observation is the manager's; set by Build.
	observation *Observation
	tracers     atomic.Pointer[tracerCache]

	once    sync.Once
	prep    *prepared[T]
	prepErr error
	// memory is what the engine remembers of each object between its
	// passes.
	memory objectMemory
	// own is the record of the engine's own writes, made by Validate;
	// Build tells it the reconciled kind, with the handler of the For
	// watch that drops the events of those writes.
	own *ownWrites[T]
	// managerBuild is the Build of the manager's Observation, set by Build.
	managerBuild string
	// breaker is the mass-deletion breaker at work, set by Build for a
	// reconciler whose steps clean up; late is the one made at the first
	// deletion pass of a reconciler registered without Build (breakerOf).
	breaker     *breaker
	lateBreaker sync.Once
	late        *breaker
}

// Options are the settings of a Reconciler that most leave at their
// defaults: the zero value is the default of each.
type Options struct {
	// IgnoreNamespacePolicy turns the Namespace off as a source of the
	// policy: an object's policy is its annotation, else DefaultPolicy, and
	// Namespaces are neither read nor watched. A namespace-scoped operator
	// whose Role grants nothing on Namespaces needs it.
	IgnoreNamespacePolicy bool
	// StaleCacheLimit is how long a pass waits for a cache that still holds
	// a version the engine wrote over before it reads the object from
	// APIReader instead. Zero means 5 seconds.
	StaleCacheLimit time.Duration
	// ResyncJitter spreads resyncs so that objects reconciled together do
	// not come back together: each waits Resync plus a random part of up
	// to ResyncJitter times Resync. Zero means 0.1; it must be between 0
	// and 1.
	ResyncJitter float64
	// ReconcileOwnWrites turns off what the engine does by default with the
	// watch events of its own writes: drop them when the pass that wrote
	// settled. Every engine write is guarded by the resourceVersion the
	// pass read, so the version a write makes holds what the pass left and
	// nothing else, unless a mutating webhook changed it on the way: the
	// engine compares the answer of its write of metadata and spec with
	// what it sent, and a pass whose write came back changed does not
	// settle (the next pass sees the webhook's change). When the pass succeeded and left the object Ready=True
	// for its generation, a pass over that version would find nothing to
	// do, and the event of the write starts none: one pass per change,
	// where a hand-written controller makes two. The events of a failed
	// pass's writes are dropped as well: its retry is the rate limiter's.
	// Events of any other change, by anyone, start a pass as usual; so do
	// the events of a pass that did not settle and did not fail (a step
	// not done, a kind without conditions), and if one of those came while
	// the pass still ran, the object is requeued at once in its stead.
	// The For watch drops the event; no other watch of the reconciled
	// kind in the controller adds a pass of the object written either (a
	// Watches of the kind, a step's or the caller's, whichever watch is
	// handed the event first), but each hands it on to the other objects
	// it maps it to, which are reconciled: an object that waits for
	// another of the same kind to become Ready (package ref, a
	// watch.Tracker, an Owns of the kind) sees it. Set it to have every
	// event start a pass, as in a hand-written controller. The metric
	// bosun_own_write_events_skipped_total counts the events the For
	// watch dropped, each once.
	ReconcileOwnWrites bool
	// Metrics is the registry of the engine's metrics (see the package
	// doc), labelled controller with the Reconciler's Name, which steps
	// find through Pass.Metrics. Nil means controller-runtime's
	// metrics.Registry, which the manager serves.
	Metrics prometheus.Registerer
	// Observers are told of every pass (see PassObserver), besides the
	// observers of the manager's Observation (see ObservationOf).
	Observers []PassObserver
	// FormerFinalizers are finalizer names the engine used before
	// Reconciler.Finalizer, which it honours as its own: an object being
	// deleted that carries one is cleaned up and has all of them removed,
	// and a live object has them replaced with Finalizer in its next pass,
	// in the claim's one write. Renaming a finalizer takes two releases so
	// that a rollback always finds objects it can delete: the first keeps
	// the old name in Finalizer and lists the new one here (it honours the
	// new name, and puts the old one back where it finds the new); the
	// second makes the new name Finalizer and
	// lists the old one here, and migrates the objects. A release that
	// needs no finalizer any more (Finalizer empty, its cleanup left to
	// owner references) lists the old name too: the engine drops it from
	// each live object in one write, and lets a deleted object go without
	// a cleanup. See docs/OPERATIONS.md.
	FormerFinalizers []string
	// DeletionDeadline, when positive, is how long the cleanup of an object
	// being deleted may take before the engine reports it blocked: the
	// condition DeletionBlocked True (conditions.TypeDeletionBlocked), with
	// what blocks it (the step and its error or wait) and since when, a
	// Warning event DeletionBlocked, and the metric
	// bosun_deletion_blocked_total. The cleanup goes on being retried, and
	// the finalizer stays until it finishes or an administrator sets
	// AnnotationReleaseFinalizer. Zero reports nothing.
	DeletionDeadline time.Duration
	// MassDeletion is the mass-deletion breaker, on by default for a
	// reconciler whose steps clean up: it holds the cleanups of objects
	// deleted in a mass (their kind's CustomResourceDefinition being
	// deleted, more than a count or share of its objects entering deletion
	// within a window), deleting nothing, until an administrator lets them
	// go on (see MassDeletion and docs/OPERATIONS.md).
	MassDeletion MassDeletion
	// KStatus keeps the conditions of the kstatus convention besides Ready,
	// so that Flux, Argo CD and kubectl's status readers judge the objects
	// right: Reconciling True (with Ready's reason and message) while Ready
	// is False for a reason that will pass (a step not done, an error being
	// retried), or with conditions.ReasonRetrying while ReadyGrace holds
	// Ready True through a retried error, Stalled True after a terminal
	// error, and neither while the object is otherwise Ready or paused.
	// The kind needs status.observedGeneration too, which the engine
	// stamps.
	KStatus bool
	// Build names the build of the operator, such as its version
	// ("v1.4.2"), which the engine records in AnnotationReconciledBy on
	// each object it reconciles. Empty means the Build of the manager's
	// Observation, which package operator sets from the binary's version;
	// when that is empty too, the engine records nothing (and leaves an
	// annotation an earlier build wrote as it is).
	//
	// The annotation is written after a pass that ran the steps for the
	// live object, whatever their outcome (not under PolicySkip, not while
	// the object is being deleted), and only when it names another build:
	// on an object's first pass in the claim's write, else in the save's
	// write of metadata and spec, with the steps' changes when they made
	// some. An upgrade costs one write per object, and an object the build
	// already marked none.
	Build string
	// ReadyGrace, when positive, is how long an object that was Ready for
	// its generation keeps Ready True through a failure that the engine
	// retries, so that an error the next pass clears does not flip Ready
	// to False and back. While it holds, the object says it is retrying:
	// the condition the error names (conditions.Error's Type, as package
	// managed's errors name Synced) is False with the error, and with
	// KStatus, Reconciling is True with conditions.ReasonRetrying. Ready
	// turns False with the error, as without the grace, once the failures
	// have lasted ReadyGrace, counted from the lastTransitionTime of
	// those conditions (the first failure of the streak, kept in the
	// object's status, so a restart does not start it again); the engine
	// requeues the object for that moment. There is no grace for a
	// terminal error, a new generation, an object being deleted, a
	// failure of the engine's own write, an object whose Ready was not
	// True, one of whose other conditions is not True, or an error with
	// nowhere else to show (it names no condition of the steps and
	// KStatus is off). Zero, the default, holds nothing: Ready turns
	// False at the first failure. See docs/OPERATIONS.md.
	ReadyGrace time.Duration
	// TracerProvider makes the OpenTelemetry spans of the passes: one per
	// pass, with a child per step. Nil means otel's global provider once a
	// program has set one (otel.SetTracerProvider, as package operator does
	// when the OTEL_* environment asks for it); while none is set, passes
	// make no spans.
	TracerProvider trace.TracerProvider
}

// prepared is what Validate works out once from the configuration.
type prepared[T client.Object] struct {
	objType reflect.Type
	// steps are the steps of the tree, composites and the steps inside
	// them, in the order a depth-first walk meets them; names their names.
	steps     []Step[T]
	names     []string
	condOrder []string
	cleans    bool
	// claimers are the indexes in steps of the Claimers.
	claimers []int
	// observes is true when some step is an Observer, so that something
	// refreshes the object's health under the skip policy.
	observes bool
	// conds is true when T keeps conditions (conditions.Object); the engine
	// then records Ready and the steps' conditions in its status.
	conds      bool
	metrics    *metricSet
	apiReader  client.Reader
	recorder   events.EventRecorder
	defaultPol Policy
}

var _ reconcile.Reconciler = &Reconciler[client.Object]{}

// Validate checks the configuration and prepares the reconciler. It returns
// an error wrapping ErrInvalidConfig that names the offending step or field.
// Reconcile validates on first use too; ControllerManagedBy calls Validate
// at setup so that mistakes show before the manager starts. Fields must not
// change after the first call.
func (r *Reconciler[T]) Validate() error {
	r.once.Do(func() {
		r.prep, r.prepErr = r.prepare()
		if r.prepErr == nil {
			r.own = r.ownRecord(r.prep)
		}
	})
	return r.prepErr
}

func (r *Reconciler[T]) prepare() (*prepared[T], error) {
	invalid := func(format string, args ...any) error {
		return fmt.Errorf("bosun: reconciler %q: %w: %s", r.Name, ErrInvalidConfig, fmt.Sprintf(format, args...))
	}
	if r.Name == "" {
		return nil, invalid("Name is empty")
	}
	if r.Client == nil {
		return nil, invalid("Client is nil")
	}
	if len(r.Steps) == 0 {
		return nil, invalid("no Steps")
	}
	p := &prepared[T]{apiReader: r.APIReader, recorder: r.Recorder, defaultPol: PolicyManage}
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, invalid("type %s is not a pointer to a struct", t)
	}
	p.objType = t.Elem()
	_, p.conds = reflect.New(p.objType).Interface().(conditions.Object)
	if err := p.walk(r.Steps); err != nil {
		return nil, invalid("%v", err)
	}
	if err := p.index(t, invalid); err != nil {
		return nil, err
	}
	if err := r.checkOptions(p, invalid); err != nil {
		return nil, err
	}
	if p.apiReader == nil {
		p.apiReader = r.Client
	}
	if p.recorder == nil {
		p.recorder = discardRecorder{}
	}
	m, err := newMetricSet(r.Options.Metrics, r.Name, p.names)
	if err != nil {
		return nil, invalid("Metrics: %v", err)
	}
	p.metrics = m
	return p, nil
}

// walk records the steps of the tree rooted at steps, depth first, with
// their names.
// index checks the steps' names and the conditions they own, and notes
// which steps clean up, claim and observe. t is the reconciled type;
// invalid makes the error of a bad configuration.
func (p *prepared[T]) index(t reflect.Type, invalid func(string, ...any) error) error {
	seen := make(map[string]int, len(p.steps))
	seenCond := map[string]bool{conditions.TypeReady: true}
	for i, s := range p.steps {
		name := p.names[i]
		if name == "" {
			return invalid("step %d has an empty name", i)
		}
		if j, dup := seen[name]; dup {
			return invalid("steps %d and %d are both named %q", j, i, name)
		}
		seen[name] = i
		if v, ok := s.(interface{ validate() error }); ok {
			if err := v.validate(); err != nil {
				return invalid("step %q: %v", name, err)
			}
		}
		if _, ok := s.(Cleaner[T]); ok {
			p.cleans = true
		}
		if _, ok := s.(Claimer[T]); ok {
			p.claimers = append(p.claimers, i)
		}
		if _, ok := s.(Observer[T]); ok {
			p.observes = true
		}
		if co, ok := s.(ConditionOwner); ok {
			for _, c := range co.Conditions() {
				if c == "" {
					return invalid("step %q owns a condition with an empty type", name)
				}
				if seenCond[c] {
					return invalid("step %q owns condition %q, which is the engine's or another step's", name, c)
				}
				if !p.conds {
					return invalid("step %q owns condition %q, but type %s has no GetConditions and SetConditions methods (see conditions.Object)", name, c, t)
				}
				seenCond[c] = true
				p.condOrder = append(p.condOrder, c)
			}
		}
	}
	return nil
}

// ownsCondition reports whether condition type typ is the engine's own
// (Ready, DeletionBlocked, Reconciling, Stalled) or a step's
// (ConditionOwner).
func (p *prepared[T]) ownsCondition(typ string) bool {
	switch typ {
	case conditions.TypeReady, conditions.TypeDeletionBlocked, conditions.TypeReconciling, conditions.TypeStalled:
		return true
	}
	return slices.Contains(p.condOrder, typ)
}

// stampGeneration sets ObservedGeneration to gen on the conditions the
// pass over original answers for: the engine's own (Ready, DeletionBlocked, the kstatus
// ones), the types its steps own (ConditionOwner), and any condition a
// step added or changed in this pass. A condition of another type that the
// pass found and left as it was is someone else's, another controller's
// that writes the same object's status maybe: the generation it observed
// is that one's word, and stays (see saver.sendStatus).
func (p *prepared[T]) stampGeneration(conds []metav1.Condition, gen int64, original client.Object) {
	var found []metav1.Condition
	if co, ok := any(original).(conditions.Object); ok {
		found = co.GetConditions()
	}
	for i := range conds {
		c := &conds[i]
		if !p.ownsCondition(c.Type) {
			if was := conditions.Find(found, c.Type); was != nil && equality.Semantic.DeepEqual(*was, *c) {
				continue
			}
		}
		c.ObservedGeneration = gen
	}
}

// ownRecord makes the record of the engine's own writes, in the
// Reconciler's memory, for the configuration p.
func (r *Reconciler[T]) ownRecord(p *prepared[T]) *ownWrites[T] {
	o := &ownWrites[T]{
		memory:     &r.memory,
		keepEvents: r.Options.ReconcileOwnWrites,
		staleLimit: r.Options.StaleCacheLimit,
		objType:    p.objType,
		apiReader:  p.apiReader,
	}
	if o.staleLimit <= 0 {
		o.staleLimit = defaultStaleCacheLimit
	}
	if p.metrics != nil {
		o.skipped = p.metrics.ownWriteSkipped
	}
	return o
}

// checkOptions checks the options of r that the steps of p call for or
// that have bounds, and sets p's default policy; invalid makes the error
// of a bad one.
func (r *Reconciler[T]) checkOptions(p *prepared[T], invalid func(string, ...any) error) error {
	if p.claims() {
		needer, does := p.firstCleaner(), "cleans up"
		if needer == "" {
			needer, does = p.names[p.claimers[0]], "claims"
		}
		if r.Finalizer == "" {
			return invalid("Finalizer is empty but step %q %s", needer, does)
		}
		if err := checkFinalizer(r.Finalizer); err != nil {
			return invalid("Finalizer %q (needed by step %q): %v", r.Finalizer, needer, err)
		}
	}
	for _, f := range r.Options.FormerFinalizers {
		if err := checkFinalizer(f); err != nil {
			return invalid("FormerFinalizers: %q: %v", f, err)
		}
		if f == r.Finalizer {
			return invalid("FormerFinalizers lists Finalizer %q itself", f)
		}
	}
	if msg := r.Options.MassDeletion.check(); msg != "" {
		return invalid("%s", msg)
	}
	if r.Resync < 0 {
		return invalid("Resync %s is negative", r.Resync)
	}
	if r.Options.StaleCacheLimit < 0 {
		return invalid("StaleCacheLimit %s is negative", r.Options.StaleCacheLimit)
	}
	if r.Options.ResyncJitter < 0 || r.Options.ResyncJitter > 1 {
		return invalid("ResyncJitter %g is not between 0 and 1", r.Options.ResyncJitter)
	}
	if r.DefaultPolicy != "" {
		pol, err := parsePolicy(string(r.DefaultPolicy))
		if err != nil {
			return invalid("DefaultPolicy: %v", err)
		}
		p.defaultPol = pol
	}
	if r.Instance != "" {
		if errs := validation.IsValidLabelValue(r.Instance); len(errs) > 0 {
			return invalid("Instance %q: %s", r.Instance, strings.Join(errs, "; "))
		}
	}
	return nil
}

func (p *prepared[T]) walk(steps []Step[T]) error {
	var visit func(path string, steps []Step[T], depth int) error
	visit = func(path string, steps []Step[T], depth int) error {
		if depth > maxDepth {
			return fmt.Errorf("steps nest more than %d deep at %s: does a composite contain itself?", maxDepth, path)
		}
		for i, s := range steps {
			at := fmt.Sprintf("%s%d", path, i)
			if s == nil || reflect.ValueOf(s).Kind() == reflect.Pointer && reflect.ValueOf(s).IsNil() {
				return fmt.Errorf("step %s is nil", at)
			}
			p.steps = append(p.steps, s)
			p.names = append(p.names, StepName(s))
			if c, ok := s.(Composite[T]); ok {
				if err := visit(at+".", c.Steps(), depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return visit("", steps, 0)
}

// claims reports whether the engine holds a finalizer on the objects: when
// some step cleans up or claims.
func (p *prepared[T]) claims() bool { return p.cleans || len(p.claimers) > 0 }

func (p *prepared[T]) firstCleaner() string {
	for i, s := range p.steps {
		if _, ok := s.(Cleaner[T]); ok {
			return p.names[i]
		}
	}
	return ""
}

// checkFinalizer requires a qualified name with a DNS subdomain prefix that
// has a dot, such as "example.com/cleanup".
func checkFinalizer(f string) error {
	if errs := validation.IsQualifiedName(f); len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	prefix, _, ok := strings.Cut(f, "/")
	if !ok || !strings.Contains(prefix, ".") {
		return errors.New("must be domain-qualified, like example.com/cleanup")
	}
	return nil
}

// discardRecorder drops every event.
type discardRecorder struct{}

func (discardRecorder) Eventf(_, _ runtime.Object, _, _, _, _ string, _ ...any) {}

// Graph describes the reconciler: its name, its finalizer and its steps,
// composites' steps included. It reads only the configuration, so it works
// before the manager starts and without a Client; it runs no step, and
// does not validate the reconciler: a nil step is named "<nil>", and a
// step tree deeper than Validate accepts (a composite that contains itself)
// is cut at that depth.
func (r *Reconciler[T]) Graph() Graph { return graphOf(r.Name, r.Finalizer, r.Steps) }

// PolicyRules returns the RBAC rules r needs, for the operator's role: the
// engine's own (get, list, watch, update and patch on T and get, update and
// patch on its status; get, list and watch on namespaces unless
// Options.IgnoreNamespacePolicy; create and patch on events.k8s.io events;
// get on T's CustomResourceDefinition when a step cleans up, for the
// mass-deletion breaker, unless Options.MassDeletion.Allow)
// and those of every step, composites' steps included, that declares its
// own with a method
//
//	PolicyRules(*runtime.Scheme) ([]rbacv1.PolicyRule, error)
//
// as the children step does. A hand-written step that reads or writes
// other kinds declares them the same way. scheme names T and the steps'
// kinds; a kind's resource is its lower-case plural
// (meta.UnsafeGuessKindToResource). Comparing the rules with the role
// controller-gen writes from the RBAC markers keeps both at least
// privilege: examples/memcached's tests do.
func (r *Reconciler[T]) PolicyRules(scheme *runtime.Scheme) ([]rbacv1.PolicyRule, error) {
	gvk, err := apiutil.GVKForObject(reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T), scheme)
	if err != nil {
		return nil, fmt.Errorf("bosun: reconciler %q: %w", r.Name, err)
	}
	res, _ := meta.UnsafeGuessKindToResource(gvk)
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{gvk.Group}, Resources: []string{res.Resource}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
		{APIGroups: []string{gvk.Group}, Resources: []string{res.Resource + "/status"}, Verbs: []string{"get", "update", "patch"}},
		{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	}
	if !r.Options.IgnoreNamespacePolicy {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch"}})
	}
	type declarer interface {
		PolicyRules(*runtime.Scheme) ([]rbacv1.PolicyRule, error)
	}
	var visit func(steps []Step[T], depth int) error
	visit = func(steps []Step[T], depth int) error {
		if depth > maxDepth {
			return fmt.Errorf("steps nest more than %d deep", maxDepth)
		}
		for _, s := range steps {
			if d, ok := s.(declarer); ok {
				more, err := d.PolicyRules(scheme)
				if err != nil {
					return fmt.Errorf("step %s: %w", StepName(s), err)
				}
				rules = append(rules, more...)
			}
			if c, ok := s.(Composite[T]); ok {
				if err := visit(c.Steps(), depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	cleans := false
	var visitCleaners func(steps []Step[T], depth int)
	visitCleaners = func(steps []Step[T], depth int) {
		for _, s := range steps {
			if _, ok := s.(Cleaner[T]); ok {
				cleans = true
			}
			if c, ok := s.(Composite[T]); ok && depth < maxDepth {
				visitCleaners(c.Steps(), depth+1)
			}
		}
	}
	if err := visit(r.Steps, 0); err != nil {
		return nil, fmt.Errorf("bosun: reconciler %q: %w", r.Name, err)
	}
	visitCleaners(r.Steps, 0)
	if cleans && !r.Options.MassDeletion.Allow && !builtInGroup(gvk.Group) {
		// The mass-deletion breaker reads the kind's
		// CustomResourceDefinition.
		rules = append(rules, rbacv1.PolicyRule{
			APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"},
			ResourceNames: []string{res.Resource + "." + gvk.Group}, Verbs: []string{"get"},
		})
	}
	return rules, nil
}

// FieldIndexes returns the field indexes that the steps of r, composites'
// steps included, register with IndexField when they are set up (see
// Setuper), once per kind and field, without a manager: for an in-memory
// client that must answer the field selectors the steps list by, as the
// one of package bosuntest/unit does. scheme names the kinds. The watches
// the steps would add are left out, and Builder.Manager is nil for them.
func (r *Reconciler[T]) FieldIndexes(scheme *runtime.Scheme) ([]FieldIndex, error) {
	return fieldIndexes(r, scheme)
}

// Reconcile runs the lifecycle for one request. See Reconciler.
func (r *Reconciler[T]) Reconcile(ctx context.Context, creq ctrl.Request) (ctrl.Result, error) {
	if err := r.Validate(); err != nil {
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	po := &passObs{trigger: r.book.take(creq.NamespacedName), tracer: tracerFor(r.Options.TracerProvider, &r.tracers)}
	observed := len(r.Options.Observers) > 0 || r.observation.active()
	var start time.Time
	if observed {
		start = time.Now()
		po.steps = &stepLog{}
	}
	var span trace.Span
	if po.tracer != nil {
		ctx, span = po.tracer.Start(ctx, "Reconcile "+r.Name, trace.WithAttributes(
			attribute.String(attrController, r.Name),
			attribute.String(attrNamespace, creq.Namespace),
			attribute.String(attrObject, creq.Name),
		))
		sc := span.SpanContext()
		ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("traceID", sc.TraceID().String(), "spanID", sc.SpanID().String()))
	}
	res, err := runPass(ctx, r, creq, po)
	r.noteRequeue(creq.NamespacedName, po, res, err)
	var traceID string
	if span != nil {
		span.SetAttributes(attribute.String(attrTrigger, po.trigger.String()), attribute.String(attrTriggerKind, po.trigger.Kind))
		traceID = span.SpanContext().TraceID().String()
		endSpan(span, res, err)
	}
	if observed {
		report := PassReport{
			Controller: r.Name,
			Object:     creq.NamespacedName,
			Trigger:    po.trigger,
			Start:      start,
			Duration:   time.Since(start),
			Steps:      po.steps.reports(),
			Result:     res,
			TraceID:    traceID,
		}
		if err != nil {
			report.Error = err.Error()
		}
		if co, ok := po.object.(conditions.Object); ok && po.object != nil {
			report.Conditions = slices.Clone(co.GetConditions())
		}
		for _, o := range r.Options.Observers {
			o.ObservePass(ctx, report)
		}
		r.observation.observePass(ctx, report)
	}
	return res, err
}

// passObs is what a pass keeps for its trigger, trace and observers.
type passObs struct {
	trigger Trigger
	// tracer is nil when tracing is off.
	tracer trace.Tracer
	// steps is nil when nobody observes the passes.
	steps *stepLog
	// resynced is set when the pass's requeue is the periodic resync.
	resynced bool
	// object is the object at the end of the pass; nil when it is gone.
	object client.Object
}

// noteRequeue records, for the trigger of the next pass of key, the
// requeue this one asked for.
func (r *Reconciler[T]) noteRequeue(key types.NamespacedName, po *passObs, res ctrl.Result, err error) {
	switch {
	case err != nil:
		r.book.requeue(key, triggerRequeue, !errors.Is(err, reconcile.TerminalError(nil)))
	case res.RequeueAfter > 0 && po.resynced:
		r.book.requeue(key, triggerResync, true)
	case res.RequeueAfter > 0 || res.Requeue: //nolint:staticcheck // Requeue is deprecated but still honoured by controller-runtime.
		r.book.requeue(key, triggerRequeue, true)
	default:
		r.book.requeue(key, "", false)
	}
}

// hasFormer reports whether obj carries one of
// Options.FormerFinalizers.
func (r *Reconciler[T]) hasFormer(obj client.Object) bool {
	for _, f := range r.Options.FormerFinalizers {
		if controllerutil.ContainsFinalizer(obj, f) {
			return true
		}
	}
	return false
}

// markBuild records the operator's build (Options.Build, else the
// manager's) as this controller's entry of AnnotationReconciledBy on obj
// when the entry names another build; the caller writes obj. Other
// controllers' entries stay as they are, so that two controllers of
// different builds on one object each write theirs once.
func (r *Reconciler[T]) markBuild(obj client.Object) {
	build := r.Options.Build
	if build == "" {
		build = r.managerBuild
	}
	ann := obj.GetAnnotations()
	marks := parseBuilds(ann[AnnotationReconciledBy])
	if build == "" || marks[r.Name] == build {
		return
	}
	marks[r.Name] = build
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotationReconciledBy] = formatBuilds(marks)
	obj.SetAnnotations(ann)
}

// parseBuilds reads the value of AnnotationReconciledBy,
// "<controller>=<build>" entries separated by commas, into a map; an entry
// without a controller is dropped.
func parseBuilds(v string) map[string]string {
	marks := map[string]string{}
	for _, e := range strings.Split(v, ",") {
		name, build, ok := strings.Cut(strings.TrimSpace(e), "=")
		if ok && name != "" {
			marks[name] = build
		}
	}
	return marks
}

// formatBuilds writes marks as the value of AnnotationReconciledBy, the
// entries sorted by controller.
func formatBuilds(marks map[string]string) string {
	entries := make([]string, 0, len(marks))
	for _, name := range slices.Sorted(maps.Keys(marks)) {
		entries = append(entries, name+"="+marks[name])
	}
	return strings.Join(entries, ",")
}

// The state of a pass and its stages. Reconcile loads the object (runPass)
// and makes a passState; each stage is a type of its own, with the fields
// it uses and its methods in a file of its own, in the order a pass runs
// them:
//
//   - claim.go: claim, the claim: ownership, policy, and the commit of the
//     finalizer before any step acts; it returns what it decided;
//   - run.go: passState, the steps: Do, Cleanup or Observe, every Post,
//     and the conditions;
//   - save.go: saver, the commit of what changed, metadata and spec then
//     status, and the report of a failed engine write; it keeps the
//     record of the pass's writes (passWrites);
//   - ownwrites.go: ownWrites, the record of the engine's own writes, kept
//     in the Reconciler's memory across passes, whose events start no
//     pass and which a later pass waits past.

// passState is the state of one reconcile.
type passState[T client.Object] struct {
	r   *Reconciler[T]
	p   *prepared[T]
	req *Pass[T]
	key types.NamespacedName
	// save makes the pass's writes, and records them.
	save *saver[T]
	// claimErr is the error of a Claimer, which stopped the claim.
	claimErr error
	// resynced is set when the pass's requeue is the periodic resync.
	resynced bool
	// reached is the index of the last step whose Do ran this pass.
	reached int
	// early, when set, says which step asked to come back before the steps
	// after it ran: Ready cannot be True then.
	early string
	// waiting is the name of the step whose Cleanup stopped the cleanup.
	waiting string
	// blocked, when set, says why the deletion passed its deadline, and
	// blockedReason is DeletionBlocked's reason.
	blocked       string
	blockedReason conditions.Reason
	// held, when set, says why the mass-deletion breaker holds the
	// cleanup.
	held string
	// released, when set, says how AnnotationReleaseFinalizer released
	// the finalizer.
	released string
	// invalidRelease, when set, says that AnnotationReleaseFinalizer
	// holds a value the engine does not know; Ready reports it.
	invalidRelease string
}

// saverFor makes the save stage of the pass req of the object key.
func (r *Reconciler[T]) saverFor(req *Pass[T], key types.NamespacedName) *saver[T] {
	return &saver[T]{
		req:       req,
		key:       key,
		client:    r.Client,
		apiReader: r.prep.apiReader,
		objType:   r.prep.objType,
		recorder:  r.prep.recorder,
		finalizer: r.Finalizer,
		former:    r.Options.FormerFinalizers,
		cleans:    r.prep.cleans,
		kstatus:   r.Options.KStatus,
		steps:     r.Steps,
		own:       r.own,
	}
}

// runPass runs the pass of Reconcile: it loads the object from the cache
// (or, when the cache is still behind the engine's own writes for too
// long, from the API server), makes the Pass, runs it (run.go) and ends
// the record of its own writes (ownwrites.go).
func runPass[T client.Object](ctx context.Context, r *Reconciler[T], creq ctrl.Request, po *passObs) (ctrl.Result, error) {
	started := time.Now()
	p := r.prep
	log := ctrl.LoggerFrom(ctx)

	obj := reflect.New(p.objType).Interface().(T)
	if err := r.Client.Get(ctx, creq.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.own.forgetKey(creq.NamespacedName)
			r.book.forget(creq.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("loading %s: %w", creq.NamespacedName, err)
	}
	po.object = obj
	// The object is in the cache: a leaving noted before the pass began
	// is over, and what the pass records is kept unless the object goes
	// while it runs.
	r.memory.Back(obj.GetUID(), started)
	if r.memory.recalled(creq.NamespacedName, obj.GetUID()).owed != nil {
		// The event of the failed pass before this one (see passState.finish).
		var e *owedEvent
		r.memory.amend(creq.NamespacedName, obj.GetUID(), func(m *remembered) { e, m.owed = m.owed, nil })
		if e != nil {
			p.recorder.Eventf(obj, nil, corev1.EventTypeWarning, string(e.reason), "Reconcile", "%s", e.note)
		}
	}
	if po.trigger.Kind == triggerWatch && po.trigger.Source == triggerSourceFor && po.trigger.Event == triggerUpdate && requestPending(obj) {
		po.trigger.Kind = triggerRequested
	}
	if log.V(1).Enabled() {
		log.V(1).Info("pass triggered", "trigger", po.trigger.String())
	}
	obj, carried, wait, err := r.own.past(ctx, creq.NamespacedName, obj)
	if wait || err != nil {
		return ctrl.Result{RequeueAfter: staleCacheRetry}, err
	}
	req := &Pass[T]{
		Controller: r.Name,
		Object:     obj,
		Original:   obj.DeepCopyObject().(T),
		Client:     r.Client,
		APIReader:  p.apiReader,
		Log:        log,
		Recorder:   p.recorder,
		Values:     &Values{},
		Trigger:    po.trigger,
		metrics:    p.metrics,
		tracer:     po.tracer,
		steps:      po.steps,
	}
	save := r.saverFor(req, creq.NamespacedName)
	ps := &passState[T]{r: r, p: p, req: req, key: creq.NamespacedName, save: save}
	req.write = save.write
	res, err := ps.run(gone.WithPass(ctx, started))
	done := save.writes
	res = r.own.close(creq.NamespacedName, req.Object, done, res, err)
	po.resynced = ps.resynced
	po.object = req.Object
	r.own.remember(creq.NamespacedName, obj.GetUID(), carried, done.overwritten)
	if len(done.overwritten) == 0 && err == nil && res.RequeueAfter > 0 && res.Priority == nil && !done.conflicted {
		// A pass that wrote nothing and only asks to look again later is
		// a poll. It goes back at low priority: otherwise the polls of
		// objects that have had a pass, which keep the normal priority of
		// their last change, could take every worker and starve the
		// objects a restarted controller lists at low priority and has
		// not reconciled yet.
		res.Priority = ptr.To(handler.LowPriority)
	}
	if err != nil && res.Priority == nil && !errors.Is(err, reconcile.TerminalError(nil)) {
		res.Priority = ptr.To(retryPriority)
	}
	return res, err
}

// breakerOf returns the breaker of r at work for obj: the one Build set
// up, or, for a reconciler registered without bosun's Builder, one made
// at its first deletion pass, whose count holds the deletions its passes
// see; nil for a reconciler whose steps do not clean up.
func breakerOf[T client.Object](r *Reconciler[T], obj client.Object) *breaker {
	if r.breaker != nil || !r.prep.cleans {
		return r.breaker
	}
	r.lateBreaker.Do(func() {
		b := &breaker{count: newDeletionCount()}
		if r.Client != nil {
			if gvk, err := apiutil.GVKForObject(obj, r.Client.Scheme()); err == nil {
				b.crd = crdName(r.Client.RESTMapper(), gvk)
			}
		}
		r.late = b
	})
	return r.late
}
