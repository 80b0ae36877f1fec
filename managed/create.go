package managed

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/managed/changelog"
)

// absent handles a resource that Observe did not find under name.
func (s *Step[T]) absent(ctx context.Context, req *bosun.Pass[T], cl ExternalClient[T], pol Policies, now time.Time, name string) (ctrl.Result, error) {
	obj := req.Object
	m := s.memory.get(obj.GetUID())
	switch s.createGuard(obj, m, now) {
	case guardIncomplete:
		return ctrl.Result{}, s.incomplete(obj)
	case guardWait:
		req.Log.V(1).Info("external resource not found within the creation grace period, looking again", "externalName", name)
		s.setCondition(obj, s.cfg.available, metav1.ConditionFalse, ReasonCreating,
			"waiting for the external system to show the resource it created")
		s.setSynced(obj, "")
		return ctrl.Result{RequeueAfter: s.cfg.short}, nil
	}
	if f := m.create; f != nil && pol.Create {
		// A create failed lately. A terminal failure waits for a new
		// generation; another one for its backoff. Meanwhile the pass
		// reports the same error, so nothing is written and
		// controller-runtime's backoff applies.
		if f.terminal && f.gen == obj.GetGeneration() || !f.terminal && now.Before(f.at.Add(backoff(s.cfg.short, f.n))) {
			return ctrl.Result{}, f.err
		}
	}
	if !pol.Create {
		// Observing a resource that is not there is not a success, in
		// observe-only as in any other policy.
		msg := fmt.Sprintf("%s does not exist, and the management policies (%s) do not allow Create", describe(name), pol)
		if pol.observing() {
			s.setCondition(obj, s.cfg.available, metav1.ConditionFalse, ReasonExternalNotFound, msg)
		} else {
			s.setCondition(obj, s.cfg.available, metav1.ConditionFalse, ReasonUnavailable, "the external resource does not exist")
		}
		s.setCondition(obj, s.cfg.synced, metav1.ConditionFalse, ReasonExternalNotFound, msg)
		return ctrl.Result{RequeueAfter: s.poll(req)}, nil
	}
	return s.create(ctx, req, cl, name)
}

// createGuard applies the leak guard (decideCreate) to obj, whose memo is
// m (see recorded). With names the external system assigns, a name saved
// since the last pending mark (which clears the name) names what that
// create made, and so is as good as a deterministic one: the guard looks
// for the resource under it.
func (s *Step[T]) createGuard(obj T, m memo, now time.Time) guard {
	return decideCreate(recorded(obj, m), now, s.cfg.grace, !s.cfg.providerNames || ExternalName(obj) != "")
}

// recorded returns the annotations of obj, whose memo is m, as the leak
// guard and the claim read them: a failed create that this process
// remembers and could not record on the object stands in for its record.
func recorded(obj client.Object, m memo) map[string]string {
	ann := obj.GetAnnotations()
	f := m.create
	if f == nil {
		return ann
	}
	if at, ok := annotationTime(ann, AnnotationCreateFailed, time.Time{}); ok && !f.at.After(at) {
		return ann
	}
	ann = maps.Clone(ann)
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotationCreateFailed] = formatTime(f.at)
	return ann
}

// incomplete is the error of an object whose create may have leaked.
func (s *Step[T]) incomplete(obj T) error {
	err := fmt.Errorf("a create of the external resource started at %s and its outcome was never recorded, so a resource may exist "+
		"that the operator cannot find: check the external system for a resource made for %s %s/%s at that time, delete it "+
		"(or record its name in annotation %s), then remove annotation %s to let the operator go on",
		obj.GetAnnotations()[AnnotationCreatePending], kindOf(obj), obj.GetNamespace(), obj.GetName(), AnnotationExternalName, AnnotationCreatePending)
	return &conditions.Error{Type: s.cfg.synced, Reason: ReasonCreateIncomplete, Severity: conditions.SeverityError, Err: err}
}

