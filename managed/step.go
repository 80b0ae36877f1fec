package managed

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/statusfield"
	"github.com/bosunkit/bosun/managed/changelog"
)

// Condition reasons the step writes.
const (
	// ReasonAvailable: the external resource is ready for use.
	ReasonAvailable = "Available"
	// ReasonCreating: the external resource is being created, or was
	// created and is not ready yet.
	ReasonCreating = "Creating"
	// ReasonDeleting: the external resource is being deleted.
	ReasonDeleting = "Deleting"
	// ReasonUpdating: the step is bringing the external resource in line
	// with the spec (a spec change, or drift), and has not yet observed it
	// up to date. It is a reason of Synced (False); Available keeps
	// reporting whether the resource is usable meanwhile.
	ReasonUpdating = "Updating"
	// ReasonUnavailable: the external resource exists and was ready, and is
	// not ready now; or it is missing and may not be created.
	ReasonUnavailable = "Unavailable"
	// ReasonWaitingForFinalizers: the object is being deleted, its
	// deletion order is DeletionOrderLast, and other finalizers still hold
	// it: the step deletes the external resource once they are gone.
	ReasonWaitingForFinalizers = "WaitingForFinalizers"
	// ReasonReconcileSuccess: the last pass did what was needed.
	ReasonReconcileSuccess = "ReconcileSuccess"
	// ReasonCreateIncomplete: a create was started and its outcome was never
	// recorded, and the step cannot find out what it made. A human must
	// check the external system.
	ReasonCreateIncomplete = "CreateIncomplete"
	// ReasonExternalNotFound: the external resource does not exist and the
	// management policies do not allow creating it.
	ReasonExternalNotFound = "ExternalNotFound"
	// ReasonInvalidSpec: the spec cannot be turned into an external
	// resource. Clients report it with InvalidSpec.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonInvalidPolicy: a management or deletion policy annotation holds
	// a value the step does not know.
	// The value is conditions.ReasonInvalidPolicy, the engine's for the
	// reconcile policy.
	ReasonInvalidPolicy = conditions.ReasonInvalidPolicy
	// ReasonConnectFailed: the Connector failed with an error that carries
	// no reason of its own.
	ReasonConnectFailed = "ConnectFailed"
	// ReasonObserveFailed: Observe failed with an error that carries no
	// reason of its own.
	ReasonObserveFailed = "ObserveFailed"
	// ReasonCreateFailed: Create failed with an error that carries no
	// reason of its own.
	ReasonCreateFailed = "CreateFailed"
	// ReasonUpdateFailed: Update failed with an error that carries no
	// reason of its own.
	ReasonUpdateFailed = "UpdateFailed"
	// ReasonDeleteFailed: Delete failed with an error that carries no
	// reason of its own.
	ReasonDeleteFailed = "DeleteFailed"
	// ReasonRecordFailed: the outcome of a Create could not be written to
	// the object.
	ReasonRecordFailed = "RecordCreateFailed"
	// ReasonConnectionSecretFailed: the connection Secret could not be
	// written, or belongs to something else.
	ReasonConnectionSecretFailed = "ConnectionSecretFailed"
	// ReasonExternalConflict: a resource exists under the external name
	// and is not this object's: it carries another object's owner mark, or
	// no mark and the step neither created it nor was asked to adopt it.
	// The step leaves it alone.
	ReasonExternalConflict = "ExternalResourceConflict"
	// ReasonCredentialsMissing: the connection Secret lacks credentials
	// that only Create and RepairCredentials return, so the resource is not
	// usable yet.
	ReasonCredentialsMissing = "CredentialsMissing"
	// ReasonCredentialRepairFailed: RepairCredentials failed with an error
	// that carries no reason of its own.
	ReasonCredentialRepairFailed = "CredentialRepairFailed"
)

