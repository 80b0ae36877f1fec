package managed

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/statusfield"
	"github.com/bosunkit/bosun/managed/changelog"
)

// actor is the stage of Do that acts on a decision: it creates, updates
// and repairs credentials, and takes what Observe found into the object.
type actor[T client.Object] struct {
	calls  *caller[T]
	ops    *poller[T]
	write  *writer[T]
	secret *secrets[T]
	log    *changes[T]
	rec    *recorder[T]
	meters *meters[T]
	// memory holds the failures the next calls back off from, and the
	// last Update of a generation.
	memory *memory
	// providerNames: the external system names the resources
	// (WithProviderNames). short is how soon an object whose resource is
	// being created or updated is looked at again.
	providerNames bool
	short         time.Duration
	now           func() time.Time
	// keys are where the step keeps its annotations.
	keys recordKeys
}

// newActor returns the actor of a step configured by cfg, made of its
// other stages; it remembers in m.
func newActor[T client.Object](cfg *config, calls *caller[T], ops *poller[T], write *writer[T], secret *secrets[T], log *changes[T], rec *recorder[T], meters *meters[T], m *memory) *actor[T] {
	return &actor[T]{
		calls: calls, ops: ops, write: write, secret: secret, log: log, rec: rec, meters: meters, memory: m,
		providerNames: cfg.providerNames, short: cfg.short, now: cfg.now, keys: cfg.keys,
	}
}

// adopt takes into the object what Observe found of a resource that is the
// object's: the whole copy when late initialisation applies (lateInit),
// else the status Observe wrote, and the external name when the object
// records none yet.
func (a *actor[T]) adopt(req *bosun.Pass[T], target T, name string, lateInit bool) {
	obj := req.Object
	if lateInit {
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(target).Elem())
		req.Log.V(1).Info("spec late-initialised from the external resource", "externalName", name)
		return
	}
	keepStatus(obj, target)
	if a.keys.name(obj) == "" {
		a.keys.setName(obj, name)
	}
}

// sync acts on a decision about a resource that is the object's: it
// updates it, or waits for an update under way, repairs missing
// credentials and publishes the connection details. It returns how soon an
// update under way is due again.
func (a *actor[T]) sync(ctx context.Context, req *bosun.Pass[T], o *observed[T], d decision) (time.Duration, error) {
	details, again := o.obs.ConnectionDetails, a.short
	switch d.action {
	case actReport:
		a.memory.change(req.Object, func(m *memo) { m.update = nil })
	case actUpdateBackoff:
		// A failed Update of this generation keeps its error meanwhile.
		return 0, o.facts.memo.update.err
	case actUpdateWait:
		again = d.wait
	case actUpdate:
		var err error
		if again, details, err = a.update(ctx, req, o.cl, o.obs, o.name); err != nil {
			return 0, err
		}
	}
	details, err := a.credentials(ctx, req, o.cl, o.facts.pol, details)
	if err != nil {
		return 0, err
	}
	wctx, cancel := a.write.durable(ctx)
	defer cancel()
	return again, a.secret.publish(wctx, req, details)
}

// update calls Update on the external resource name, found to differ from
// the spec as obs says. It returns how soon the next Update is due and the
// connection details, those Update returned merged in.
func (a *actor[T]) update(ctx context.Context, req *bosun.Pass[T], cl ExternalClient[T], obs Observation, name string) (time.Duration, ConnectionDetails, error) {
	obj := req.Object
	prev := a.memory.get(obj).update
	// An Update asked for again while the last one of the same generation
	// is still being applied is logged and counted once.
	repeat := prev != nil && prev.err == nil && prev.gen == obj.GetGeneration()
	drift := a.inSync(obj)
	up, err := callExternal(ctx, a.calls, req, opUpdate, obj, func(ctx context.Context) (UpdateResult, error) { return cl.Update(ctx, obj) })
	outcome := outcomeOf(err)
	if err == nil && up.Operation != "" {
		outcome = changelog.OutcomeStarted
	}
	if !repeat || err != nil {
		a.log.add(req, opUpdate, name, outcome, err)
	}
	if err != nil {
		err = a.rec.fail(ReasonUpdateFailed, fmt.Errorf("updating %s: %w", describe(name), err))
		_, sev, _ := conditions.FromError(err)
		a.memory.change(obj, func(m *memo) {
			m.update = failed(m.update, a.now(), obj.GetGeneration(), sev == conditions.SeverityError, err)
		})
		return 0, nil, err
	}
	a.memory.change(obj, func(m *memo) { m.update = &attempt{at: a.now(), gen: obj.GetGeneration()} })
	if up.Operation != "" {
		if err := a.ops.start(ctx, req, Operation{Kind: opUpdate, Token: up.Operation}); err != nil {
			return 0, nil, err
		}
		obj = req.Object
	}
	if drift && !repeat {
		a.meters.of(req).drift.Inc()
	}
	req.Log.Info("updated external resource", "externalName", name, "drift", drift)
	req.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, string(ReasonUpdatedExternalResource), "Update", "updated external resource %q: %s", name, obs.Diff)
	return a.short, merge(obs.ConnectionDetails, up.ConnectionDetails), nil
}

