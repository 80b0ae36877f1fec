package bosun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/trim"
)

// saver is the last stage of a pass: it commits what the steps changed in
// the object's metadata and spec, then its status, each only when it
// changed, every write guarded by the resourceVersion the pass read
// (write), reports a failure of the engine's own writes (writeFailed),
// and lets the object go (release). It keeps the record of the pass's
// writes (writes), which the claim's write and the steps' writes through
// the Pass add to.
type saver[T client.Object] struct {
	// req is the pass: the object, the version it read, the log.
	req *Pass[T]
	key types.NamespacedName
	// client writes; apiReader reads around the cache, for a rebase;
	// objType is T's struct type.
	client    client.Client
	apiReader client.Reader
	objType   reflect.Type
	recorder  events.EventRecorder
	// finalizer and former are Reconciler.Finalizer and
	// Options.FormerFinalizers; cleans is set when a step cleans up.
	finalizer string
	former    []string
	cleans    bool
	// kstatus is Options.KStatus.
	kstatus bool
	// steps are the Reconciler's Steps, which a failed write is reported
	// to (WriteFailureReporter).
	steps []Step[T]
	// own is the record of the engine's writes across passes.
	own *ownWrites[T]
	// writes is what the pass's writes did.
	writes passWrites
}

// conflictRequeueDelay is how long the engine waits before it reconciles an
// object again after a write was refused with 409 Conflict: long enough for
// the cache to catch up with the newer version, short enough not to matter.
const conflictRequeueDelay = 100 * time.Millisecond

// releasedFinalizer names the finalizer of the engine's that the pass
// releases, or released: Finalizer when the object as the pass read it
// carried it, else the names of Options.FormerFinalizers it carried (a
// release without a finalizer of its own lets go of an earlier
// release's), else Finalizer, or, for a release without one, the former
// names.
func (s *saver[T]) releasedFinalizer() string {
	orig := s.req.Original
	if s.finalizer != "" && controllerutil.ContainsFinalizer(orig, s.finalizer) {
		return s.finalizer
	}
	var former []string
	for _, f := range s.former {
		if controllerutil.ContainsFinalizer(orig, f) {
			former = append(former, f)
		}
	}
	switch {
	case len(former) > 0:
		return strings.Join(former, ", ")
	case s.finalizer != "":
		return s.finalizer
	}
	return strings.Join(s.former, ", ")
}

// conflictRequeue is the outcome of a 409 Conflict: a quiet retry.
func (s *saver[T]) conflictRequeue(during string) ctrl.Result {
	s.writes.conflicted = true
	s.req.Log.V(1).Info("conflict, requeueing", "during", during)
	return ctrl.Result{RequeueAfter: conflictRequeueDelay}
}

// setKStatus keeps the kstatus conditions in conds for Ready ready (see
// Options.KStatus): none while the object is Ready or paused, Stalled
// when the failure is terminal (stalled), Reconciling otherwise, with
// ready's reason and message. Every path of the engine that sets Ready
// calls it when Options.KStatus is set. It reports whether the condition
// it keeps changed.
func setKStatus(conds *[]metav1.Condition, ready metav1.Condition, paused, stalled bool, now metav1.Time) (changed bool) {
	var on, off string
	switch {
	case ready.Status == metav1.ConditionTrue, paused:
		meta.RemoveStatusCondition(conds, conditions.TypeReconciling)
		meta.RemoveStatusCondition(conds, conditions.TypeStalled)
		return false
	case stalled:
		on, off = conditions.TypeStalled, conditions.TypeReconciling
	default:
		on, off = conditions.TypeReconciling, conditions.TypeStalled
	}
	meta.RemoveStatusCondition(conds, off)
	return conditions.Set(conds, metav1.Condition{
		Type: on, Status: metav1.ConditionTrue, Reason: ready.Reason, Message: ready.Message, ObservedGeneration: ready.ObservedGeneration,
	}, now)
}

func (s *saver[T]) event(eventtype string, reason conditions.Reason, action, note string, args ...any) {
	s.recorder.Eventf(s.req.Object, nil, eventtype, string(reason), action, note, args...)
}