// Event reasons the step records.
const (
	// EventCreated: the step created the external resource.
	EventCreated = "CreatedExternalResource"
	// EventUpdated: the step updated the external resource; the note holds
	// the Observation's Diff.
	EventUpdated = "UpdatedExternalResource"
	// EventDeleting: the step asked for the external resource's deletion.
	EventDeleting = "DeletingExternalResource"
	// EventLeftInPlace: the object was deleted and its external name
	// names a resource that is not the object's, which the step left in
	// place.
	EventLeftInPlace = "LeftExternalResource"
	// EventCredentialsRepaired: the connection Secret lacked credentials
	// and the step had the ExternalClient set new ones.
	EventCredentialsRepaired = "RepairedCredentials"
)

// InvalidSpec marks err as caused by the object's spec: the step reports it
// in Synced (and Ready) with ReasonInvalidSpec and does not retry until the
// object changes.
func InvalidSpec(err error) error { return conditions.Terminal(ReasonInvalidSpec, err) }

// Step is the engine step that manages one external resource per object;
// make it with NewStep. It is a bosun.Step, bosun.Cleaner, bosun.Observer,
// bosun.ConditionOwner, bosun.WriteFailureReporter, bosun.Named and
// bosun.Setuper.
//
// With a connection Secret (WithConnectionSecret), the step sets up a watch
// of the Secrets the objects control (Builder.Owns), so that a Secret
// deleted or changed by hand is written again. It also watches the objects
// themselves, adding nothing to the queue, to forget what it remembers of
// those that leave the manager's cache (see the package documentation).
//
// Do connects, observes, and then creates, updates or does nothing; Cleanup
// deletes and waits until Observe no longer finds the resource. The step
// returns a RequeueAfter on success (the poll interval, or a short interval
// while something is in progress), which in a flow.Sequential ends the
// steps after it: put it last, or arrange the steps with flow.Join.
type Step[T client.Object] struct {
	connector Connector[T]
	cfg       config
	// metrics are the step's series, by metricsKey.
	metrics sync.Map // metricsKey -> *metricSet
	// memory is what the step remembers of each object between passes:
	// the failed creates, updates and deletes it backs off from, so that
	// the watch events of its own writes do not turn into a loop of
	// calls, and the change-log entries not yet seen saved. It is
	// released when the object is gone or leaves the manager's cache.
	memory memory
}

// maxBackoff caps the wait between two failed calls of one operation.
const maxBackoff = 5 * time.Minute

