package bosun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/flow"
)

// ConflictRequeueDelay is how long the engine waits before it reconciles an
// object again after a write was refused with 409 Conflict: long enough for
// the cache to catch up with the newer version, short enough not to matter.
const ConflictRequeueDelay = 100 * time.Millisecond

// Event reasons the engine records.
const (
	// EventClaimed: the engine committed its finalizer or instance claim.
	EventClaimed = "Claimed"
	// EventCleanedUp: every Cleanup finished and the finalizer was released.
	EventCleanedUp = "CleanedUp"
	// EventDetached: the object was deleted under a policy that runs no
	// Cleanup, and the finalizer was released.
	EventDetached = "Detached"
	// EventSkipped: the skip policy applies to the object.
	EventSkipped = "ReconcileSkipped"
	// EventOwnedElsewhere: another operator instance owns the object.
	EventOwnedElsewhere = "OwnedByOtherInstance"
)

// ErrNotControlled is wrapped by the error of a state getter whose object
// is not controlled by the object being reconciled, where the state asks for
// one that is.
var ErrNotControlled = errors.New("object is not controlled by the reconciled object")

// StaleCacheRetry is how long the engine waits before looking again at an
// object whose cached version is older than its own last write.
const StaleCacheRetry = time.Second

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
// else happens); commits its claim (finalizer, instance
// annotation) before any step acts; runs the Do workflow, or Cleanup in
// reverse step order when the object is being deleted; runs every Post;
// derives the conditions; writes what changed; and returns the joined
// outcome through flow.Final.
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
// StaleCacheRetry, for controllers whose predicates filter that event out
// (a status-only write under GenerationChangedPredicate).
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
	// IgnoreNamespacePolicy turns the Namespace off as a source of the
	// policy: an object's policy is its annotation, else DefaultPolicy, and
	// Namespaces are neither read nor watched. A namespace-scoped operator
	// whose Role grants nothing on Namespaces needs it.
	IgnoreNamespacePolicy bool
	// Instance is the name of this operator instance. When set, the engine
	// claims unclaimed objects for it through InstanceAnnotation and leaves
	// objects claimed by other instances alone. Empty means no ownership
	// check: every object is reconciled and none is claimed.
	Instance string
	// Client reads from the cache and writes. Required; ControllerManagedBy
	// sets it from the manager.
	Client client.Client
	// APIReader reads around the cache. Nil means Client.
	APIReader client.Reader
	// Recorder records events. Nil means events are discarded.
	Recorder events.EventRecorder

	once     sync.Once
	prep     *prepared[T]
	prepErr  error
	skipSeen sync.Map // types.NamespacedName -> struct{}: skip event recorded
	foreign  sync.Map // types.NamespacedName -> string: owner warned about
	written  sync.Map // types.NamespacedName -> []string: versions our last pass wrote over
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
	r.once.Do(func() { r.prep, r.prepErr = r.prepare() })
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
	seen := make(map[string]int, len(p.steps))
	seenCond := map[string]bool{conditions.TypeReady: true}
	for i, s := range p.steps {
		name := p.names[i]
		if name == "" {
			return nil, invalid("step %d has an empty name", i)
		}
		if j, dup := seen[name]; dup {
			return nil, invalid("steps %d and %d are both named %q", j, i, name)
		}
		seen[name] = i
		if v, ok := s.(interface{ validate() error }); ok {
			if err := v.validate(); err != nil {
				return nil, invalid("step %q: %v", name, err)
			}
		}
		if _, ok := s.(Cleaner[T]); ok {
			p.cleans = true
		}
		if _, ok := s.(Observer[T]); ok {
			p.observes = true
		}
		if co, ok := s.(ConditionOwner); ok {
			for _, c := range co.Conditions() {
				if c == "" {
					return nil, invalid("step %q owns a condition with an empty type", name)
				}
				if seenCond[c] {
					return nil, invalid("step %q owns condition %q, which is the engine's or another step's", name, c)
				}
				if !p.conds {
					return nil, invalid("step %q owns condition %q, but type %s has no GetConditions and SetConditions methods (see conditions.Object)", name, c, t)
				}
				seenCond[c] = true
				p.condOrder = append(p.condOrder, c)
			}
		}
	}
	if p.cleans {
		if r.Finalizer == "" {
			return nil, invalid("Finalizer is empty but step %q cleans up", p.firstCleaner())
		}
		if err := checkFinalizer(r.Finalizer); err != nil {
			return nil, invalid("Finalizer %q (needed by step %q): %v", r.Finalizer, p.firstCleaner(), err)
		}
	}
	if r.DefaultPolicy != "" {
		pol, err := ParsePolicy(string(r.DefaultPolicy))
		if err != nil {
			return nil, invalid("DefaultPolicy: %v", err)
		}
		p.defaultPol = pol
	}
	if r.Instance != "" {
		if errs := validation.IsValidLabelValue(r.Instance); len(errs) > 0 {
			return nil, invalid("Instance %q: %s", r.Instance, strings.Join(errs, "; "))
		}
	}
	if p.apiReader == nil {
		p.apiReader = r.Client
	}
	if p.recorder == nil {
		p.recorder = discardRecorder{}
	}
	p.metrics = newMetricSet(r.Name, p.names)
	return p, nil
}

