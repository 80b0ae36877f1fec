package managed

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1 "k8s.io/api/core/v1"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/flow"
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
	// ReasonUnavailable: the external resource exists and was ready, and is
	// not ready now; or it is missing and may not be created.
	ReasonUnavailable = "Unavailable"
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
	ReasonInvalidPolicy = "InvalidPolicy"
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
)

// InvalidSpec marks err as caused by the object's spec: the step reports it
// in Synced (and Ready) with ReasonInvalidSpec and does not retry until the
// object changes.
func InvalidSpec(err error) error { return conditions.Terminal(ReasonInvalidSpec, err) }

// Step is the engine step that manages one external resource per object;
// make it with NewStep. It is a bosun.Step, bosun.Cleaner, bosun.Observer,
// bosun.ConditionOwner and bosun.Named.
//
// Do connects, observes, and then creates, updates or does nothing; Cleanup
// deletes and waits until Observe no longer finds the resource. The step
// returns a RequeueAfter on success (the poll interval, or a short interval
// while something is in progress), which in a flow.Sequential ends the
// steps after it: put it last, or arrange the steps with flow.Join.
type Step[T client.Object] struct {
	connector Connector[T]
	cfg       config
	metrics   *metricSet
	// failures remembers the failed creates of each object (by UID), so
	// that the watch events of the step's own annotation writes do not
	// turn into a create loop.
	failures sync.Map // types.UID -> createFailure
}

// createFailure is the last failed create of an object.
type createFailure struct {
	at       time.Time
	n        int   // consecutive failures
	gen      int64 // the object's generation at the failure
	terminal bool
	err      error // what the pass returned
}

// maxCreateBackoff caps the wait between two failed creates.
const maxCreateBackoff = 5 * time.Minute

// createBackoff returns how long after the n-th consecutive failed create
// the next one may be tried: the short interval, doubled for each further
// failure, at most maxCreateBackoff.
func createBackoff(short time.Duration, n int) time.Duration {
	d := short
	for i := 1; i < n && d < maxCreateBackoff; i++ {
		d *= 2
	}
	return min(d, maxCreateBackoff)
}

var (
	_ bosun.Step[client.Object]     = &Step[client.Object]{}
	_ bosun.Cleaner[client.Object]  = &Step[client.Object]{}
	_ bosun.Observer[client.Object] = &Step[client.Object]{}
	_ bosun.ConditionOwner          = &Step[client.Object]{}
	_ bosun.Named                   = &Step[client.Object]{}
)

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
	} {
		if *p.got <= 0 {
			*p.got = *p.def
		}
	}
	if cfg.outcomeAttempts < 1 {
		cfg.outcomeAttempts = 1
	}
	if cfg.nameFn == nil {
		cfg.nameFn = NameFromMetadata
	}
	return &Step[T]{connector: c, cfg: cfg, metrics: metricsFor(cfg.name)}
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
// resource alone as the management policies allow.
func (s *Step[T]) Do(ctx context.Context, req *bosun.Request[T]) (ctrl.Result, error) {
	obj := req.Object
	now := s.cfg.now()
	s.noteFirstReconcile(obj, now)
	pol, err := s.policies(obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	if ExternalName(obj) == "" && !s.cfg.providerNames {
		SetExternalName(obj, s.cfg.nameFn(obj))
	}
	cl, done, err := s.connect(ctx, req)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer done()

	target := obj
	if !pol.LateInitialize {
		// Late initialisation is not allowed: Observe works on a copy, and
		// whatever it fills in is dropped.
		target = obj.DeepCopyObject().(T)
	}
	obs, err := s.observe(ctx, cl, target)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !obs.Exists {
		return s.absent(ctx, req, cl, pol, now)
	}
	if obs.LateInitialized && pol.LateInitialize {
		req.Log.V(1).Info("spec late-initialised from the external resource", "externalName", ExternalName(obj))
	}

	details := obs.ConnectionDetails
	synced := ""
	updated := false
	if !obs.UpToDate {
		if pol.Update {
			drift := s.inSync(obj)
			up, err := call(s.cfg.name+" update", func() (Update, error) { return cl.Update(ctx, obj) })
			if err != nil {
				return ctrl.Result{}, s.fail(ReasonUpdateFailed, fmt.Errorf("updating external resource %q: %w", ExternalName(obj), err))
			}
			if drift {
				s.metrics.drift.Inc()
			}
			updated = true
			details = merge(details, up.ConnectionDetails)
			req.Log.Info("updated external resource", "externalName", ExternalName(obj), "drift", drift)
			req.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, EventUpdated, "Update", "updated external resource %q: %s", ExternalName(obj), obs.Diff)
		} else {
			synced = "the external resource differs from the spec, and the management policies do not allow Update"
		}
	}
	if err := s.publish(ctx, req, details); err != nil {
		return ctrl.Result{}, err
	}
	s.setAvailability(obj, obs.Available, now)
	s.setSynced(obj, synced)
	if updated || !obs.Available {
		return ctrl.Result{RequeueAfter: s.cfg.short}, nil
	}
	return ctrl.Result{RequeueAfter: s.poll(req)}, nil
}