// backoff returns how long after the n-th consecutive failure of an
// operation the next call may be made: the short interval, doubled for
// each further failure, at most maxBackoff.
func backoff(short time.Duration, n int) time.Duration {
	b := wait.Backoff{Duration: short, Factor: 2, Steps: n, Cap: maxBackoff}
	var d time.Duration
	for range max(n, 1) {
		d = b.Step()
	}
	return d
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

// SetupWithBuilder watches the connection Secrets, which the objects
// control, when the step publishes them; and watches the objects for the
// moment they leave the manager's cache (deleted, or handed to another
// replica), to forget what the step remembers of them. That watch adds
// nothing to the queue.
func (s *Step[T]) SetupWithBuilder(b *bosun.Builder[T]) error {
	if s.cfg.secretName != nil {
		b.Owns(&corev1.Secret{})
	}
	s.watchLeaving(b)
	return nil
}

// NewStep returns the step that manages, through c, the external resource
// of each object. Durations that are not positive keep their defaults. It
// panics if c is nil, a programming error.
func NewStep[T client.Object](c Connector[T], opts ...Option) *Step[T] {
	if c == nil {
		panic("managed: NewStep: nil Connector")
	}
	cfg := defaults()
	d := defaults()
	for _, o := range opts {
		o(&cfg)
	}
	for _, p := range []struct{ got, def *time.Duration }{
		{&cfg.poll, &d.poll}, {&cfg.minPoll, &d.minPoll}, {&cfg.short, &d.short}, {&cfg.grace, &d.grace}, {&cfg.outcomeBackoff, &d.outcomeBackoff},
		{&cfg.callTimeout, &d.callTimeout}, {&cfg.recordTimeout, &d.recordTimeout},
	} {
		if *p.got <= 0 {
			*p.got = *p.def
		}
	}
	if cfg.outcomeAttempts < 1 {
		cfg.outcomeAttempts = 1
	}
	if cfg.changeLogLength < 1 {
		cfg.changeLogLength = d.changeLogLength
	}
	if cfg.nameFn == nil {
		cfg.nameFn = NameFromNamespacedName
	}
	return &Step[T]{connector: c, cfg: cfg}
}

// Name returns the step's name (see WithName).
func (s *Step[T]) Name() string { return s.cfg.name }

// Conditions returns the types of the conditions the step owns: Synced and
// Available (see WithConditionTypes). The engine derives Ready from them:
// while the resource is being created, deleted or is unavailable, Ready is
// False with ReasonCreating, ReasonDeleting or ReasonUnavailable; when an
// error stops the step, Synced and Ready are False with the error's reason.
func (s *Step[T]) Conditions() []string { return []string{s.cfg.synced, s.cfg.available} }

// Do connects, observes, and creates, updates or leaves the external
// resource alone as the management policies allow. A resource under the
// external name that is not the object's (see the package documentation)
// is left alone, and reported in Synced with ReasonExternalConflict.
func (s *Step[T]) Do(ctx context.Context, req *bosun.Pass[T]) (ctrl.Result, error) {
	s.restoreChanges(req)
	obj := req.Object
	now := s.cfg.now()
	s.noteFirstReconcile(req, now)
	pol, err := s.policies(obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := s.checkSecretName(obj); err != nil {
		return ctrl.Result{}, err
	}
	cl, done, err := s.connect(ctx, req)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer done()
	if wait, res, err := s.pollOperation(ctx, req, cl); wait {
		return res, err
	}

	c := claimOf(recorded(obj, s.memory.get(obj.GetUID())))
	// Observe works on a copy: the status it writes is kept unless the
	// resource is another object's; the spec it fills in only if the
	// resource proves to be the object's and the policies allow
	// LateInitialize.
	target := s.named(obj)
	name := ExternalName(target)
	obs, err := s.observe(ctx, req, cl, target)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !obs.Exists {
		keepStatus(obj, target)
		return s.absent(ctx, req, cl, pol, now, name)
	}
	if err := s.ours(obj, name, obs, pol, c); err != nil {
		s.setCondition(obj, s.cfg.available, metav1.ConditionFalse, ReasonUnavailable, "the resource under the external name is not this object's")
		return ctrl.Result{}, err
	}
	if obs.LateInitialized && pol.LateInitialize {
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(target).Elem())
		req.Log.V(1).Info("spec late-initialised from the external resource", "externalName", name)
	} else {
		keepStatus(obj, target)
		if ExternalName(obj) == "" {
			SetExternalName(obj, name)
		}
	}

	details := obs.ConnectionDetails
	note := ""
	// updating: an Update of the spec is under way, asked for by this
	// pass or lately; again is how soon the next one is due.
	updating, again := false, s.cfg.short
	switch {
	case obs.UpToDate:
		s.memory.change(obj.GetUID(), func(m *memo) { m.update = nil })
	case !pol.Update:
		note = "the external resource differs from the spec, and the management policies do not allow Update"
	default:
		updating = true
		again, details, err = s.update(ctx, req, cl, obs, name, now)
		if err != nil {
			return ctrl.Result{}, err
		}
		obj = req.Object
	}
	details, err = s.credentials(ctx, req, cl, pol, details)
	if err != nil {
		return ctrl.Result{}, err
	}
	wctx, cancel := s.durable(ctx)
	defer cancel()
	if err := s.publish(wctx, req, details); err != nil {
		return ctrl.Result{}, err
	}
	s.setAvailability(req, obj, obs.Available, now, true)
	if updating {
		// Synced again once an observation finds the resource up to date.
		s.setCondition(obj, s.cfg.synced, metav1.ConditionFalse, ReasonUpdating,
			fmt.Sprintf("updating %s to the spec: %s", describe(name), obs.Diff))
	} else {
		s.setSynced(obj, note)
	}
	switch {
	case updating:
		return ctrl.Result{RequeueAfter: again}, nil
	case !obs.Available:
		return ctrl.Result{RequeueAfter: s.cfg.short}, nil
	}
	return ctrl.Result{RequeueAfter: s.poll(req)}, nil
}

// update brings the external resource, found to differ from the spec, to
// the spec. When this generation's Update was asked for lately it waits
// for the external system to apply it (a failed one keeps its error
// meanwhile); otherwise it calls Update. It returns how soon the next
// Update is due and the connection details, those Update returned merged
// in.
func (s *Step[T]) update(ctx context.Context, req *bosun.Pass[T], cl ExternalClient[T], obs Observation, name string, now time.Time) (time.Duration, ConnectionDetails, error) {
	obj := req.Object
	uid := obj.GetUID()
	details := obs.ConnectionDetails
	prev := s.memory.get(uid).update
	if wait := s.updateWait(prev, obj.GetGeneration(), now); wait > 0 {
		if prev.err != nil {
			return 0, nil, prev.err
		}
		return wait, details, nil
	}
	// An Update asked for again while the last one of the same generation
	// is still being applied is logged and counted once.
	repeat := prev != nil && prev.err == nil && prev.gen == obj.GetGeneration()
	drift := s.inSync(obj)
	up, err := callExternal(ctx, s, req, OpUpdate, obj, func(ctx context.Context) (UpdateResult, error) { return cl.Update(ctx, obj) })
	outcome := outcomeOf(err)
	if err == nil && up.Operation != "" {
		outcome = changelog.OutcomeStarted
	}
	if !repeat || err != nil {
		s.logChange(req, OpUpdate, name, outcome, err)
	}
	if err != nil {
		err = s.fail(ReasonUpdateFailed, fmt.Errorf("updating %s: %w", describe(name), err))
		_, sev, _ := conditions.FromError(err)
		s.memory.change(uid, func(m *memo) {
			m.update = failed(m.update, s.cfg.now(), obj.GetGeneration(), sev == conditions.SeverityError, err)
		})
		return 0, nil, err
	}
	s.memory.change(uid, func(m *memo) { m.update = &attempt{at: s.cfg.now(), gen: obj.GetGeneration()} })
	if up.Operation != "" {
		if err := s.startOperation(ctx, req, Operation{Kind: OpUpdate, Token: up.Operation}); err != nil {
			return 0, nil, err
		}
		obj = req.Object
	}
	if drift && !repeat {
		s.metricsFor(req).drift.Inc()
	}
	req.Log.Info("updated external resource", "externalName", name, "drift", drift)
	req.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, EventUpdated, "Update", "updated external resource %q: %s", name, obs.Diff)
	return s.cfg.short, merge(details, up.ConnectionDetails), nil
}

