package managed

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/managed/changelog"
)

// absent handles a resource that Observe did not find under name.
func (s *Step[T]) absent(ctx context.Context, req *bosun.Pass[T], cl ExternalClient[T], pol Policies, now time.Time, name string) (ctrl.Result, error) {
	obj := req.Object
	switch decideCreate(obj.GetAnnotations(), now, s.cfg.grace, !s.cfg.providerNames) {
	case guardIncomplete:
		return ctrl.Result{}, s.incomplete(obj)
	case guardWait:
		req.Log.V(1).Info("external resource not found within the creation grace period, looking again", "externalName", name)
		s.setCondition(obj, s.cfg.available, metav1.ConditionFalse, ReasonCreating,
			"waiting for the external system to show the resource it created")
		s.settle(obj, pol, "")
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
		msg := fmt.Sprintf("%s does not exist, and the management policies (%s) do not allow Create", describe(name), pol)
		if pol.observing() {
			s.setCondition(obj, s.cfg.available, metav1.ConditionFalse, ReasonExternalNotFound, msg)
			s.settle(obj, pol, "")
		} else {
			s.setCondition(obj, s.cfg.available, metav1.ConditionFalse, ReasonUnavailable, "the external resource does not exist")
			s.setCondition(obj, s.cfg.synced, metav1.ConditionFalse, ReasonExternalNotFound, msg)
		}
		return ctrl.Result{RequeueAfter: s.poll(req)}, nil
	}
	return s.create(ctx, req, cl, name)
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
	unknown := cerr != nil && outcomeUnknown(cerr)
	logged := name
	if cerr == nil && s.cfg.providerNames {
		logged = assigned
	}
	outcome := outcomeOf(cerr)
	if cerr == nil && cr.Operation != "" {
		outcome = changelog.OutcomeStarted
	}
	s.logChange(req, OpCreate, logged, outcome, cerr)

	wctx, cancel := s.durable(ctx)
	defer cancel()
	var pubErr error
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
	case !unknown:
		record[AnnotationCreateFailed] = formatTime(s.cfg.now())
	}
	var recErr error
	if len(record) > 0 {
		if recErr = s.record(wctx, req, record); recErr != nil {
			req.Log.Error(recErr, "recording the outcome of a create failed", "created", cerr == nil)
		}
	}
	obj = req.Object
	if cerr != nil {
		if unknown {
			// Recorded as nothing: the leak guard treats it as a stop
			// after Create.
			req.Log.Info("outcome of a create unknown, looking for the resource before creating again", "externalName", name, "error", cerr.Error())
			return ctrl.Result{}, s.fail(ReasonCreateFailed, fmt.Errorf("creating %s, outcome unknown: %w", describe(name), cerr))
		}
		err := s.fail(ReasonCreateFailed, fmt.Errorf("creating %s: %w", describe(name), cerr))
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