// inSync reports whether the engine has already been through the current
// generation (status.observedGeneration), so that a difference found now
// was made outside the operator (drift) rather than by a spec change.
func (a *actor[T]) inSync(obj T) bool {
	g, ok := statusfield.ObservedGeneration(obj)
	return ok && g == obj.GetGeneration()
}

// credentials returns details with the credentials the connection Secret
// lacks: when the ExternalClient is a CredentialRepairer, the policies allow Update
// and a key it names is neither in details nor in the Secret, it calls
// RepairCredentials. Until that works, Available is False with
// ReasonCredentialsMissing.
func (a *actor[T]) credentials(ctx context.Context, req *bosun.Pass[T], cl ExternalClient[T], pol Policies, details ConnectionDetails) (ConnectionDetails, error) {
	rep, ok := cl.(CredentialRepairer[T])
	if !ok || !pol.Update {
		return details, nil
	}
	obj := req.Object
	secret := a.secret.nameOf(obj)
	if secret == "" {
		return details, nil
	}
	missing, err := a.secret.missing(ctx, req, secret, rep.CredentialKeys(), details)
	if err != nil {
		return nil, err
	}
	prev := a.memory.get(obj).repair
	if len(missing) == 0 {
		if prev != nil {
			a.memory.change(obj, func(m *memo) { m.repair = nil })
		}
		return details, nil
	}
	lacking := func() {
		a.rec.unavailable(obj, ReasonCredentialsMissing,
			fmt.Sprintf("connection secret %s lacks %s", secret, strings.Join(missing, ", ")))
	}
	if prev != nil && a.now().Before(prev.at.Add(backoff(a.short, prev.n))) {
		// A repair failed lately: wait for its backoff, with its error.
		lacking()
		return nil, prev.err
	}
	name := a.keys.name(obj)
	req.Log.Info("connection secret lacks credentials, repairing them", "externalName", name, "secret", secret, "keys", missing)
	creds, err := callExternal(ctx, a.calls, req, opRepairCredentials, obj, func(ctx context.Context) (ConnectionDetails, error) {
		return rep.RepairCredentials(ctx, obj)
	})
	a.log.add(req, opRepairCredentials, name, outcomeOf(err), err)
	if err != nil {
		lacking()
		err = a.rec.fail(ReasonCredentialRepairFailed, fmt.Errorf("repairing the credentials of %s: %w", describe(name), err))
		a.memory.change(obj, func(m *memo) { m.repair = failed(m.repair, a.now(), obj.GetGeneration(), false, err) })
		return nil, err
	}
	a.memory.change(obj, func(m *memo) { m.repair = nil })
	req.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, string(ReasonRepairedCredentials), "RepairCredentials",
		"connection secret %s lacked %s: set new credentials on external resource %q", secret, strings.Join(missing, ", "), name)
	return merge(details, creds), nil
}

// create commits the pending mark (with the external name, or, for names
// the external system assigns, without the name of a resource that is
// gone), creates, publishes what Create returned and records the outcome.
// The last two writes use a context that survives a stop of the manager.
func (a *actor[T]) create(ctx context.Context, req *bosun.Pass[T], cl ExternalClient[T], name string) (ctrl.Result, error) {
	if a.providerNames {
		// The name recorded, if any, is of a resource that is gone; Create
		// assigns the next.
		name = ""
	}
	mark := map[string]string{AnnotationCreatePending: formatTime(a.now()), AnnotationExternalName: name, annotationFirstAvailable: ""}
	if err := a.write.commit(ctx, req, mark); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			// Our copy is out of date, or the object is gone: no create
			// on the strength of it. The engine requeues quietly.
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, a.rec.fail(ReasonRecordCreateFailed, fmt.Errorf("recording a pending create: %w", err))
	}
	obj := req.Object
	cr, cerr := callExternal(ctx, a.calls, req, opCreate, obj, func(ctx context.Context) (Creation, error) { return cl.Create(ctx, obj) })
	assigned := a.keys.name(obj)
	if assigned != name && (!a.providerNames || cerr != nil) {
		// A name the step chose never changes; a name the external
		// system gave a create that failed names nothing.
		a.keys.setName(obj, name)
	}
	if cerr == nil && a.providerNames && assigned == "" {
		// Nothing recorded would let a later pass find what was made:
		// the pending mark stays the newest, and the next pass stops.
		return ctrl.Result{}, a.rec.unnamed()
	}
	logged := name
	if cerr == nil && a.providerNames {
		logged = assigned
	}
	outcome := outcomeOf(cerr)
	if cerr == nil && cr.Operation != "" {
		outcome = changelog.OutcomeStarted
	}
	a.log.add(req, opCreate, logged, outcome, cerr)

	pubErr, recErr := a.recordCreate(ctx, req, cr, cerr, assigned)
	obj = req.Object
	if cerr != nil {
		return ctrl.Result{}, a.createFailed(req, name, cerr, recErr)
	}
	a.memory.change(obj, func(m *memo) { m.create = nil })
	req.Log.Info("created external resource", "externalName", a.keys.name(obj))
	req.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, string(ReasonCreatedExternalResource), "Create", "created external resource %q", a.keys.name(obj))
	if recErr != nil {
		return ctrl.Result{}, a.rec.fail(ReasonRecordCreateFailed, fmt.Errorf("recording the outcome of a create: %w", errors.Join(recErr, pubErr)))
	}
	if pubErr != nil {
		return ctrl.Result{}, pubErr
	}
	msg := "the external resource was created and is not available yet"
	if cr.Operation != "" {
		msg = "the external system is creating the resource"
	}
	a.rec.unavailable(obj, ReasonCreating, msg)
	a.rec.setSynced(obj, "")
	return ctrl.Result{RequeueAfter: a.short}, nil
}