// Observe reports the external resource under the skip reconcile policy:
// it connects and observes, sets the conditions, and changes nothing else.
// Synced is False with conditions.ReasonReconcilePaused, Available reports
// what Observe found, and so Ready follows availability.
func (s *Step[T]) Observe(ctx context.Context, req *bosun.Pass[T]) (ctrl.Result, error) {
	s.restoreChanges(req)
	obj := req.Object
	now := s.cfg.now()
	s.noteFirstReconcile(req, now)
	paused := fmt.Sprintf("the reconcile policy %q only observes the external resource: nothing is created, updated or deleted", req.Policy)
	if ExternalName(obj) == "" && s.cfg.providerNames {
		s.setCondition(obj, s.cfg.available, metav1.ConditionFalse, ReasonUnavailable, "the external resource has no name yet")
		s.setPaused(obj, paused)
		return ctrl.Result{RequeueAfter: s.poll(req)}, nil
	}
	target := s.named(obj)
	cl, done, err := s.connect(ctx, req)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer done()
	obs, err := s.observe(ctx, req, cl, target)
	if err != nil {
		return ctrl.Result{}, err
	}
	switch {
	case !obs.Exists:
		keepStatus(obj, target)
		s.setCondition(obj, s.cfg.available, metav1.ConditionFalse, ReasonUnavailable, "the external resource does not exist")
	case obs.Owner != "" && obs.Owner != Identity(obj):
		s.setCondition(obj, s.cfg.available, metav1.ConditionFalse, ReasonUnavailable, "the resource under the external name is not this object's")
		return ctrl.Result{}, s.ours(obj, ExternalName(target), obs, ObserveOnly(), claim{})
	default:
		// The status Observe wrote is kept; the spec never is.
		keepStatus(obj, target)
		s.setAvailability(req, obj, obs.Available, now, false)
	}
	s.setPaused(obj, paused)
	return ctrl.Result{RequeueAfter: s.poll(req)}, nil
}