// mainWriteError is a failed write of the object's metadata and spec in
// save, as opposed to one of its status.
type mainWriteError struct{ err error }

func (e *mainWriteError) Error() string { return e.err.Error() }
func (e *mainWriteError) Unwrap() error { return e.err }

// writeFailed reports werr, the failure of the engine's write w of the
// object: it tells every WriteFailureReporter step, sets Ready False with
// w.reason() and the error, writes the status alone (the write that failed
// is not repeated), records one Warning event when Ready changed, and
// returns the error for controller-runtime to retry with backoff; an error
// the API server gives for an invalid object is terminal, since only a
// change of the object can fix it.
//
// The reporters' conditions and Ready start again from what is stored, so
// a failure that repeats writes nothing new.
func (s *saver[T]) writeFailed(ctx context.Context, w engineWrite, werr error) (ctrl.Result, error) {
	obj := s.req.Object
	s.req.Log.Error(werr, "engine write failed", "write", string(w))
	changed := true
	if co, ok := any(obj).(conditions.Object); ok {
		conds := co.GetConditions()
		stored := any(s.req.Original).(conditions.Object).GetConditions()
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
		for _, st := range s.steps {
			if _, ok := st.(WriteFailureReporter[T]); !ok {
				continue
			}
			if owner, ok := st.(ConditionOwner); ok {
				for _, typ := range owner.Conditions() {
					restore(typ)
				}
			}
		}
		co.SetConditions(conds)
		for _, st := range s.steps {
			if rep, ok := st.(WriteFailureReporter[T]); ok {
				rep.WriteFailed(s.req, w.reason(), werr)
			}
		}
		conds = co.GetConditions()
		gen := obj.GetGeneration()
		now := metav1.Now()
		ready := metav1.Condition{
			Type: conditions.TypeReady, Status: metav1.ConditionFalse, Reason: string(w.reason()), Message: werr.Error(), ObservedGeneration: gen,
		}
		changed = conditions.Set(&conds, ready, now)
		if s.kstatus {
			// An object the API server refuses as invalid waits for a
			// change of its own: stalled. Any other failure is retried.
			setKStatus(&conds, ready, false, apierrors.IsInvalid(werr), now)
		}
		boundMessages(conds)
		co.SetConditions(conds)
		if err := s.saveStatus(ctx); err != nil {
			if apierrors.IsConflict(err) {
				return s.conflictRequeue("status after a failed " + string(w)), nil
			}
			s.req.Log.Error(err, "writing the status that reports a failed engine write failed", "write", string(w))
		}
	}
	if changed {
		s.event(corev1.EventTypeWarning, w.reason(), string(w), "%s", werr.Error())
	}
	if apierrors.IsInvalid(werr) {
		return ctrl.Result{}, reconcile.TerminalError(werr)
	}
	return ctrl.Result{}, werr
}

// saveStatus writes the status subresource alone, when it changed.
func (s *saver[T]) saveStatus(ctx context.Context) error {
	_, status, err := s.diff()
	if err != nil || status == nil {
		return err
	}
	return s.sendStatus(ctx, status)
}

// release writes the object without our finalizer; the object may be gone
// afterwards, which is success. released, when set, says how
// AnnotationReleaseFinalizer released it.
func (s *saver[T]) release(ctx context.Context, policy Policy, released string, res ctrl.Result, err error) (ctrl.Result, error) {
	if serr := s.patchMain(ctx); serr != nil {
		switch {
		case apierrors.IsConflict(serr):
			return s.conflictRequeue("release"), nil
		case apierrors.IsNotFound(serr):
		default:
			return s.writeFailed(ctx, writeRelease, serr)
		}
	}
	s.settleReleased(ctx, policy, released)
	reason, note := conditions.ReasonCleanedUp, "cleaned up and released finalizer %q"
	if policy != PolicyManage {
		reason, note = conditions.ReasonDetached, "released finalizer %q without cleanup"
	}
	if released != "" {
		s.event(corev1.EventTypeWarning, conditions.ReasonFinalizerReleased, "Cleanup", "released finalizer %q as annotation %s=%s asked, %s",
			s.releasedFinalizer(), AnnotationReleaseFinalizer, s.req.Object.GetAnnotations()[AnnotationReleaseFinalizer], released)
		s.req.Log.Info("released finalizer on request", "finalizer", s.releasedFinalizer(), "how", released)
		return final(res, err)
	}
	if policy == PolicyManage && !s.cleans {
		// A release without a cleanup let go of an earlier release's name.
		note = "released finalizer %q of an earlier release, with no cleanup to run"
	}
	s.event(corev1.EventTypeNormal, reason, "Cleanup", note, s.releasedFinalizer())
	s.req.Log.V(1).Info("released finalizer", "finalizer", s.releasedFinalizer())
	return final(res, err)
}