// create commits the pending mark (with the external name, or, for names
// the external system assigns, without the name of a resource that is
// gone), creates, publishes what Create returned and records the outcome.
// The last two writes use a context that survives a stop of the manager.
func (s *Step[T]) create(ctx context.Context, req *bosun.Pass[T], cl ExternalClient[T], name string) (ctrl.Result, error) {
	if s.cfg.providerNames {
		// The name recorded, if any, is of a resource that is gone; Create
		// assigns the next.
		name = ""
	}
	mark := map[string]string{AnnotationCreatePending: formatTime(s.cfg.now()), AnnotationExternalName: name, AnnotationFirstAvailable: ""}
	if err := s.commit(ctx, req, mark); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			// Our copy is out of date, or the object is gone: no create
			// on the strength of it. The engine requeues quietly.
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, s.fail(ReasonRecordFailed, fmt.Errorf("recording a pending create: %w", err))
	}
	obj := req.Object
	cr, cerr := callExternal(ctx, s, req, OpCreate, obj, func(ctx context.Context) (Creation, error) { return cl.Create(ctx, obj) })
	assigned := ExternalName(obj)
	if assigned != name && (!s.cfg.providerNames || cerr != nil) {
		// A name the step chose never changes; a name the external
		// system gave a create that failed names nothing.
		SetExternalName(obj, name)
	}
	if cerr == nil && s.cfg.providerNames && assigned == "" {
		// Nothing recorded would let a later pass find what was made:
		// the pending mark stays the newest, and the next pass stops.
		return ctrl.Result{}, &conditions.Error{Type: s.cfg.synced, Reason: ReasonCreateIncomplete, Severity: conditions.SeverityError,
			Err: errors.New("Create succeeded and recorded no external name; with WithProviderNames it must call SetExternalName")}
	}
	logged := name
	if cerr == nil && s.cfg.providerNames {
		logged = assigned
	}
	outcome := outcomeOf(cerr)
	if cerr == nil && cr.Operation != "" {
		outcome = changelog.OutcomeStarted
	}
	s.logChange(req, OpCreate, logged, outcome, cerr)

	pubErr, recErr := s.recordCreate(ctx, req, cr, cerr, assigned)
	obj = req.Object
	if cerr != nil {
		return ctrl.Result{}, s.createFailed(req, name, cerr, recErr)
	}
	s.memory.change(obj.GetUID(), func(m *memo) { m.create = nil })
	req.Log.Info("created external resource", "externalName", ExternalName(obj))
	req.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, EventCreated, "Create", "created external resource %q", ExternalName(obj))
	if recErr != nil {
		return ctrl.Result{}, s.fail(ReasonRecordFailed, fmt.Errorf("recording the outcome of a create: %w", errors.Join(recErr, pubErr)))
	}
	if pubErr != nil {
		return ctrl.Result{}, pubErr
	}
	msg := "the external resource was created and is not available yet"
	if cr.Operation != "" {
		msg = "the external system is creating the resource"
	}
	s.setCondition(obj, s.cfg.available, metav1.ConditionFalse, ReasonCreating, msg)
	s.setSynced(obj, "")
	return ctrl.Result{RequeueAfter: s.cfg.short}, nil
}