// absent handles a resource that Observe did not find.
func (s *Step[T]) absent(ctx context.Context, req *bosun.Request[T], cl Client[T], pol Policies, now time.Time) (ctrl.Result, error) {
	obj := req.Object
	switch decideCreate(obj.GetAnnotations(), now, s.cfg.grace, !s.cfg.providerNames) {
	case guardIncomplete:
		return ctrl.Result{}, s.incomplete(obj)
	case guardWait:
		req.Log.V(1).Info("external resource not found within the creation grace period, looking again", "externalName", ExternalName(obj))
		s.setCondition(obj, s.cfg.available, metav1.ConditionFalse, ReasonCreating,
			"waiting for the external system to show the resource it created")
		s.setSynced(obj, "")
		return ctrl.Result{RequeueAfter: s.cfg.short}, nil
	}
	if v, ok := s.failures.Load(obj.GetUID()); ok && pol.Create {
		// A create failed lately. A terminal failure waits for a new
		// generation; another one for its backoff. Meanwhile the pass
		// reports the same error, so nothing is written and
		// controller-runtime's backoff applies.
		f := v.(createFailure)
		if f.terminal && f.gen == obj.GetGeneration() || !f.terminal && now.Before(f.at.Add(createBackoff(s.cfg.short, f.n))) {
			return ctrl.Result{}, f.err
		}
	}
	if !pol.Create {
		s.setCondition(obj, s.cfg.available, metav1.ConditionFalse, ReasonUnavailable,
			"the external resource does not exist")
		s.setCondition(obj, s.cfg.synced, metav1.ConditionFalse, ReasonExternalNotFound,
			fmt.Sprintf("external resource %q does not exist, and the management policies (%s) do not allow Create", ExternalName(obj), pol))
		return ctrl.Result{RequeueAfter: s.poll(req)}, nil
	}
	return s.create(ctx, req, cl)
}

// incomplete is the error of an object whose create may have leaked.
func (s *Step[T]) incomplete(obj T) error {
	err := fmt.Errorf("a create of the external resource started at %s and its outcome was never recorded, so a resource may exist "+
		"that the operator cannot find: check the external system for a resource made for %s %s/%s at that time, delete it "+
		"(or record its name in annotation %s), then remove annotation %s to let the operator go on",
		obj.GetAnnotations()[AnnotationCreatePending], kindOf(obj), obj.GetNamespace(), obj.GetName(), AnnotationExternalName, AnnotationCreatePending)
	return &conditions.Error{Type: s.cfg.synced, Reason: ReasonCreateIncomplete, Severity: conditions.SeverityError, Err: err}
}