// settleReleased clears the engine's deletion conditions of an object
// whose finalizer the pass released and that other finalizers still hold
// (see letGo). Without this write the object would go on blaming the
// engine's cleanup until the others let go. A failure is logged: the next
// event of the object brings a pass that tries again (settleLeft).
func (s *saver[T]) settleReleased(ctx context.Context, policy Policy, released string) {
	obj := s.req.Object
	if len(obj.GetFinalizers()) == 0 || obj.GetDeletionTimestamp() == nil {
		return
	}
	how := "its cleanup finished"
	switch {
	case policy != PolicyManage:
		how = fmt.Sprintf("the reconcile policy %q runs no cleanup", policy)
	case released != "":
		how = fmt.Sprintf("annotation %s released it %s", AnnotationReleaseFinalizer, released)
	case !s.cleans:
		how = "this release has no cleanup to run"
	}
	if !s.letGo(how) {
		return
	}
	if err := s.saveStatus(ctx); err != nil && !apierrors.IsNotFound(err) {
		s.req.Log.V(1).Info("clearing the deletion conditions of a released object failed; the next pass tries again", "error", err.Error())
	}
}

// settleLeft ends the pass of an object being deleted that holds none of
// the engine's finalizers: it clears the engine's deletion conditions if
// the pass that released the finalizer could not (a conflict, a stop), and
// otherwise writes nothing.
func (s *saver[T]) settleLeft(ctx context.Context) (ctrl.Result, error) {
	co, ok := any(s.req.Object).(conditions.Object)
	if !ok || conditions.Find(co.GetConditions(), conditions.TypeDeletionBlocked) == nil {
		return ctrl.Result{}, nil
	}
	s.letGo("the engine's finalizer is gone")
	if err := s.saveStatus(ctx); err != nil {
		if apierrors.IsConflict(err) {
			return s.conflictRequeue("status of a released object"), nil
		}
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// letGo removes DeletionBlocked and the kstatus conditions from the
// object and makes Ready say the engine let it go (how) while other
// finalizers hold it (conditions.ReasonFinalizerReleased). It reports
// false for an object without conditions.
func (s *saver[T]) letGo(how string) bool {
	obj := s.req.Object
	co, ok := any(obj).(conditions.Object)
	if !ok {
		return false
	}
	conds := co.GetConditions()
	meta.RemoveStatusCondition(&conds, conditions.TypeDeletionBlocked)
	meta.RemoveStatusCondition(&conds, conditions.TypeReconciling)
	meta.RemoveStatusCondition(&conds, conditions.TypeStalled)
	conditions.Set(&conds, metav1.Condition{
		Type: conditions.TypeReady, Status: metav1.ConditionFalse, Reason: string(conditions.ReasonFinalizerReleased),
		Message:            fmt.Sprintf("finalizer %q released: %s; the object waits for its other finalizers", s.releasedFinalizer(), how),
		ObservedGeneration: obj.GetGeneration(),
	}, metav1.Now())
	boundMessages(conds)
	co.SetConditions(conds)
	return true
}

// patchMain writes the changes to metadata and spec (everything but status),
// guarded by the resourceVersion the object was read with.
func (s *saver[T]) patchMain(ctx context.Context) error {
	main, _, err := s.diff()
	if err != nil || main == nil {
		return err
	}
	return s.sendMain(ctx, main)
}

// save writes what changed: metadata and spec first, then the status
// subresource. gone reports that the object no longer exists.
func (s *saver[T]) save(ctx context.Context) (gone bool, err error) {
	main, status, err := s.diff()
	if err != nil {
		return false, err
	}
	if main != nil {
		if err := s.sendMain(ctx, main); err != nil {
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
		if err := s.sendStatus(ctx, status); err != nil {
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		}
	}
	return false, nil
}

// sendStatus writes status, the merge patch of the pass's status changes,
// to the status subresource, guarded by the object's resourceVersion.
//
// A merge patch replaces the whole list of conditions, so the guard is
// what keeps the conditions of another controller that writes the same
// object's status (its own condition types) from being dropped; and each
// write of that controller makes the engine's next one conflict. When the
// write is refused with 409 Conflict, the engine reads the object from the
// API server (APIReader) and, if what changed since the version the pass
// read touches nothing the pass changed (other condition types, other
// status fields), it writes the pass's changes onto that version, guarded
// by its resourceVersion: rebaseStatus. A change to a condition type or a
// field the pass changed too is a real conflict, which the caller turns
// into the quiet requeue. Each conflict costs at most one read and one
// more write, maxStatusRebases times at most.
func (s *saver[T]) sendStatus(ctx context.Context, status json.RawMessage) error {
	obj := s.req.Object
	read := obj.GetResourceVersion()
	err := s.patchStatus(ctx, obj, read, status)
	sent := read
	for range maxStatusRebases {
		if !apierrors.IsConflict(err) {
			break
		}
		rebased, onto, why, rerr := s.rebase(ctx, sent, status)
		if rerr != nil {
			if apierrors.IsNotFound(rerr) {
				err = rerr
			} else {
				s.req.Log.V(1).Info("status not rebased: reading the object failed", "error", rerr.Error())
			}
			break
		}
		if why != "" {
			s.req.Log.V(1).Info("status not rebased", "why", why)
			break
		}
		sent = rebased.GetResourceVersion()
		if onto != nil {
			err = s.patchStatus(ctx, rebased, sent, onto)
		} else {
			// The stored version holds every change of the pass already.
			err = nil
		}
		if err == nil {
			reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(rebased).Elem())
			// The version the pass read is stale as well: a pass over a
			// cache that still holds it waits (ownWrites.past).
			s.writes.overwritten = append(s.writes.overwritten, read)
			s.req.Log.V(1).Info("status written over another client's change", "read", read, "onto", sent)
		}
	}
	if err != nil {
		return fmt.Errorf("writing status: %w", err)
	}
	return nil
}

// maxStatusRebases bounds the rebases of one status write (see
// sendStatus): past them, the conflict is the pass's quiet requeue.
const maxStatusRebases = 5

// patchStatus sends status, a merge patch, to the status subresource of
// obj, guarded by version rv. Such a write changes nothing the pass holds
// but the version: the API server keeps the metadata of the version the
// pass read, and the status is the one sent (less what its schema prunes
// or defaults). So the write asks for its answer as metadata only
// (metav1.PartialObjectMetadata, which controller-runtime's client sends
// through client-go's metadata client), and obj takes the version from
// it: the API server encodes, and the engine decodes, no copy of what was
// sent, and the answer comes as protobuf, which every API server speaks
// for metadata.
func (s *saver[T]) patchStatus(ctx context.Context, obj T, rv string, status json.RawMessage) error {
	body, err := withResourceVersion(map[string]json.RawMessage{"status": status}, rv)
	if err != nil {
		return err
	}
	gvk, err := apiutil.GVKForObject(obj, s.client.Scheme())
	if err != nil {
		return fmt.Errorf("writing status: %w", err)
	}
	answer := &metav1.PartialObjectMetadata{}
	answer.SetGroupVersionKind(gvk)
	answer.SetNamespace(obj.GetNamespace())
	answer.SetName(obj.GetName())
	return s.write(rv, nil, obj, func() error {
		if err := s.client.Status().Patch(ctx, answer, client.RawPatch(types.MergePatchType, body)); err != nil {
			return err
		}
		obj.SetResourceVersion(answer.GetResourceVersion())
		return nil
	})
}

// rebase reads the object from the API server after the status write
// guarded by version sent conflicted, and returns it with the pass's
// status changes (status) applied, and the merge patch that writes them
// onto it (nil when it holds them already). why, when not empty, says why
// there is nothing to rebase onto: the object was replaced by another of
// the same name; the API server still gives version sent (a reader that
// is itself a cache, or a conflict that did not come from the API
// server); its deletion was asked, or the engine's finalizer added or
// taken away, since the version the pass wrote over, so that what the pass
// did (claim, act or clean up) no longer stands; or the other writer
// changed what the pass changed.
func (s *saver[T]) rebase(ctx context.Context, sent string, status json.RawMessage) (rebased T, onto json.RawMessage, why string, err error) {
	fresh := reflect.New(s.objType).Interface().(T)
	if err := s.apiReader.Get(ctx, client.ObjectKeyFromObject(s.req.Object), fresh); err != nil {
		return rebased, nil, "", err
	}
	obj, fin := s.req.Object, s.finalizer
	switch {
	case fresh.GetUID() != s.req.Original.GetUID():
		return rebased, nil, "the object was replaced", nil
	case fresh.GetResourceVersion() == sent:
		return rebased, nil, "no newer version", nil
	case fresh.GetDeletionTimestamp().IsZero() != obj.GetDeletionTimestamp().IsZero(),
		controllerutil.ContainsFinalizer(fresh, fin) != controllerutil.ContainsFinalizer(obj, fin):
		// What the pass did (claim, act, clean up) no longer holds.
		return rebased, nil, "the object's deletion or the engine's finalizer changed", nil
	}
	rebased, onto, err = rebaseStatus(s.req.Original, fresh, status, false)
	if errors.Is(err, errStatusOverlap) {
		return rebased, nil, err.Error(), nil
	}
	return rebased, onto, "", err
}

// sendMain writes main to the object, guarded by Original's
// resourceVersion; its answer, taken whole into the pass's object, may
// come without managedFields (trim.Mark), as the object came from a lean
// cache.
func (s *saver[T]) sendMain(ctx context.Context, main map[string]json.RawMessage) error {
	rv := s.req.Original.GetResourceVersion()
	body, err := withResourceVersion(main, rv)
	if err != nil {
		return err
	}
	var sent client.Object
	if s.own.tracks() {
		sent = s.req.Object.DeepCopyObject().(client.Object)
	}
	if err := s.write(rv, sent, s.req.Object, func() error {
		return s.client.Patch(trim.Mark(ctx), s.req.Object, client.RawPatch(types.MergePatchType, body))
	}); err != nil {
		return fmt.Errorf("writing object: %w", err)
	}
	return nil
}

// changedOnTheWay reports whether got, the API server's answer to a write
// of sent over orig (the object as the pass read it), holds a change the
// pass did not make and has not seen: in a label, annotation, finalizer,
// owner reference or field outside metadata and status that the pass
// left as it was in orig, got differs from what was sent (a mutating
// webhook's addition). A field the pass itself changed and the server
// changed back or dropped (a schema that prunes it, a default) does not
// count: another pass would only write it again. What the server keeps of
// its own (the version, generation, managed fields, timestamps) is left
// out.
func changedOnTheWay(orig, sent, got client.Object) (bool, error) {
	if mapChanged(orig.GetLabels(), sent.GetLabels(), got.GetLabels()) ||
		mapChanged(orig.GetAnnotations(), sent.GetAnnotations(), got.GetAnnotations()) ||
		slices.Equal(orig.GetFinalizers(), sent.GetFinalizers()) && !slices.Equal(sent.GetFinalizers(), got.GetFinalizers()) ||
		equality.Semantic.DeepEqual(orig.GetOwnerReferences(), sent.GetOwnerReferences()) &&
			!equality.Semantic.DeepEqual(sent.GetOwnerReferences(), got.GetOwnerReferences()) {
		return true, nil
	}
	var docs [3]map[string]any
	for i, obj := range []client.Object{orig, sent, got} {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return false, fmt.Errorf("comparing the answer of a write: %w", err)
		}
		for _, k := range []string{"metadata", "status", "apiVersion", "kind"} {
			delete(u, k)
		}
		docs[i] = u
	}
	return valueChanged(docs[0], docs[1], docs[2]), nil
}

// mapChanged reports whether got differs from sent at a key where sent
// is as orig was.
func mapChanged(orig, sent, got map[string]string) bool {
	for _, m := range []map[string]string{sent, got} {
		for k := range m {
			o, inOrig := orig[k]
			s, inSent := sent[k]
			if inOrig == inSent && o == s {
				if g, inGot := got[k]; inGot != inSent || g != s {
					return true
				}
			}
		}
	}
	return false
}

// valueChanged is mapChanged for decoded JSON values: got differs from sent
// somewhere sent is as orig was.
func valueChanged(orig, sent, got any) bool {
	if equality.Semantic.DeepEqual(sent, got) {
		return false
	}
	if equality.Semantic.DeepEqual(orig, sent) {
		return true
	}
	o, _ := orig.(map[string]any)
	s, okS := sent.(map[string]any)
	g, okG := got.(map[string]any)
	if !okS || !okG {
		// The pass changed this value, a list or a scalar, and the server
		// gave back another: its own change, undone.
		return false
	}
	for _, m := range []map[string]any{s, g} {
		for k := range m {
			if valueChanged(o[k], s[k], g[k]) {
				return true
			}
		}
	}
	return false
}

// write makes one write of the object by the pass: send, guarded by
// version rv, which leaves in after the object the server returned, or
// its version (sendStatus). It
// notes that the write replaced rv, when it did: after then has another
// version. A write the server took for a no-op (every change pruned by the
// schema, or equal to what was stored) leaves the version as it was; the
// cache is then not behind, and rv must not be taken for a stale copy.
// The watch events of the write are told from others (see ownWrite). sent,
// when not nil, is the object the write sent (its metadata and spec), which
// the answer is checked against (changedOnTheWay).
func (s *saver[T]) write(rv string, sent, after client.Object, send func() error) error {
	orig := s.req.Original
	s.writes.own = s.own.begin(s.key, s.req.Object.GetUID(), s.writes.own, rv)
	err := send()
	made := ""
	if err == nil && after.GetResourceVersion() != rv {
		s.writes.overwritten = append(s.writes.overwritten, rv)
		made = after.GetResourceVersion()
	}
	s.own.end(s.writes.own, made)
	if made != "" && sent != nil {
		if changed, cerr := changedOnTheWay(orig, sent, after); cerr != nil || changed {
			// A mutating webhook changed what the pass sent: the version
			// the write made holds more than the pass left, and the steps
			// have not seen it. The pass does not settle, so a pass over
			// that version follows (ownWrites.close).
			s.writes.mutated = true
			s.req.Log.V(1).Info("the object came back from the engine's write with changes the pass did not make")
		}
	}
	return err
}

// diff computes the JSON merge patch from Original to Object and splits it
// into the part for the object (nil if empty) and the status (nil if
// unchanged).
func (s *saver[T]) diff() (main map[string]json.RawMessage, status json.RawMessage, err error) {
	// Fast path: Object started as a deep copy of Original, so an untouched
	// object is deeply equal to it. When only the status differs, as after
	// most passes, the patch is computed from the statuses alone. Anything
	// else is decided by the patch of the whole object.
	switch same, status, err := statusOnlyDiff(s.req.Original, s.req.Object); {
	case err != nil:
		return nil, nil, err
	case same:
		return nil, status, nil
	}
	data, err := client.MergeFrom(s.req.Original).Data(s.req.Object)
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

// boundMessages cuts every message in conds to what the API server
// accepts (conditions.Bound), so the status write cannot exceed its limits.
func boundMessages(conds []metav1.Condition) {
	for i := range conds {
		conds[i].Message = conditions.Bound(conds[i].Message)
	}
}