// WriteFailed reports in Synced, with reason w.Reason(), that the engine's
// write w of the object failed with err: for instance a spec that Observe
// late-initialised and the API server refused. The engine calls it before
// it writes the status.
func (s *Step[T]) WriteFailed(req *bosun.Pass[T], w bosun.EngineWrite, err error) {
	s.setCondition(req.Object, s.cfg.synced, metav1.ConditionFalse, w.Reason(),
		fmt.Sprintf("the engine could not write the object (%s): %v", w, err))
}

// credentials returns details with the credentials the connection Secret
// lacks: when the ExternalClient is a CredentialRepairer, the policies allow Update
// and a key it names is neither in details nor in the Secret, it calls
// RepairCredentials. Until that works, Available is False with
// ReasonCredentialsMissing.
func (s *Step[T]) credentials(ctx context.Context, req *bosun.Pass[T], cl ExternalClient[T], pol Policies, details ConnectionDetails) (ConnectionDetails, error) {
	rep, ok := cl.(CredentialRepairer[T])
	if !ok || !pol.Update || s.cfg.secretName == nil {
		return details, nil
	}
	obj := req.Object
	secret := s.cfg.secretName(obj)
	if secret == "" {
		return details, nil
	}
	keys := rep.CredentialKeys()
	missing, err := s.missingKeys(ctx, req.Client, obj, secret, keys, details)
	if err == nil && len(missing) > 0 {
		// The cache may not show the step's own last write of the
		// Secret yet: ask the API server before replacing credentials.
		missing, err = s.missingKeys(ctx, req.APIReader, obj, secret, keys, details)
	}
	if err != nil {
		return nil, s.fail(ReasonConnectionSecretFailed, err)
	}
	uid := obj.GetUID()
	prev := s.memory.get(uid).repair
	if len(missing) == 0 {
		if prev != nil {
			s.memory.change(uid, func(m *memo) { m.repair = nil })
		}
		return details, nil
	}
	lacking := func() {
		s.setCondition(obj, s.cfg.available, metav1.ConditionFalse, ReasonCredentialsMissing,
			fmt.Sprintf("connection secret %s lacks %s", secret, strings.Join(missing, ", ")))
	}
	now := s.cfg.now()
	if prev != nil && now.Before(prev.at.Add(backoff(s.cfg.short, prev.n))) {
		// A repair failed lately: wait for its backoff, with its error.
		lacking()
		return nil, prev.err
	}
	name := ExternalName(obj)
	req.Log.Info("connection secret lacks credentials, repairing them", "externalName", name, "secret", secret, "keys", missing)
	creds, err := callExternal(ctx, s, req, OpRepairCredentials, obj, func(ctx context.Context) (ConnectionDetails, error) {
		return rep.RepairCredentials(ctx, obj)
	})
	s.logChange(req, OpRepairCredentials, name, outcomeOf(err), err)
	if err != nil {
		lacking()
		err = s.fail(ReasonCredentialRepairFailed, fmt.Errorf("repairing the credentials of %s: %w", describe(name), err))
		s.memory.change(uid, func(m *memo) { m.repair = failed(m.repair, s.cfg.now(), obj.GetGeneration(), false, err) })
		return nil, err
	}
	s.memory.change(uid, func(m *memo) { m.repair = nil })
	req.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, EventCredentialsRepaired, "RepairCredentials",
		"connection secret %s lacked %s: set new credentials on external resource %q", secret, strings.Join(missing, ", "), name)
	return merge(details, creds), nil
}