// maxDepth bounds how deep composites may nest, so that a composite that
// contains itself is refused instead of walked forever.
const maxDepth = 64

// walk records the steps of the tree rooted at steps, depth first, with
// their names.
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

// Reconcile runs the lifecycle for one request. See Reconciler.
func (r *Reconciler[T]) Reconcile(ctx context.Context, creq ctrl.Request) (ctrl.Result, error) {
	if err := r.Validate(); err != nil {
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	p := r.prep
	log := ctrl.LoggerFrom(ctx)

	obj := reflect.New(p.objType).Interface().(T)
	if err := r.Client.Get(ctx, creq.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.skipSeen.Delete(creq.NamespacedName)
			r.foreign.Delete(creq.NamespacedName)
			r.written.Delete(creq.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("loading %s: %w", creq.NamespacedName, err)
	}
	if r.stale(creq.NamespacedName, obj.GetResourceVersion()) {
		// The cache still holds a version this reconciler wrote over; the
		// watch event of the newer one reconciles the object again.
		log.V(1).Info("cache behind own writes, waiting for it")
		return ctrl.Result{RequeueAfter: StaleCacheRetry}, nil
	}
	req := &Request[T]{
		Controller: r.Name,
		Object:     obj,
		Original:   obj.DeepCopyObject().(T),
		Client:     r.Client,
		APIReader:  p.apiReader,
		Log:        log,
		Recorder:   p.recorder,
		Values:     &Values{},
		metrics:    p.metrics,
	}
	ps := &pass[T]{r: r, p: p, req: req, key: creq.NamespacedName}
	res, err := ps.run(ctx)
	if len(ps.overwritten) > 0 {
		r.written.Store(creq.NamespacedName, ps.overwritten)
	}
	return res, err
}

// stale reports whether rv is a version of the object that the last pass of
// this reconciler wrote over, and forgets that pass when it is not.
func (r *Reconciler[T]) stale(key types.NamespacedName, rv string) bool {
	v, ok := r.written.Load(key)
	if !ok {
		return false
	}
	for _, old := range v.([]string) {
		if old == rv {
			return true
		}
	}
	r.written.Delete(key)
	return false
}

// pass is the state of one reconcile.
type pass[T client.Object] struct {
	r   *Reconciler[T]
	p   *prepared[T]
	req *Request[T]
	key types.NamespacedName
	// overwritten are the resource versions this pass's writes replaced
	// with newer ones.
	overwritten []string
}

// conflictRequeue is the outcome of a 409 Conflict: a quiet retry.
func (ps *pass[T]) conflictRequeue(during string) ctrl.Result {
	ps.req.Log.V(1).Info("conflict, requeueing", "during", during)
	return ctrl.Result{RequeueAfter: ConflictRequeueDelay}
}

func (ps *pass[T]) event(eventtype, reason, action, note string, args ...any) {
	ps.p.recorder.Eventf(ps.req.Object, nil, eventtype, reason, action, note, args...)
}

func (ps *pass[T]) run(ctx context.Context) (ctrl.Result, error) {
	r, req := ps.r, ps.req
	obj := req.Object

	// Ownership, first: another instance's object gets no writes and no
	// events beyond the one warning, whatever its policy.
	if r.Instance != "" {
		if owner := obj.GetAnnotations()[InstanceAnnotation]; owner != "" && owner != r.Instance {
			if prev, loaded := r.foreign.Swap(ps.key, owner); !loaded || prev != owner {
				ps.event(corev1.EventTypeWarning, EventOwnedElsewhere, "Reconcile",
					"object belongs to operator instance %q, not %q", owner, r.Instance)
			}
			req.Log.V(1).Info("object owned by another instance", "instance", owner)
			return ctrl.Result{}, nil
		}
		r.foreign.Delete(ps.key)
	}

	// Policy.
	policy, err := ps.policy(ctx)
	if err != nil {
		if errors.Is(err, ErrUnknownPolicy) {
			return ps.invalidPolicy(ctx, err)
		}
		return ctrl.Result{}, err
	}
	req.Policy = policy
	req.Log = req.Log.WithValues("policy", string(policy))
	ctx = logr.NewContext(ctx, req.Log)
	if policy == PolicySkip {
		if _, seen := r.skipSeen.LoadOrStore(ps.key, struct{}{}); !seen {
			ps.event(corev1.EventTypeNormal, EventSkipped, "Reconcile", "reconcile policy %q: only observing", PolicySkip)
		}
	} else {
		r.skipSeen.Delete(ps.key)
	}

	deleting := req.Deleting()
	ours := r.Finalizer != "" && controllerutil.ContainsFinalizer(obj, r.Finalizer)
	if deleting && !ours {
		// Nothing of ours to release: the object goes away without us.
		return ctrl.Result{}, nil
	}

	// Claim before act.
	if !deleting && policy != PolicySkip {
		if done, res, err := ps.claim(ctx); done {
			return res, err
		}
	}

	// Act.
	var res ctrl.Result
	released := false
	switch {
	case deleting && policy == PolicyManage:
		res, err = ps.cleanup(ctx)
		if !flow.Interrupts(res, err) {
			controllerutil.RemoveFinalizer(req.Object, r.Finalizer)
			released = true
		}
	case deleting:
		// Detach (or skip): nothing is undone, the object is let go.
		controllerutil.RemoveFinalizer(req.Object, r.Finalizer)
		released = true
	case policy == PolicySkip:
		res, err = ps.observe(ctx)
	default:
		res, err = ps.do(ctx)
	}

	// Post, always.
	res, err = flow.JoinResults(flow.Outcome{Result: res, Err: err}, flow.Outcome{Err: ps.post(ctx)})
	res, err = flow.IgnoreExit(res, err)
	if err != nil && apierrors.IsConflict(err) {
		return ps.conflictRequeue("step"), nil
	}

	if released {
		return ps.release(ctx, policy, res, err)
	}

	// Conditions.
	newError := ps.setConditions(err)
	var severity conditions.Severity
	if err != nil {
		_, severity, _ = conditions.FromError(err)
	}

	// Save.
	if done, serr := ps.save(ctx); serr != nil {
		if apierrors.IsConflict(serr) {
			return ps.conflictRequeue("save"), nil
		}
		if mw := (*mainWriteError)(nil); errors.As(serr, &mw) {
			return ps.writeFailed(ctx, WriteSave, mw.err)
		}
		return ctrl.Result{}, serr
	} else if done {
		return ctrl.Result{}, nil
	}
	if newError {
		reason, _, msg := conditions.FromError(err)
		ps.event(corev1.EventTypeWarning, reason, "Reconcile", "%s", msg)
	}

	if err != nil && severity == conditions.SeverityError && !errors.Is(err, reconcile.TerminalError(nil)) {
		err = reconcile.TerminalError(err)
	}
	return flow.Final(res, err)
}

// policy returns the policy of the object: its annotation, else its
// Namespace's (unless IgnoreNamespacePolicy), else the default. An empty annotation counts as not set.
func (ps *pass[T]) policy(ctx context.Context) (Policy, error) {
	if v := ps.req.Object.GetAnnotations()[PolicyAnnotation]; v != "" {
		return ParsePolicy(v)
	}
	if nsName := ps.req.Object.GetNamespace(); nsName != "" && !ps.r.IgnoreNamespacePolicy {
		var ns corev1.Namespace
		if err := ps.r.Client.Get(ctx, types.NamespacedName{Name: nsName}, &ns); err != nil {
			if !apierrors.IsNotFound(err) {
				return "", fmt.Errorf("reading the policy of namespace %s: %w", nsName, err)
			}
		} else if v := ns.Annotations[PolicyAnnotation]; v != "" {
			return ParsePolicy(v)
		}
	}
	return ps.p.defaultPol, nil
}

// invalidPolicy reports an unknown policy value in Ready and does nothing
// else; the object is reconciled again when it changes.
func (ps *pass[T]) invalidPolicy(ctx context.Context, perr error) (ctrl.Result, error) {
	obj := ps.req.Object
	co, ok := any(obj).(conditions.Object)
	if !ok {
		// Nowhere to report it but the log; a change of the object or of
		// its namespace brings it back.
		ps.req.Log.Error(perr, "invalid reconcile policy")
		return ctrl.Result{}, nil
	}
	conds := co.GetConditions()
	gen := obj.GetGeneration()
	changed := conditions.Set(&conds, metav1.Condition{
		Type:               conditions.TypeReady,
		Status:             metav1.ConditionFalse,
		Reason:             conditions.ReasonInvalidPolicy,
		Message:            perr.Error(),
		ObservedGeneration: gen,
	}, metav1.Now())
	conditions.StampGeneration(conds, gen)
	co.SetConditions(conds)
	if _, err := ps.save(ctx); err != nil {
		if apierrors.IsConflict(err) {
			return ps.conflictRequeue("save"), nil
		}
		return ctrl.Result{}, err
	}
	if changed {
		ps.event(corev1.EventTypeWarning, conditions.ReasonInvalidPolicy, "Reconcile", "%s", perr.Error())
	}
	ps.req.Log.V(1).Info("invalid reconcile policy", "error", perr.Error())
	return ctrl.Result{}, nil
}

// claim commits the finalizer and the instance annotation, when they are
// missing, before any step acts. done means the reconcile ends with res and
// err.
func (ps *pass[T]) claim(ctx context.Context) (done bool, res ctrl.Result, err error) {
	r, req := ps.r, ps.req
	needFinalizer := ps.p.cleans && !controllerutil.ContainsFinalizer(req.Object, r.Finalizer)
	needInstance := r.Instance != "" && req.Object.GetAnnotations()[InstanceAnnotation] == ""
	if !needFinalizer && !needInstance {
		return false, ctrl.Result{}, nil
	}
	claimed := req.Object.DeepCopyObject().(T)
	if needFinalizer {
		controllerutil.AddFinalizer(claimed, r.Finalizer)
	}
	if needInstance {
		ann := claimed.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[InstanceAnnotation] = r.Instance
		claimed.SetAnnotations(ann)
	}
	patch := client.MergeFromWithOptions(req.Object, client.MergeFromWithOptimisticLock{})
	rv := req.Object.GetResourceVersion()
	if err := r.Client.Patch(ctx, claimed, patch); err != nil {
		switch {
		case apierrors.IsConflict(err):
			return true, ps.conflictRequeue("claim"), nil
		case apierrors.IsNotFound(err):
			return true, ctrl.Result{}, nil
		default:
			res, err := ps.writeFailed(ctx, WriteClaim, fmt.Errorf("claiming: %w", err))
			return true, res, err
		}
	}
	ps.wroteOver(rv, claimed)
	req.Object = claimed
	req.Original = claimed.DeepCopyObject().(T)
	req.Log.V(1).Info("claimed", "finalizer", needFinalizer, "instance", needInstance)
	ps.event(corev1.EventTypeNormal, EventClaimed, "Claim", "claimed by %s", ps.claimant(needFinalizer, needInstance))
	return false, ctrl.Result{}, nil
}

func (ps *pass[T]) claimant(finalizer, instance bool) string {
	switch {
	case finalizer && instance:
		return fmt.Sprintf("operator instance %q with finalizer %q", ps.r.Instance, ps.r.Finalizer)
	case instance:
		return fmt.Sprintf("operator instance %q", ps.r.Instance)
	default:
		return fmt.Sprintf("finalizer %q", ps.r.Finalizer)
	}
}

// do runs the Do of every step in order, stopping at the first that
// interrupts.
func (ps *pass[T]) do(ctx context.Context) (ctrl.Result, error) {
	actions := make([]flow.Action, len(ps.r.Steps))
	for i, s := range ps.r.Steps {
		actions[i] = ps.req.Action(s)
	}
	return flow.Run(ctx, flow.Sequential(actions...))
}

// observe runs every Observer in step order, stopping at the first that
// interrupts.
func (ps *pass[T]) observe(ctx context.Context) (ctrl.Result, error) {
	for i, s := range ps.p.steps {
		o, ok := s.(Observer[T])
		if !ok {
			continue
		}
		res, err := ps.req.call(ctx, ps.p.names[i], PhaseObserve, o.Observe)
		if flow.Interrupts(res, err) {
			return res, err
		}
	}
	return ctrl.Result{}, nil
}

// cleanup runs every Cleanup in reverse step order, stopping at the first
// that needs more time.
func (ps *pass[T]) cleanup(ctx context.Context) (ctrl.Result, error) {
	for i := len(ps.p.steps) - 1; i >= 0; i-- {
		c, ok := ps.p.steps[i].(Cleaner[T])
		if !ok {
			continue
		}
		res, err := ps.req.call(ctx, ps.p.names[i], PhaseCleanup, c.Cleanup)
		if flow.Interrupts(res, err) {
			return res, err
		}
	}
	return ctrl.Result{}, nil
}

// post runs every Post in step order and joins their errors.
func (ps *pass[T]) post(ctx context.Context) error {
	var errs []error
	for i, s := range ps.p.steps {
		po, ok := s.(Poster[T])
		if !ok {
			continue
		}
		_, err := ps.req.call(ctx, ps.p.names[i], PhasePost, func(ctx context.Context, req *Request[T]) (ctrl.Result, error) {
			return ctrl.Result{}, po.Post(ctx, req)
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// setConditions initialises the owned conditions, records err and derives
// Ready, and stamps the generation. It reports whether err changed Ready
// (a new error, worth an event).
func (ps *pass[T]) setConditions(err error) (newError bool) {
	obj := ps.req.Object
	co, ok := any(obj).(conditions.Object)
	if !ok {
		// Without conditions there is no record of the last error, so each
		// one counts as new.
		return err != nil
	}
	conds := co.GetConditions()
	gen := obj.GetGeneration()
	now := metav1.Now()
	conditions.Init(&conds, gen, now, ps.p.condOrder...)
	conditions.Init(&conds, gen, now, conditions.TypeReady)
	var ready metav1.Condition
	if err != nil {
		reason, _, msg := conditions.FromError(err)
		if typ := conditions.TypeOf(err); typ != conditions.TypeReady && conditions.Find(conds, typ) != nil {
			conditions.Set(&conds, metav1.Condition{
				Type: typ, Status: metav1.ConditionFalse, Reason: reason, Message: msg, ObservedGeneration: gen,
			}, now)
		}
		ready = metav1.Condition{
			Type: conditions.TypeReady, Status: metav1.ConditionFalse, Reason: reason, Message: msg, ObservedGeneration: gen,
		}
	} else {
		ready = conditions.Summarize(conds, ps.p.condOrder, gen)
		if ps.req.Policy == PolicySkip {
			ready = ps.paused(ready)
		}
	}
	changed := conditions.Set(&conds, ready, now)
	conditions.StampGeneration(conds, gen)
	// Steps may have written conditions without conditions.Set.
	boundMessages(conds)
	co.SetConditions(conds)
	conditions.SetObservedGeneration(obj, gen)
	return err != nil && changed
}

// paused returns ready, the summary of the steps' conditions, as the skip
// policy reports it. With an Observer, Ready keeps the observed health (its
// status and reason) and its message says that nothing is changed. With no
// Observer nothing refreshes the health, so Ready is False with
// conditions.ReasonReconcilePaused rather than a readiness nobody checked.
func (ps *pass[T]) paused(ready metav1.Condition) metav1.Condition {
	if !ps.p.observes {
		ready.Status = metav1.ConditionFalse
		ready.Reason = conditions.ReasonReconcilePaused
		ready.Message = fmt.Sprintf("reconcile policy %q: the object is neither changed nor observed", PolicySkip)
		return ready
	}
	if ready.Message == "" {
		ready.Message = fmt.Sprintf("reconcile policy %q: observed, not changed", PolicySkip)
	} else {
		ready.Message = conditions.Bound(fmt.Sprintf("reconcile policy %q: observed, not changed: %s", PolicySkip, ready.Message))
	}
	return ready
}

// boundMessages cuts every message in conds to what the API server
// accepts (conditions.Bound), so the status write cannot exceed its limits.
func boundMessages(conds []metav1.Condition) {
	for i := range conds {
		conds[i].Message = conditions.Bound(conds[i].Message)
	}
}

// mainWriteError is a failed write of the object's metadata and spec in
// save, as opposed to one of its status.
type mainWriteError struct{ err error }

func (e *mainWriteError) Error() string { return e.err.Error() }
func (e *mainWriteError) Unwrap() error { return e.err }

// writeFailed reports werr, the failure of the engine's write w of the
// object: it tells every WriteFailureReporter step, sets Ready False with
// w.Reason() and the error, writes the status alone (the write that failed
// is not repeated), records one Warning event when Ready changed, and
// returns the error for controller-runtime to retry with backoff; an error
// the API server gives for an invalid object is terminal, since only a
// change of the object can fix it.
//
// The reporters' conditions and Ready start again from what is stored, so
// a failure that repeats writes nothing new.
func (ps *pass[T]) writeFailed(ctx context.Context, w EngineWrite, werr error) (ctrl.Result, error) {
	obj := ps.req.Object
	ps.req.Log.Error(werr, "engine write failed", "write", string(w))
	changed := true
	if co, ok := any(obj).(conditions.Object); ok {
		conds := co.GetConditions()
		stored := any(ps.req.Original).(conditions.Object).GetConditions()
		restore := func(typ string) {
			if c := conditions.Find(stored, typ); c != nil {
				if cur := conditions.Find(conds, typ); cur != nil {
					*cur = *c
				} else {
					conds = append(conds, *c)
				}
			}
		}
		restore(conditions.TypeReady)
		for _, s := range ps.r.Steps {
			if _, ok := s.(WriteFailureReporter[T]); !ok {
				continue
			}
			if owner, ok := s.(ConditionOwner); ok {
				for _, typ := range owner.Conditions() {
					restore(typ)
				}
			}
		}
		co.SetConditions(conds)
		for _, s := range ps.r.Steps {
			if rep, ok := s.(WriteFailureReporter[T]); ok {
				rep.WriteFailed(ps.req, w, werr)
			}
		}
		conds = co.GetConditions()
		gen := obj.GetGeneration()
		changed = conditions.Set(&conds, metav1.Condition{
			Type: conditions.TypeReady, Status: metav1.ConditionFalse, Reason: w.Reason(), Message: werr.Error(), ObservedGeneration: gen,
		}, metav1.Now())
		boundMessages(conds)
		co.SetConditions(conds)
		if err := ps.saveStatus(ctx); err != nil {
			if apierrors.IsConflict(err) {
				return ps.conflictRequeue("status after a failed " + string(w)), nil
			}
			ps.req.Log.Error(err, "writing the status that reports a failed engine write failed", "write", string(w))
		}
	}
	if changed {
		ps.event(corev1.EventTypeWarning, w.Reason(), string(w), "%s", werr.Error())
	}
	if apierrors.IsInvalid(werr) {
		return ctrl.Result{}, reconcile.TerminalError(werr)
	}
	return ctrl.Result{}, werr
}

// saveStatus writes the status subresource alone, when it changed.
func (ps *pass[T]) saveStatus(ctx context.Context) error {
	_, status, err := ps.diff()
	if err != nil || status == nil {
		return err
	}
	return ps.sendStatus(ctx, status)
}

// release writes the object without our finalizer; the object may be gone
// afterwards, which is success.
func (ps *pass[T]) release(ctx context.Context, policy Policy, res ctrl.Result, err error) (ctrl.Result, error) {
	if serr := ps.patchMain(ctx); serr != nil {
		switch {
		case apierrors.IsConflict(serr):
			return ps.conflictRequeue("release"), nil
		case apierrors.IsNotFound(serr):
		default:
			return ps.writeFailed(ctx, WriteRelease, serr)
		}
	}
	reason, note := EventCleanedUp, "cleaned up and released finalizer %q"
	if policy != PolicyManage {
		reason, note = EventDetached, "released finalizer %q without cleanup"
	}
	ps.event(corev1.EventTypeNormal, reason, "Cleanup", note, ps.r.Finalizer)
	ps.req.Log.V(1).Info("released finalizer", "finalizer", ps.r.Finalizer)
	return flow.Final(res, err)
}

// patchMain writes the changes to metadata and spec (everything but status),
// guarded by the resourceVersion the object was read with.
func (ps *pass[T]) patchMain(ctx context.Context) error {
	main, _, err := ps.diff()
	if err != nil || main == nil {
		return err
	}
	return ps.sendMain(ctx, main)
}

// save writes what changed: metadata and spec first, then the status
// subresource. gone reports that the object no longer exists.
func (ps *pass[T]) save(ctx context.Context) (gone bool, err error) {
	main, status, err := ps.diff()
	if err != nil {
		return false, err
	}
	if main != nil {
		if err := ps.sendMain(ctx, main); err != nil {
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			if apierrors.IsConflict(err) {
				return false, err
			}
			return false, &mainWriteError{err: err}
		}
	}
	if status != nil {
		if err := ps.sendStatus(ctx, status); err != nil {
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		}
	}
	return false, nil
}

// sendStatus writes status to the status subresource, guarded by the
// object's resourceVersion.
func (ps *pass[T]) sendStatus(ctx context.Context, status json.RawMessage) error {
	rv := ps.req.Object.GetResourceVersion()
	body, err := withResourceVersion(map[string]json.RawMessage{"status": status}, rv)
	if err != nil {
		return err
	}
	if err := ps.r.Client.Status().Patch(ctx, ps.req.Object, client.RawPatch(types.MergePatchType, body)); err != nil {
		return fmt.Errorf("writing status: %w", err)
	}
	ps.wroteOver(rv, ps.req.Object)
	return nil
}

func (ps *pass[T]) sendMain(ctx context.Context, main map[string]json.RawMessage) error {
	rv := ps.req.Original.GetResourceVersion()
	body, err := withResourceVersion(main, rv)
	if err != nil {
		return err
	}
	if err := ps.r.Client.Patch(ctx, ps.req.Object, client.RawPatch(types.MergePatchType, body)); err != nil {
		return fmt.Errorf("writing object: %w", err)
	}
	ps.wroteOver(rv, ps.req.Object)
	return nil
}

// wroteOver notes that a write of this pass replaced version rv of the
// object, when it did: after, the object the write returned, has another
// version. A write the server took for a no-op (every change pruned by the
// schema, or equal to what was stored) leaves the version as it was; the
// cache is then not behind, and rv must not be taken for a stale copy.
func (ps *pass[T]) wroteOver(rv string, after client.Object) {
	if after.GetResourceVersion() == rv {
		return
	}
	ps.overwritten = append(ps.overwritten, rv)
}

// diff computes the JSON merge patch from Original to Object and splits it
// into the part for the object (nil if empty) and the status (nil if
// unchanged).
func (ps *pass[T]) diff() (main map[string]json.RawMessage, status json.RawMessage, err error) {
	// Fast path: Object started as a deep copy of Original, so an untouched
	// object is deeply equal to it. Anything else is decided by the patch.
	if reflect.DeepEqual(ps.req.Original, ps.req.Object) {
		return nil, nil, nil
	}
	data, err := client.MergeFrom(ps.req.Original).Data(ps.req.Object)
	if err != nil {
		return nil, nil, fmt.Errorf("computing changes: %w", err)
	}
	if len(data) <= 2 { // "{}"
		return nil, nil, nil
	}
	var parts map[string]json.RawMessage
	if err := json.Unmarshal(data, &parts); err != nil {
		return nil, nil, fmt.Errorf("computing changes: %w", err)
	}
	status = parts["status"]
	delete(parts, "status")
	if len(parts) == 0 {
		parts = nil
	}
	return parts, status, nil
}

// withResourceVersion adds metadata.resourceVersion to a merge patch, so the
// API server refuses it with 409 Conflict if the object changed meanwhile.
func withResourceVersion(patch map[string]json.RawMessage, rv string) ([]byte, error) {
	meta := map[string]json.RawMessage{}
	if raw, ok := patch["metadata"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, fmt.Errorf("computing changes: %w", err)
		}
	}
	meta["resourceVersion"] = json.RawMessage(strconv.Quote(rv))
	rawMeta, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("computing changes: %w", err)
	}
	patch["metadata"] = rawMeta
	body, err := json.Marshal(patch)
	if err != nil {
		return nil, fmt.Errorf("computing changes: %w", err)
	}
	return body, nil
}
