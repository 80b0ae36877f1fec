package managed

import (
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/statusfield"
)

// recorder is the last stage of a pass: it records what the pass found
// and did in the step's two conditions, turns failures into errors about
// Synced, says when to look again, and records the times a pass measures
// (to the first pass, to Ready).
type recorder[T client.Object] struct {
	syncedType, availableType string
	// interval and minInterval are the poll interval and its floor;
	// short is the interval while something is under way.
	interval, minInterval, short time.Duration
	now                          func() time.Time
	rand                         func() float64
	meters                       *meters[T]
	// polls learns when the next poll of an object in line is due.
	polls *polls
	// keys are where the step keeps its annotations.
	keys recordKeys
}

// newRecorder returns the recorder of a step configured by cfg.
func newRecorder[T client.Object](cfg *config, m *meters[T], p *polls) *recorder[T] {
	return &recorder[T]{
		syncedType: cfg.synced, availableType: cfg.available,
		interval: cfg.poll, minInterval: cfg.minPoll, short: cfg.short,
		now: cfg.now, rand: cfg.rand, meters: m, polls: p, keys: cfg.keys,
	}
}

// synced records a pass over a resource that is the object's, which Observe
// reported as obs under the external name at now: it sets Available from
// the observation and Synced from the decision d, and returns when to look
// again (again, while an update is under way).
func (r *recorder[T]) synced(req *bosun.Pass[T], obs Observation, name string, now time.Time, d decision, again time.Duration) ctrl.Result {
	obj := req.Object
	r.setAvailability(req, obj, obs.Available, now, true)
	switch d.action {
	case actUpdate, actUpdateWait:
		// Synced again once an observation finds the resource up to date.
		r.unsynced(obj, ReasonUpdating, fmt.Sprintf("updating %s to the spec: %s", describe(name), obs.Diff))
		return ctrl.Result{RequeueAfter: again}
	case actObserveOnly:
		r.setSynced(obj, "the external resource differs from the spec, and the management policies do not allow Update")
	default:
		r.setSynced(obj, "")
	}
	if !obs.Available {
		return ctrl.Result{RequeueAfter: r.short}
	}
	poll := r.poll(req)
	r.polls.schedule(obj.GetUID(), client.ObjectKeyFromObject(obj), now.Add(poll))
	return ctrl.Result{RequeueAfter: poll}
}

// creationWindow records a resource not found within the creation grace
// period: the external system may not show it yet.
func (r *recorder[T]) creationWindow(req *bosun.Pass[T], name string) ctrl.Result {
	req.Log.V(1).Info("external resource not found within the creation grace period, looking again", "externalName", name)
	r.unavailable(req.Object, ReasonCreating, "waiting for the external system to show the resource it created")
	r.setSynced(req.Object, "")
	return ctrl.Result{RequeueAfter: r.short}
}

// notFound records a missing resource that the policies pol do not allow
// to create. Observing a resource that is not there is not a success, in
// observe-only as in any other policy.
func (r *recorder[T]) notFound(req *bosun.Pass[T], name string, pol Policies) ctrl.Result {
	obj := req.Object
	msg := fmt.Sprintf("%s does not exist, and the management policies (%s) do not allow Create", describe(name), pol)
	if pol.observing() {
		r.unavailable(obj, ReasonExternalNotFound, msg)
	} else {
		r.unavailable(obj, ReasonUnavailable, "the external resource does not exist")
	}
	r.unsynced(obj, ReasonExternalNotFound, msg)
	return ctrl.Result{RequeueAfter: r.poll(req)}
}

// notOurs returns the conflict to report about the resource name, which
// obs describes and which is not obj's (see owned); granted tells whether
// adoption is granted to obj.
func (r *recorder[T]) notOurs(obj T, name string, obs Observation, granted bool) error {
	switch {
	case obs.Owner != "":
		return r.conflict(fmt.Errorf("%s is marked as another object's: this object leaves it alone; "+
			"give this object another external name (annotation %s, or the operator's naming), or remove the other object's resource",
			describe(name), r.keys.key(AnnotationExternalName)))
	case !granted:
		return &conditions.Error{Type: r.syncedType, Reason: ReasonAdoptionNotGranted, Severity: conditions.SeverityWarning, Err: errors.New(notGrantedMessage(obj, name))}
	}
	return r.conflict(fmt.Errorf("%s exists and was not created for this object: to adopt it, set annotation %s to %q by hand; "+
		"otherwise give this object another external name", describe(name), r.keys.key(AnnotationExternalName), name))
}