// missingKeys returns the keys that neither details nor the connection
// Secret, read through r, hold. A Secret that the object does not control
// counts as holding everything: publishing to it fails anyway.
func (s *Step[T]) missingKeys(ctx context.Context, r client.Reader, obj T, secret string, keys []string, details ConnectionDetails) ([]string, error) {
	sec := &corev1.Secret{}
	err := r.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: secret}, sec)
	switch {
	case apierrors.IsNotFound(err):
		sec = &corev1.Secret{}
	case err != nil:
		return nil, fmt.Errorf("reading connection secret %s: %w", secret, err)
	case !metav1.IsControlledBy(sec, obj):
		return nil, nil
	}
	var missing []string
	for _, k := range keys {
		if len(details[k]) == 0 && len(sec.Data[k]) == 0 {
			missing = append(missing, k)
		}
	}
	return missing, nil
}

// checkSecretName reports, as an invalid spec, a connection Secret name
// that no Secret can have: the details could never be published, and each
// pass would make the resource, or set new credentials on it, in vain.
func (s *Step[T]) checkSecretName(obj T) error {
	if s.cfg.secretName == nil {
		return nil
	}
	name := s.cfg.secretName(obj)
	if name == "" {
		return nil
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		if len(name) > validation.DNS1123SubdomainMaxLength {
			name = fmt.Sprintf("%.32s... (%d characters)", name, len(name))
		}
		return s.fail(ReasonInvalidSpec, InvalidSpec(fmt.Errorf("the connection secret name %q is not a valid Secret name: %s", name, strings.Join(errs, "; "))))
	}
	return nil
}

// fail turns err into an error about the Synced condition. An error that
// carries a reason keeps it, and its severity; others get reason.
func (s *Step[T]) fail(reason string, err error) error {
	if apierrors.IsConflict(err) {
		return err
	}
	r, sev, _ := conditions.FromError(err)
	if r != conditions.ReasonError {
		reason = r
	}
	return &conditions.Error{Type: s.cfg.synced, Reason: reason, Severity: sev, Err: err}
}

// policies returns the management policies of obj.
func (s *Step[T]) policies(obj T) (Policies, error) {
	v, ok := obj.GetAnnotations()[AnnotationManagementPolicies]
	if !ok {
		return s.cfg.policies, nil
	}
	p, err := ParsePolicies(v)
	if err != nil {
		return Policies{}, invalidPolicy(s.cfg.synced, fmt.Errorf("annotation %s: %w", AnnotationManagementPolicies, err))
	}
	return p, nil
}

// deletionPolicy returns the deletion policy of obj.
func (s *Step[T]) deletionPolicy(obj T) (DeletionPolicy, error) {
	v, ok := obj.GetAnnotations()[AnnotationDeletionPolicy]
	if !ok {
		return s.cfg.deletion, nil
	}
	p, err := ParseDeletionPolicy(v)
	if err != nil {
		return "", invalidPolicy(s.cfg.synced, fmt.Errorf("annotation %s: %w", AnnotationDeletionPolicy, err))
	}
	return p, nil
}

// deletionOrder returns the deletion order of obj.
func (s *Step[T]) deletionOrder(obj T) (DeletionOrder, error) {
	v, ok := obj.GetAnnotations()[AnnotationDeletionOrder]
	if !ok {
		return s.cfg.order, nil
	}
	o, err := ParseDeletionOrder(v)
	if err != nil {
		return "", invalidPolicy(s.cfg.synced, fmt.Errorf("annotation %s: %w", AnnotationDeletionOrder, err))
	}
	return o, nil
}

// poll returns the jittered poll interval of the request's object.
func (s *Step[T]) poll(req *bosun.Pass[T]) time.Duration {
	d, bad := pollInterval(req.Object.GetAnnotations(), s.cfg.poll, s.cfg.minPoll)
	if bad {
		req.Log.V(1).Info("ignoring an invalid poll interval annotation", "annotation", AnnotationPollInterval, "value", req.Object.GetAnnotations()[AnnotationPollInterval])
	}
	return jitter(d, PollJitter, s.cfg.rand())
}