// create commits the pending mark, creates, and records the outcome.
func (s *Step[T]) create(ctx context.Context, req *bosun.Request[T], cl Client[T]) (ctrl.Result, error) {
	obj := req.Object
	mark := map[string]string{AnnotationCreatePending: formatTime(s.cfg.now())}
	if n := ExternalName(obj); n != "" {
		mark[AnnotationExternalName] = n
	}
	if err := s.commit(ctx, req, mark); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			// Our copy is out of date, or the object is gone: no create
			// on the strength of it. The engine requeues quietly.
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, s.fail(ReasonRecordFailed, fmt.Errorf("recording a pending create: %w", err))
	}
	obj = req.Object
	before := ExternalName(obj)
	cr, cerr := call(s.cfg.name+" create", func() (Creation, error) { return cl.Create(ctx, obj) })
	outcome := map[string]string{}
	if cerr != nil {
		outcome[AnnotationCreateFailed] = formatTime(s.cfg.now())
	} else {
		outcome[AnnotationCreateSucceeded] = formatTime(s.cfg.now())
	}
	if after := ExternalName(obj); before != "" && after != before {
		// A name once set never changes.
		SetExternalName(obj, before)
	} else if before == "" && after != "" && cerr == nil {
		outcome[AnnotationExternalName] = after
	}
	recErr := s.record(ctx, req, outcome)
	if recErr != nil {
		req.Log.Error(recErr, "recording the outcome of a create failed", "created", cerr == nil)
	}
	if cerr != nil {
		err := s.fail(ReasonCreateFailed, fmt.Errorf("creating external resource %q: %w", before, cerr))
		f := createFailure{at: s.cfg.now(), n: 1, gen: obj.GetGeneration(), err: err}
		if v, ok := s.failures.Load(obj.GetUID()); ok {
			f.n = v.(createFailure).n + 1
		}
		_, sev, _ := conditions.FromError(err)
		f.terminal = sev == conditions.SeverityError
		s.failures.Store(obj.GetUID(), f)
		return ctrl.Result{}, err
	}
	s.failures.Delete(obj.GetUID())
	obj = req.Object
	req.Log.Info("created external resource", "externalName", ExternalName(obj))
	req.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, EventCreated, "Create", "created external resource %q", ExternalName(obj))
	// The details are published even when the outcome could not be
	// recorded: some (a generated password) only Create returns, and the
	// resource exists either way.
	pubErr := s.publish(ctx, req, cr.ConnectionDetails)
	if recErr != nil {
		return ctrl.Result{}, s.fail(ReasonRecordFailed, fmt.Errorf("recording the outcome of a create: %w", errors.Join(recErr, pubErr)))
	}
	if pubErr != nil {
		return ctrl.Result{}, pubErr
	}
	s.setCondition(obj, s.cfg.available, metav1.ConditionFalse, ReasonCreating, "the external resource was created and is not available yet")
	s.setSynced(obj, "")
	return ctrl.Result{RequeueAfter: s.cfg.short}, nil
}

// record writes the outcome of a create, retrying with backoff. A conflict
// means the object changed meanwhile; it is read again and the write
// repeated on the new version.
func (s *Step[T]) record(ctx context.Context, req *bosun.Request[T], outcome map[string]string) error {
	var err error
	wait := s.cfg.outcomeBackoff
	for attempt := 0; attempt < s.cfg.outcomeAttempts; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return errors.Join(err, ctx.Err())
			case <-time.After(wait):
			}
			wait *= 2
		}
		if err = s.commit(ctx, req, outcome); err == nil {
			return nil
		}
		if apierrors.IsConflict(err) {
			if rerr := s.reload(ctx, req); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
	}
	return err
}

// reload reads the object from the API server into req, keeping the
// conditions the pass has set so far.
func (s *Step[T]) reload(ctx context.Context, req *bosun.Request[T]) error {
	fresh := req.Original.DeepCopyObject().(T)
	if err := req.APIReader.Get(ctx, client.ObjectKeyFromObject(req.Object), fresh); err != nil {
		return fmt.Errorf("reading the object again: %w", err)
	}
	obj := fresh.DeepCopyObject().(T)
	if from, ok := any(req.Object).(conditions.Object); ok {
		if to, ok := any(obj).(conditions.Object); ok {
			to.SetConditions(from.GetConditions())
		}
	}
	if n := ExternalName(req.Object); n != "" && ExternalName(obj) == "" {
		SetExternalName(obj, n)
	}
	req.Original, req.Object = fresh, obj
	return nil
}