// notGranted records an unmarked resource under the external name that
// the step did not create, where adoption is not granted: Synced False
// with ReasonAdoptionNotGranted, Available False, nothing of the resource
// taken, and a look again at the poll interval, which a grant needs to
// take effect.
func (r *recorder[T]) notGranted(req *bosun.Pass[T], name string) ctrl.Result {
	obj := req.Object
	req.Log.V(1).Info("leaving alone an unmarked external resource: adoption not granted", "externalName", name)
	r.unavailable(obj, ReasonUnavailable, "the resource under the external name is not this object's")
	r.unsynced(obj, ReasonAdoptionNotGranted, notGrantedMessage(obj, name))
	return ctrl.Result{RequeueAfter: r.poll(req)}
}

// notGrantedMessage says that the resource name is left alone because
// adoption is not granted to obj, and who may grant it.
func notGrantedMessage(obj client.Object, name string) string {
	grant := "the operator grants it (WithAdoptionGranted)"
	if ns := obj.GetNamespace(); ns != "" {
		grant = fmt.Sprintf("an administrator grants it to namespace %s with annotation %s: \"true\" on the Namespace", ns, AnnotationAdoptExternal)
	}
	return fmt.Sprintf("%s exists, carries no owner mark and was not created for this object, which leaves it alone: "+
		"adopting it needs a grant, and %s; otherwise give this object another external name", describe(name), grant)
}

// conflict is the error of a resource that is not the object's.
func (r *recorder[T]) conflict(err error) error {
	return &conditions.Error{Type: r.syncedType, Reason: ReasonExternalResourceConflict, Severity: conditions.SeverityWarning, Err: err}
}

// incomplete is the error of an object whose create may have leaked.
func (r *recorder[T]) incomplete(obj T) error {
	err := fmt.Errorf("a create of the external resource started at %s and its outcome was never recorded, so a resource may exist "+
		"that the operator cannot find: check the external system for a resource made for %s %s/%s at that time, delete it "+
		"(or record its name in annotation %s), then remove annotation %s to let the operator go on",
		r.keys.view(obj)[AnnotationCreatePending], kindOf(obj), obj.GetNamespace(), obj.GetName(), r.keys.key(AnnotationExternalName), r.keys.key(AnnotationCreatePending))
	return &conditions.Error{Type: r.syncedType, Reason: ReasonCreateIncomplete, Severity: conditions.SeverityError, Err: err}
}

// unnamed is the error of a Create that succeeded, with names the
// external system assigns (WithProviderNames), and recorded no name.
func (r *recorder[T]) unnamed() error {
	return &conditions.Error{Type: r.syncedType, Reason: ReasonCreateIncomplete, Severity: conditions.SeverityError,
		Err: errors.New("Create succeeded and recorded no external name; with WithProviderNames it must call SetExternalName")}
}

// fail turns err into an error about the Synced condition. An error that
// carries a reason keeps it, and its severity; others get reason.
func (r *recorder[T]) fail(reason conditions.Reason, err error) error {
	if apierrors.IsConflict(err) {
		return err
	}
	got, sev, _ := conditions.FromError(err)
	if got != conditions.ReasonError {
		reason = got
	}
	return &conditions.Error{Type: r.syncedType, Reason: reason, Severity: sev, Err: err}
}

// poll returns the jittered poll interval of the request's object.
func (r *recorder[T]) poll(req *bosun.Pass[T]) time.Duration {
	d, bad := pollInterval(req.Object.GetAnnotations(), r.interval, r.minInterval)
	if bad {
		req.Log.V(1).Info("ignoring an invalid poll interval annotation", "annotation", AnnotationPollInterval, "value", req.Object.GetAnnotations()[AnnotationPollInterval])
	}
	return jitter(d, pollJitter, r.rand())
}