// recordCreate publishes what a successful Create returned and records
// the create's outcome on the object (nothing for an outcome unknown),
// with a context that survives a stop of the manager. It returns the
// errors of the publish and of the record.
func (a *actor[T]) recordCreate(ctx context.Context, req *bosun.Pass[T], cr Creation, cerr error, assigned string) (pubErr, recErr error) {
	wctx, cancel := a.write.durable(ctx)
	defer cancel()
	if cerr == nil && a.providerNames {
		// The name is all that finds what Create made: save it first, on
		// its own, so that a stop or a failed write after this one leaves
		// an object whose next pass looks for the resource under it
		// rather than stopping with CreateIncomplete. The outcome below
		// carries it again.
		if err := a.write.save(wctx, req, map[string]string{AnnotationExternalName: assigned}); err != nil {
			req.Log.Error(err, "saving the name the external system assigned failed", "externalName", assigned)
		}
	}
	record := map[string]string{}
	switch {
	case cerr == nil:
		// Publish before recording: some details (a generated password)
		// only Create returns, and a stop between the two writes is the
		// crash window, in which the next pass adopts the resource with
		// the Secret complete.
		pubErr = a.secret.publish(wctx, req, cr.ConnectionDetails)
		record[annotationCreateSucceeded] = formatTime(a.now())
		if a.providerNames {
			record[AnnotationExternalName] = assigned
		}
		if cr.Operation != "" {
			// Polled from the next pass on, by this process or the next.
			record[annotationOperation] = operationValue(Operation{Kind: opCreate, Token: cr.Operation})
		}
	case !outcomeUnknown(cerr):
		record[annotationCreateFailed] = formatTime(a.now())
	}
	if len(record) > 0 {
		if recErr = a.write.save(wctx, req, record); recErr != nil {
			req.Log.Error(recErr, "recording the outcome of a create failed", "created", cerr == nil)
		}
	}
	return pubErr, recErr
}

// createFailed returns the error of a failed Create (cerr), and
// remembers the failure, which the next create backs off from. recErr is
// the error of the record of the failure, if that failed too.
func (a *actor[T]) createFailed(req *bosun.Pass[T], name string, cerr, recErr error) error {
	obj := req.Object
	if outcomeUnknown(cerr) {
		// Recorded as nothing: the leak guard treats it as a stop
		// after Create.
		req.Log.Info("outcome of a create unknown, looking for the resource before creating again", "externalName", name, "error", cerr.Error())
		return a.rec.fail(ReasonCreateFailed, fmt.Errorf("creating %s, outcome unknown: %w", describe(name), cerr))
	}
	werr := fmt.Errorf("creating %s: %w", describe(name), cerr)
	if recErr != nil {
		// The failure is not on the object, and the engine's save of
		// the same annotation would most likely fail as the record
		// did, and then report that failure instead of the create's:
		// it is left out. This process remembers the failure, which
		// stands in for the record (see createGuard).
		a.keys.mark(obj, map[string]string{annotationCreateFailed: a.keys.view(req.Original)[annotationCreateFailed]})
		// The record's error is told, not wrapped: the pass fails
		// with the create's error (a Conflict of the record must not
		// make it a quiet requeue).
		werr = fmt.Errorf("%w; recording the failed create on the object failed too: %s", werr, recErr.Error())
	}
	err := a.rec.fail(ReasonCreateFailed, werr)
	_, sev, _ := conditions.FromError(err)
	a.memory.change(obj, func(m *memo) {
		m.create = failed(m.create, a.now(), obj.GetGeneration(), sev == conditions.SeverityError, err)
	})
	return err
}