// setCondition sets a condition of obj, when its type keeps conditions.
func (s *Step[T]) setCondition(obj T, typ string, status metav1.ConditionStatus, reason, msg string) {
	co, ok := any(obj).(conditions.Object)
	if !ok {
		return
	}
	conds := co.GetConditions()
	conditions.Set(&conds, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: obj.GetGeneration(),
	}, metav1.NewTime(s.cfg.now()))
	co.SetConditions(conds)
}

// setSynced marks the pass a success, with note as the message if any.
func (s *Step[T]) setSynced(obj T, note string) {
	if note == "" {
		note = "the external resource is reconciled"
	}
	s.setCondition(obj, s.cfg.synced, metav1.ConditionTrue, ReasonReconcileSuccess, note)
}

// setPaused marks Synced False with conditions.ReasonReconcilePaused: the
// step changes nothing, by choice. Ready does not count it.
func (s *Step[T]) setPaused(obj T, why string) {
	s.setCondition(obj, s.cfg.synced, metav1.ConditionFalse, conditions.ReasonReconcilePaused, why)
}

// setAvailability sets the Available condition from an observation of an
// existing resource. Which reason a resource that is not available gets
// comes from the object's annotations, never from the condition itself:
// ReasonCreating while the step's own create of it has never been seen
// available (no AnnotationFirstAvailable), ReasonUnavailable otherwise.
// The first time the resource is available, and mark allows it (the pass
// may write the object's metadata), the step records
// AnnotationFirstAvailable and the time to Ready.
func (s *Step[T]) setAvailability(req *bosun.Pass[T], obj T, available bool, now time.Time, mark bool) {
	ann := obj.GetAnnotations()
	_, seen := ann[AnnotationFirstAvailable]
	if available {
		if !seen && mark {
			setAnnotations(obj, map[string]string{AnnotationFirstAvailable: formatTime(now)})
			s.metricsFor(req).ready.Observe(now.Sub(obj.GetCreationTimestamp().Time).Seconds())
		}
		s.setCondition(obj, s.cfg.available, metav1.ConditionTrue, ReasonAvailable, "the external resource is available")
		return
	}
	if !seen && createdHere(ann) {
		s.setCondition(obj, s.cfg.available, metav1.ConditionFalse, ReasonCreating, "the external resource exists and is not available yet")
		return
	}
	s.setCondition(obj, s.cfg.available, metav1.ConditionFalse, ReasonUnavailable, "the external resource exists and is not available")
}

// updateWait returns how long the next Update of generation gen must
// wait after prev, the last Update (nil for none): the short interval, or
// the backoff of its failures; for ever (a day, for the requeue) after a
// terminal failure of the same generation. An Update of a new generation
// waits for nothing.
func (s *Step[T]) updateWait(prev *attempt, gen int64, now time.Time) time.Duration {
	if prev == nil || prev.gen != gen {
		return 0
	}
	if prev.terminal {
		return 24 * time.Hour
	}
	interval := s.cfg.short
	if prev.err != nil {
		interval = backoff(s.cfg.short, prev.n)
	}
	return max(min(prev.at.Add(interval).Sub(now), interval), 0)
}

// inSync reports whether the engine has already been through the current
// generation (status.observedGeneration), so that a difference found now
// was made outside the operator (drift) rather than by a spec change.
func (s *Step[T]) inSync(obj T) bool {
	g, ok := statusfield.ObservedGeneration(obj)
	return ok && g == obj.GetGeneration()
}

// noteFirstReconcile records the time to first reconcile when the engine
// has never finished a pass over the object (status.observedGeneration is
// unset; for types without it, when the object has no external name yet).
func (s *Step[T]) noteFirstReconcile(req *bosun.Pass[T], now time.Time) {
	obj := req.Object
	g, ok := statusfield.ObservedGeneration(obj)
	if ok && g == 0 || !ok && ExternalName(obj) == "" {
		s.metricsFor(req).first.Observe(now.Sub(obj.GetCreationTimestamp().Time).Seconds())
	}
}

// kindOf returns the kind of obj for messages: its TypeMeta kind, else its
// Go type.
func kindOf(obj client.Object) string {
	if k := obj.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	return fmt.Sprintf("%T", obj)
}