// setCondition sets a condition of obj, when its type keeps conditions.
func (r *recorder[T]) setCondition(obj T, typ string, status metav1.ConditionStatus, reason conditions.Reason, msg string) {
	co, ok := any(obj).(conditions.Object)
	if !ok {
		return
	}
	conds := co.GetConditions()
	conditions.Set(&conds, metav1.Condition{
		Type: typ, Status: status, Reason: string(reason), Message: msg, ObservedGeneration: obj.GetGeneration(),
	}, metav1.NewTime(r.now()))
	co.SetConditions(conds)
}

// unavailable sets the Available condition of obj False, with reason and
// msg.
func (r *recorder[T]) unavailable(obj T, reason conditions.Reason, msg string) {
	r.setCondition(obj, r.availableType, metav1.ConditionFalse, reason, msg)
}

// unsynced sets the Synced condition of obj False, with reason and msg.
func (r *recorder[T]) unsynced(obj T, reason conditions.Reason, msg string) {
	r.setCondition(obj, r.syncedType, metav1.ConditionFalse, reason, msg)
}

// setSynced marks the pass a success, with note as the message if any.
func (r *recorder[T]) setSynced(obj T, note string) {
	if note == "" {
		note = "the external resource is reconciled"
	}
	r.setCondition(obj, r.syncedType, metav1.ConditionTrue, ReasonReconcileSuccess, note)
}

// setPaused marks Synced False with conditions.ReasonReconcilePaused: the
// step changes nothing, by choice. Ready does not count it.
func (r *recorder[T]) setPaused(obj T, why string) {
	r.unsynced(obj, conditions.ReasonReconcilePaused, why)
}

// setAvailability sets the Available condition from an observation of an
// existing resource. Which reason a resource that is not available gets
// comes from the object's annotations, never from the condition itself:
// ReasonCreating while the step's own create of it has never been seen
// available (no annotationFirstAvailable), ReasonUnavailable otherwise.
// The first time the resource is available, and mark allows it (the pass
// may write the object's metadata), the step records
// annotationFirstAvailable and the time to Ready.
func (r *recorder[T]) setAvailability(req *bosun.Pass[T], obj T, available bool, now time.Time, mark bool) {
	ann := r.keys.view(obj)
	_, seen := ann[annotationFirstAvailable]
	if available {
		if !seen && mark {
			r.keys.mark(obj, map[string]string{annotationFirstAvailable: formatTime(now)})
			r.meters.of(req).ready.Observe(now.Sub(obj.GetCreationTimestamp().Time).Seconds())
		}
		r.setCondition(obj, r.availableType, metav1.ConditionTrue, ReasonAvailable, "the external resource is available")
		return
	}
	if !seen && createdHere(ann) {
		r.unavailable(obj, ReasonCreating, "the external resource exists and is not available yet")
		return
	}
	r.unavailable(obj, ReasonUnavailable, "the external resource exists and is not available")
}

// noteFirstReconcile records the time to first reconcile when the engine
// has never finished a pass over the object (status.observedGeneration is
// unset; for types without it, when the object has no external name yet).
func (r *recorder[T]) noteFirstReconcile(req *bosun.Pass[T], now time.Time) {
	obj := req.Object
	g, ok := statusfield.ObservedGeneration(obj)
	if ok && g == 0 || !ok && r.keys.name(obj) == "" {
		r.meters.of(req).first.Observe(now.Sub(obj.GetCreationTimestamp().Time).Seconds())
	}
}

// describe names an external resource in messages.
func describe(name string) string {
	if name == "" {
		return "the external resource (not named yet)"
	}
	return fmt.Sprintf("external resource %q", name)
}

// kindOf returns the kind of obj for messages: its TypeMeta kind, else its
// Go type.
func kindOf(obj client.Object) string {
	if k := obj.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	return fmt.Sprintf("%T", obj)
}