// commit writes the given annotation changes (an empty value deletes) to
// the object at once, guarded by the resourceVersion the pass knows, and
// updates req so that the engine's final save builds on the new version.
func (s *Step[T]) commit(ctx context.Context, req *bosun.Request[T], set map[string]string) error {
	next := req.Original.DeepCopyObject().(T)
	setAnnotations(next, set)
	if err := req.Client.Patch(ctx, next, client.MergeFromWithOptions(req.Original, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	req.Original = next
	setAnnotations(req.Object, set)
	req.Object.SetResourceVersion(next.GetResourceVersion())
	req.Object.SetManagedFields(next.GetManagedFields())
	return nil
}

// Cleanup deletes the external resource, unless the deletion or management
// policies say to leave it, and waits until Observe no longer finds it. The
// connection Secret is removed in every case.
func (s *Step[T]) Cleanup(ctx context.Context, req *bosun.Request[T]) (ctrl.Result, error) {
	obj := req.Object
	now := s.cfg.now()
	pol, err := s.policies(obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	del, err := s.deletionPolicy(obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	if del == DeletionOrphan || !pol.Delete {
		req.Log.V(1).Info("leaving the external resource in place", "deletionPolicy", string(del), "managementPolicies", pol.String())
		return ctrl.Result{}, s.unpublish(ctx, req)
	}
	g := decideCreate(obj.GetAnnotations(), now, s.cfg.grace, !s.cfg.providerNames)
	if g == guardIncomplete {
		return ctrl.Result{}, s.incomplete(obj)
	}
	if ExternalName(obj) == "" {
		// Nothing was ever named, so nothing was made.
		return ctrl.Result{}, s.gone(ctx, req, now)
	}
	cl, done, err := s.connect(ctx, req)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer done()
	obs, err := s.observe(ctx, cl, obj.DeepCopyObject().(T))
	if err != nil {
		return ctrl.Result{}, err
	}
	prev := s.condition(obj, s.cfg.available)
	deleting := prev != nil && prev.Reason == ReasonDeleting
	// "Not found" right after a create may be the external system lagging:
	// then Delete is asked for once anyway, and "not found" after that is
	// believed.
	if !obs.Exists && (g != guardWait || deleting) {
		return ctrl.Result{}, s.gone(ctx, req, now)
	}
	if !deleting {
		req.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, EventDeleting, "Delete", "deleting external resource %q", ExternalName(obj))
	}
	if _, err := call(s.cfg.name+" delete", func() (struct{}, error) { return struct{}{}, cl.Delete(ctx, obj) }); err != nil {
		return ctrl.Result{}, s.fail(ReasonDeleteFailed, fmt.Errorf("deleting external resource %q: %w", ExternalName(obj), err))
	}
	s.setCondition(obj, s.cfg.available, metav1.ConditionFalse, ReasonDeleting, "waiting for the external resource to be deleted")
	s.setSynced(obj, "")
	return ctrl.Result{RequeueAfter: s.cfg.short}, nil
}

// gone finishes a cleanup whose resource no longer exists.
func (s *Step[T]) gone(ctx context.Context, req *bosun.Request[T], now time.Time) error {
	if err := s.unpublish(ctx, req); err != nil {
		return err
	}
	s.failures.Delete(req.Object.GetUID())
	if ts := req.Object.GetDeletionTimestamp(); ts != nil {
		s.metrics.deletion.Observe(now.Sub(ts.Time).Seconds())
	}
	req.Log.V(1).Info("external resource gone", "externalName", ExternalName(req.Object))
	return nil
}

// Observe reports the external resource under the skip reconcile policy:
// it connects and observes, sets the conditions, and changes nothing else.
func (s *Step[T]) Observe(ctx context.Context, req *bosun.Request[T]) (ctrl.Result, error) {
	obj := req.Object
	now := s.cfg.now()
	s.noteFirstReconcile(obj, now)
	if ExternalName(obj) == "" && s.cfg.providerNames {
		s.setCondition(obj, s.cfg.available, metav1.ConditionFalse, ReasonUnavailable, "the external resource has no name yet")
		s.setSynced(obj, "")
		return ctrl.Result{RequeueAfter: s.poll(req)}, nil
	}
	target := obj.DeepCopyObject().(T)
	if ExternalName(target) == "" {
		SetExternalName(target, s.cfg.nameFn(target))
	}
	cl, done, err := s.connect(ctx, req)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer done()
	obs, err := s.observe(ctx, cl, target)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !obs.Exists {
		s.setCondition(obj, s.cfg.available, metav1.ConditionFalse, ReasonUnavailable, "the external resource does not exist")
	} else {
		s.setAvailability(obj, obs.Available, now)
	}
	s.setSynced(obj, "")
	return ctrl.Result{RequeueAfter: s.poll(req)}, nil
}

// connect calls the Connector and returns the client with the function that
// disconnects it.
func (s *Step[T]) connect(ctx context.Context, req *bosun.Request[T]) (Client[T], func(), error) {
	cl, err := call(s.cfg.name+" connect", func() (Client[T], error) { return s.connector.Connect(ctx, req.Object) })
	if err == nil && cl == nil {
		err = errors.New("the connector returned no client")
	}
	if err != nil {
		return nil, nil, s.fail(ReasonConnectFailed, fmt.Errorf("connecting to the external system: %w", err))
	}
	done := func() {
		d, ok := cl.(Disconnecter)
		if !ok {
			return
		}
		if _, err := call(s.cfg.name+" disconnect", func() (struct{}, error) { return struct{}{}, d.Disconnect(ctx) }); err != nil {
			req.Log.Error(err, "disconnecting from the external system failed")
		}
	}
	return cl, done, nil
}

func (s *Step[T]) observe(ctx context.Context, cl Client[T], obj T) (Observation, error) {
	obs, err := call(s.cfg.name+" observe", func() (Observation, error) { return cl.Observe(ctx, obj) })
	if err != nil {
		return obs, s.fail(ReasonObserveFailed, fmt.Errorf("observing external resource %q: %w", ExternalName(obj), err))
	}
	return obs, nil
}

// call runs fn, turning a panic into a *flow.PanicError.
func call[R any](name string, fn func() (R, error)) (r R, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &flow.PanicError{Action: name, Value: v, Stack: debug.Stack()}
		}
	}()
	return fn()
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

// poll returns the jittered poll interval of the request's object.
func (s *Step[T]) poll(req *bosun.Request[T]) time.Duration {
	d, bad := pollInterval(req.Object.GetAnnotations(), s.cfg.poll, s.cfg.minPoll)
	if bad {
		req.Log.V(1).Info("ignoring an invalid poll interval annotation", "annotation", AnnotationPollInterval, "value", req.Object.GetAnnotations()[AnnotationPollInterval])
	}
	return jitter(d, PollJitter, s.cfg.rand())
}

// condition returns obj's condition of type typ, or nil.
func (s *Step[T]) condition(obj T, typ string) *metav1.Condition {
	co, ok := any(obj).(conditions.Object)
	if !ok {
		return nil
	}
	return conditions.Find(co.GetConditions(), typ)
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

// setAvailability sets the Available condition from an observation of an
// existing resource, and records the time to Ready the first time it is.
func (s *Step[T]) setAvailability(obj T, available bool, now time.Time) {
	prev := s.condition(obj, s.cfg.available)
	if available {
		if prev == nil || prev.Status != metav1.ConditionTrue && prev.Reason != ReasonUnavailable {
			s.metrics.ready.Observe(now.Sub(obj.GetCreationTimestamp().Time).Seconds())
		}
		s.setCondition(obj, s.cfg.available, metav1.ConditionTrue, ReasonAvailable, "the external resource is available")
		return
	}
	if prev != nil && (prev.Status == metav1.ConditionTrue || prev.Reason == ReasonUnavailable) {
		s.setCondition(obj, s.cfg.available, metav1.ConditionFalse, ReasonUnavailable, "the external resource exists and is not available")
		return
	}
	s.setCondition(obj, s.cfg.available, metav1.ConditionFalse, ReasonCreating, "the external resource exists and is not available yet")
}

// inSync reports whether the last pass synced the current generation, so
// that a difference found now was made outside the operator (drift).
func (s *Step[T]) inSync(obj T) bool {
	c := s.condition(obj, s.cfg.synced)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == obj.GetGeneration()
}

// noteFirstReconcile records the time to first reconcile when the object
// has not been through the step before.
func (s *Step[T]) noteFirstReconcile(obj T, now time.Time) {
	c := s.condition(obj, s.cfg.synced)
	if c == nil || c.Reason == conditions.ReasonInitializing {
		s.metrics.first.Observe(now.Sub(obj.GetCreationTimestamp().Time).Seconds())
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