// recordCreate publishes what a successful Create returned and records
// the create's outcome on the object (nothing for an outcome unknown),
// with a context that survives a stop of the manager. It returns the
// errors of the publish and of the record.
func (s *Step[T]) recordCreate(ctx context.Context, req *bosun.Pass[T], cr Creation, cerr error, assigned string) (pubErr, recErr error) {
	wctx, cancel := s.durable(ctx)
	defer cancel()
	if cerr == nil && s.cfg.providerNames {
		// The name is all that finds what Create made: save it first, on
		// its own, so that a stop or a failed write after this one leaves
		// an object whose next pass looks for the resource under it
		// rather than stopping with CreateIncomplete. The outcome below
		// carries it again.
		if err := s.record(wctx, req, map[string]string{AnnotationExternalName: assigned}); err != nil {
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
		pubErr = s.publish(wctx, req, cr.ConnectionDetails)
		record[AnnotationCreateSucceeded] = formatTime(s.cfg.now())
		if s.cfg.providerNames {
			record[AnnotationExternalName] = assigned
		}
		if cr.Operation != "" {
			// Polled from the next pass on, by this process or the next.
			record[AnnotationOperation] = operationValue(Operation{Kind: OpCreate, Token: cr.Operation})
		}
	case !outcomeUnknown(cerr):
		record[AnnotationCreateFailed] = formatTime(s.cfg.now())
	}
	if len(record) > 0 {
		if recErr = s.record(wctx, req, record); recErr != nil {
			req.Log.Error(recErr, "recording the outcome of a create failed", "created", cerr == nil)
		}
	}
	return pubErr, recErr
}

// createFailed returns the error of a failed Create (cerr), and
// remembers the failure, which the next create backs off from. recErr is
// the error of the record of the failure, if that failed too.
func (s *Step[T]) createFailed(req *bosun.Pass[T], name string, cerr, recErr error) error {
	obj := req.Object
	if outcomeUnknown(cerr) {
		// Recorded as nothing: the leak guard treats it as a stop
		// after Create.
		req.Log.Info("outcome of a create unknown, looking for the resource before creating again", "externalName", name, "error", cerr.Error())
		return s.fail(ReasonCreateFailed, fmt.Errorf("creating %s, outcome unknown: %w", describe(name), cerr))
	}
	werr := fmt.Errorf("creating %s: %w", describe(name), cerr)
	if recErr != nil {
		// The failure is not on the object, and the engine's save of
		// the same annotation would most likely fail as the record
		// did, and then report that failure instead of the create's:
		// it is left out. This process remembers the failure, which
		// stands in for the record (see createGuard).
		setAnnotations(obj, map[string]string{AnnotationCreateFailed: req.Original.GetAnnotations()[AnnotationCreateFailed]})
		// The record's error is told, not wrapped: the pass fails
		// with the create's error (a Conflict of the record must not
		// make it a quiet requeue).
		werr = fmt.Errorf("%w; recording the failed create on the object failed too: %s", werr, recErr.Error())
	}
	err := s.fail(ReasonCreateFailed, werr)
	_, sev, _ := conditions.FromError(err)
	s.memory.change(obj.GetUID(), func(m *memo) {
		m.create = failed(m.create, s.cfg.now(), obj.GetGeneration(), sev == conditions.SeverityError, err)
	})
	return err
}

// record writes the outcome of a create, retrying with backoff. A conflict
// means the object changed meanwhile; it is read again and the write
// repeated on the new version.
func (s *Step[T]) record(ctx context.Context, req *bosun.Pass[T], outcome map[string]string) error {
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

// reload reads the object from the API server into req (see
// bosun.Pass.Reload), keeping the external name the pass has set.
func (s *Step[T]) reload(ctx context.Context, req *bosun.Pass[T]) error {
	n := ExternalName(req.Object)
	if err := req.Reload(ctx); err != nil {
		return err
	}
	if n != "" && ExternalName(req.Object) == "" {
		SetExternalName(req.Object, n)
	}
	return nil
}

// commit writes the given annotation changes (an empty value deletes) to
// the object at once, with the changes of metadata and spec the pass has
// made so far, guarded by the resourceVersion the pass knows (see
// bosun.Pass.Commit), so that the engine's final save builds on the new
// version.
// The guard fails with Conflict when the object changed since the pass
// read it, and so also when it was deleted and made again under the same
// name (the new object has another resourceVersion); with NotFound when it
// is gone.
func (s *Step[T]) commit(ctx context.Context, req *bosun.Pass[T], set map[string]string) error {
	setAnnotations(req.Object, set)
	return req.Commit(ctx)
}
