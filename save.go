package bosun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"

	jsonpatch "github.com/evanphx/json-patch/v5"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/statusfield"
	"github.com/bosunkit/bosun/internal/trim"
)

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
func (ps saveStage[T]) writeFailed(ctx context.Context, w engineWrite, werr error) (ctrl.Result, error) {
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
				rep.WriteFailed(ps.req, w.reason(), werr)
			}
		}
		conds = co.GetConditions()
		gen := obj.GetGeneration()
		now := metav1.Now()
		ready := metav1.Condition{
			Type: conditions.TypeReady, Status: metav1.ConditionFalse, Reason: string(w.reason()), Message: werr.Error(), ObservedGeneration: gen,
		}
		changed = conditions.Set(&conds, ready, now)
		if ps.r.Options.KStatus {
			// An object the API server refuses as invalid waits for a
			// change of its own: stalled. Any other failure is retried.
			setKStatus(&conds, ready, false, apierrors.IsInvalid(werr), now)
		}
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
		ps.event(corev1.EventTypeWarning, w.reason(), string(w), "%s", werr.Error())
	}
	if apierrors.IsInvalid(werr) {
		return ctrl.Result{}, reconcile.TerminalError(werr)
	}
	return ctrl.Result{}, werr
}

// saveStatus writes the status subresource alone, when it changed.
func (ps saveStage[T]) saveStatus(ctx context.Context) error {
	_, status, err := ps.diff()
	if err != nil || status == nil {
		return err
	}
	return ps.sendStatus(ctx, status)
}

// release writes the object without our finalizer; the object may be gone
// afterwards, which is success.
func (ps saveStage[T]) release(ctx context.Context, policy Policy, res ctrl.Result, err error) (ctrl.Result, error) {
	if serr := ps.patchMain(ctx); serr != nil {
		switch {
		case apierrors.IsConflict(serr):
			return ps.conflictRequeue("release"), nil
		case apierrors.IsNotFound(serr):
		default:
			return ps.writeFailed(ctx, writeRelease, serr)
		}
	}
	ps.settleReleased(ctx, policy)
	reason, note := conditions.ReasonCleanedUp, "cleaned up and released finalizer %q"
	if policy != PolicyManage {
		reason, note = conditions.ReasonDetached, "released finalizer %q without cleanup"
	}
	if ps.released != "" {
		ps.event(corev1.EventTypeWarning, conditions.ReasonFinalizerReleased, "Cleanup", "released finalizer %q as annotation %s=%s asked, %s",
			ps.releasedFinalizer(), AnnotationReleaseFinalizer, ps.req.Object.GetAnnotations()[AnnotationReleaseFinalizer], ps.released)
		ps.req.Log.Info("released finalizer on request", "finalizer", ps.releasedFinalizer(), "how", ps.released)
		return final(res, err)
	}
	if policy == PolicyManage && !ps.p.cleans {
		// A release without a cleanup let go of an earlier release's name.
		note = "released finalizer %q of an earlier release, with no cleanup to run"
	}
	ps.event(corev1.EventTypeNormal, reason, "Cleanup", note, ps.releasedFinalizer())
	ps.req.Log.V(1).Info("released finalizer", "finalizer", ps.releasedFinalizer())
	return final(res, err)
}

// settleReleased clears the engine's deletion conditions of an object
// whose finalizer the pass released and that other finalizers still hold
// (see letGo). Without this write the object would go on blaming the
// engine's cleanup until the others let go. A failure is logged: the next
// event of the object brings a pass that tries again (settleLeft).
func (ps saveStage[T]) settleReleased(ctx context.Context, policy Policy) {
	obj := ps.req.Object
	if len(obj.GetFinalizers()) == 0 || obj.GetDeletionTimestamp() == nil {
		return
	}
	how := "its cleanup finished"
	switch {
	case policy != PolicyManage:
		how = fmt.Sprintf("the reconcile policy %q runs no cleanup", policy)
	case ps.released != "":
		how = fmt.Sprintf("annotation %s released it %s", AnnotationReleaseFinalizer, ps.released)
	case !ps.p.cleans:
		how = "this release has no cleanup to run"
	}
	if !ps.letGo(how) {
		return
	}
	if err := ps.saveStatus(ctx); err != nil && !apierrors.IsNotFound(err) {
		ps.req.Log.V(1).Info("clearing the deletion conditions of a released object failed; the next pass tries again", "error", err.Error())
	}
}

// settleLeft ends the pass of an object being deleted that holds none of
// the engine's finalizers: it clears the engine's deletion conditions if
// the pass that released the finalizer could not (a conflict, a stop), and
// otherwise writes nothing.
func (ps saveStage[T]) settleLeft(ctx context.Context) (ctrl.Result, error) {
	co, ok := any(ps.req.Object).(conditions.Object)
	if !ok || conditions.Find(co.GetConditions(), conditions.TypeDeletionBlocked) == nil {
		return ctrl.Result{}, nil
	}
	ps.letGo("the engine's finalizer is gone")
	if err := ps.saveStatus(ctx); err != nil {
		if apierrors.IsConflict(err) {
			return ps.conflictRequeue("status of a released object"), nil
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
func (ps saveStage[T]) letGo(how string) bool {
	obj := ps.req.Object
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
		Message:            fmt.Sprintf("finalizer %q released: %s; the object waits for its other finalizers", ps.releasedFinalizer(), how),
		ObservedGeneration: obj.GetGeneration(),
	}, metav1.Now())
	boundMessages(conds)
	co.SetConditions(conds)
	return true
}

// patchMain writes the changes to metadata and spec (everything but status),
// guarded by the resourceVersion the object was read with.
func (ps saveStage[T]) patchMain(ctx context.Context) error {
	main, _, err := ps.diff()
	if err != nil || main == nil {
		return err
	}
	return ps.sendMain(ctx, main)
}

// save writes what changed: metadata and spec first, then the status
// subresource. gone reports that the object no longer exists.
func (ps saveStage[T]) save(ctx context.Context) (gone bool, err error) {
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
func (ps saveStage[T]) sendStatus(ctx context.Context, status json.RawMessage) error {
	obj := ps.req.Object
	read := obj.GetResourceVersion()
	err := ps.patchStatus(ctx, obj, read, status)
	sent := read
	for range maxStatusRebases {
		if !apierrors.IsConflict(err) {
			break
		}
		rebased, onto, why, rerr := ps.rebase(ctx, sent, status)
		if rerr != nil {
			if apierrors.IsNotFound(rerr) {
				err = rerr
			} else {
				ps.req.Log.V(1).Info("status not rebased: reading the object failed", "error", rerr.Error())
			}
			break
		}
		if why != "" {
			ps.req.Log.V(1).Info("status not rebased", "why", why)
			break
		}
		sent = rebased.GetResourceVersion()
		if onto != nil {
			err = ps.patchStatus(ctx, rebased, sent, onto)
		} else {
			// The stored version holds every change of the pass already.
			err = nil
		}
		if err == nil {
			reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(rebased).Elem())
			// The version the pass read is stale as well: a pass over a
			// cache that still holds it waits (ownWrites.past).
			ps.overwritten = append(ps.overwritten, read)
			ps.req.Log.V(1).Info("status written over another client's change", "read", read, "onto", sent)
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
// or defaults). So the answer goes into an object of its own, which a
// trimming client cuts down to the version (trim.VersionOnly): obj takes
// the version from it, and decodes no copy of what it sent. From a client
// that does not cut it, obj takes the whole answer.
func (ps saveStage[T]) patchStatus(ctx context.Context, obj T, rv string, status json.RawMessage) error {
	body, err := withResourceVersion(map[string]json.RawMessage{"status": status}, rv)
	if err != nil {
		return err
	}
	answer := reflect.New(ps.p.objType).Interface().(T)
	answer.SetNamespace(obj.GetNamespace())
	answer.SetName(obj.GetName())
	ctx, cut := trim.VersionOnly(ctx)
	return ps.write(rv, nil, obj, func() error {
		if err := ps.r.Client.Status().Patch(ctx, answer, client.RawPatch(types.MergePatchType, body)); err != nil {
			return err
		}
		if cut.Load() {
			obj.SetResourceVersion(answer.GetResourceVersion())
		} else {
			reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(answer).Elem())
		}
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
func (ps saveStage[T]) rebase(ctx context.Context, sent string, status json.RawMessage) (rebased T, onto json.RawMessage, why string, err error) {
	fresh := reflect.New(ps.p.objType).Interface().(T)
	if err := ps.p.apiReader.Get(ctx, client.ObjectKeyFromObject(ps.req.Object), fresh); err != nil {
		return rebased, nil, "", err
	}
	obj, fin := ps.req.Object, ps.r.Finalizer
	switch {
	case fresh.GetUID() != ps.req.Original.GetUID():
		return rebased, nil, "the object was replaced", nil
	case fresh.GetResourceVersion() == sent:
		return rebased, nil, "no newer version", nil
	case fresh.GetDeletionTimestamp().IsZero() != obj.GetDeletionTimestamp().IsZero(),
		controllerutil.ContainsFinalizer(fresh, fin) != controllerutil.ContainsFinalizer(obj, fin):
		// What the pass did (claim, act, clean up) no longer holds.
		return rebased, nil, "the object's deletion or the engine's finalizer changed", nil
	}
	rebased, onto, err = rebaseStatus(ps.req.Original, fresh, status, false)
	if errors.Is(err, errStatusOverlap) {
		return rebased, nil, err.Error(), nil
	}
	return rebased, onto, "", err
}

// sendMain writes main to the object, guarded by Original's
// resourceVersion; its answer, taken whole into the pass's object, may
// come without managedFields (trim.Mark), as the object came from a lean
// cache.
func (ps saveStage[T]) sendMain(ctx context.Context, main map[string]json.RawMessage) error {
	rv := ps.req.Original.GetResourceVersion()
	body, err := withResourceVersion(main, rv)
	if err != nil {
		return err
	}
	var sent client.Object
	if ps.r.ownWrites().tracks() {
		sent = ps.req.Object.DeepCopyObject().(client.Object)
	}
	if err := ps.write(rv, sent, ps.req.Object, func() error {
		return ps.r.Client.Patch(trim.Mark(ctx), ps.req.Object, client.RawPatch(types.MergePatchType, body))
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
func (ps saveStage[T]) write(rv string, sent, after client.Object, send func() error) error {
	orig := ps.req.Original
	ps.r.ownWrites().begin(ps.passState)
	err := send()
	made := ""
	if err == nil && after.GetResourceVersion() != rv {
		ps.overwritten = append(ps.overwritten, rv)
		made = after.GetResourceVersion()
	}
	ps.r.ownWrites().end(ps.passState, made)
	if made != "" && sent != nil {
		if changed, cerr := changedOnTheWay(orig, sent, after); cerr != nil || changed {
			// A mutating webhook changed what the pass sent: the version
			// the write made holds more than the pass left, and the steps
			// have not seen it. The pass does not settle, so a pass over
			// that version follows (ownWrites.close).
			ps.mutated = true
			ps.req.Log.V(1).Info("the object came back from the engine's write with changes the pass did not make")
		}
	}
	return err
}

// diff computes the JSON merge patch from Original to Object and splits it
// into the part for the object (nil if empty) and the status (nil if
// unchanged).
func (ps saveStage[T]) diff() (main map[string]json.RawMessage, status json.RawMessage, err error) {
	// Fast path: Object started as a deep copy of Original, so an untouched
	// object is deeply equal to it. When only the status differs, as after
	// most passes, the patch is computed from the statuses alone. Anything
	// else is decided by the patch of the whole object.
	switch same, status, err := statusOnlyDiff(ps.req.Original, ps.req.Object); {
	case err != nil:
		return nil, nil, err
	case same:
		return nil, status, nil
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

// statusOnlyDiff compares two objects of the same Go type field by field.
// same reports that every field but the status is deeply equal; status is
// then the merge patch from the old status to the new one, nil when they
// are equal too. For objects that are not structs with a status field,
// same is false and the caller computes the patch of the whole objects.
func statusOnlyDiff(before, after client.Object) (same bool, status json.RawMessage, err error) {
	bv, av := reflect.ValueOf(before), reflect.ValueOf(after)
	if bv.Type() != av.Type() || bv.Kind() != reflect.Pointer || bv.Elem().Kind() != reflect.Struct || bv.IsNil() || av.IsNil() {
		return false, nil, nil
	}
	bv, av = bv.Elem(), av.Elem()
	idx := statusfield.Index(bv.Type())
	if idx < 0 {
		return false, nil, nil
	}
	for i := range bv.NumField() {
		if i != idx && !reflect.DeepEqual(bv.Field(i).Interface(), av.Field(i).Interface()) {
			return false, nil, nil
		}
	}
	bs, as := bv.Field(idx).Interface(), av.Field(idx).Interface()
	if reflect.DeepEqual(bs, as) {
		return true, nil, nil
	}
	oldJSON, err := json.Marshal(bs)
	if err != nil {
		return false, nil, fmt.Errorf("computing changes: %w", err)
	}
	newJSON, err := json.Marshal(as)
	if err != nil {
		return false, nil, fmt.Errorf("computing changes: %w", err)
	}
	if !jsonObject(oldJSON) || !jsonObject(newJSON) {
		// A status that is null or not an object: the whole patch says
		// how to write it.
		return false, nil, nil
	}
	patch, err := jsonpatch.CreateMergePatch(oldJSON, newJSON)
	if err != nil {
		return false, nil, fmt.Errorf("computing changes: %w", err)
	}
	if len(patch) <= 2 { // "{}": equal once encoded
		return true, nil, nil
	}
	return true, patch, nil
}

// jsonObject reports whether data encodes a JSON object.
func jsonObject(data []byte) bool { return len(data) > 0 && data[0] == '{' }

// boundMessages cuts every message in conds to what the API server
// accepts (conditions.Bound), so the status write cannot exceed its limits.
func boundMessages(conds []metav1.Condition) {
	for i := range conds {
		conds[i].Message = conditions.Bound(conds[i].Message)
	}
}

// errStatusOverlap is rebaseStatus's answer when another writer changed a
// condition type or a status field that the pass changed too, to another
// value.
var errStatusOverlap = errors.New("another client changed what the pass changed")

// rebaseStatus applies the pass's status changes to fresh, a newer version
// of the object than orig, the version the pass read: patch is the merge
// patch from orig's status to the pass's. It returns fresh with
// those changes, and the merge patch from fresh's status to the result,
// nil when fresh holds them already.
//
// The changes are taken three ways, from orig to the pass's status and
// from orig to fresh's. Conditions (status.conditions) go by type: a type
// the pass added, changed or removed is the pass's, and the others keep
// what fresh holds. The other members of the status go field by field
// (objects member by member, anything else whole). Where both changed the
// same condition type or field to different values, the result is
// errStatusOverlap, unless mineWins says to take the pass's value there.
func rebaseStatus[T client.Object](orig, fresh T, patch json.RawMessage, mineWins bool) (rebased T, onto json.RawMessage, err error) {
	origJSON, err := json.Marshal(orig)
	if err != nil {
		return rebased, nil, fmt.Errorf("rebasing the status: %w", err)
	}
	freshJSON, err := json.Marshal(fresh)
	if err != nil {
		return rebased, nil, fmt.Errorf("rebasing the status: %w", err)
	}
	wrapped, err := json.Marshal(map[string]json.RawMessage{"status": patch})
	if err != nil {
		return rebased, nil, fmt.Errorf("rebasing the status: %w", err)
	}
	mineJSON, err := jsonpatch.MergePatch(origJSON, wrapped)
	if err != nil {
		return rebased, nil, fmt.Errorf("rebasing the status: %w", err)
	}
	var statuses [3]any
	for i, doc := range [][]byte{origJSON, mineJSON, freshJSON} {
		if statuses[i], err = statusValue(doc); err != nil {
			return rebased, nil, fmt.Errorf("rebasing the status: %w", err)
		}
		if statuses[i] == absent {
			// No status yet: as good as an empty one.
			statuses[i] = map[string]any{}
		}
	}
	merged, ok := mergeValue(statuses[0], statuses[1], statuses[2], statusMember, mineWins)
	if !ok {
		return rebased, nil, errStatusOverlap
	}
	theirs, err := json.Marshal(statuses[2])
	if err != nil {
		return rebased, nil, fmt.Errorf("rebasing the status: %w", err)
	}
	result, err := json.Marshal(merged)
	if err != nil {
		return rebased, nil, fmt.Errorf("rebasing the status: %w", err)
	}
	if !jsonObject(theirs) || !jsonObject(result) {
		// A status that is not an object on either side: nothing to
		// merge member by member.
		return rebased, nil, errStatusOverlap
	}
	if onto, err = jsonpatch.CreateMergePatch(theirs, result); err != nil {
		return rebased, nil, fmt.Errorf("rebasing the status: %w", err)
	}
	if len(onto) <= 2 { // "{}"
		return fresh, nil, nil
	}
	wrapped, err = json.Marshal(map[string]json.RawMessage{"status": onto})
	if err != nil {
		return rebased, nil, fmt.Errorf("rebasing the status: %w", err)
	}
	rebasedJSON, err := jsonpatch.MergePatch(freshJSON, wrapped)
	if err != nil {
		return rebased, nil, fmt.Errorf("rebasing the status: %w", err)
	}
	rebased = reflect.New(reflect.TypeOf(fresh).Elem()).Interface().(T)
	if err := json.Unmarshal(rebasedJSON, rebased); err != nil {
		return rebased, nil, fmt.Errorf("rebasing the status: %w", err)
	}
	return rebased, onto, nil
}

// statusValue decodes the status of the JSON object doc, numbers as
// json.Number so that none is rounded; absent when it has none.
func statusValue(doc []byte) (any, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(doc, &members); err != nil {
		return nil, err
	}
	raw, ok := members["status"]
	if !ok {
		return absent, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// absentValue stands for a member a JSON object does not have, in
// mergeValue.
type absentValue struct{}

// absent is the absentValue.
var absent any = absentValue{}

// member returns v's member k, or absent.
func member(v any, k string) any {
	if m, ok := v.(map[string]any); ok {
		if x, ok := m[k]; ok {
			return x
		}
	}
	return absent
}

// memberKind says what a value is to mergeValue.
type memberKind int

const (
	// plainMember is any value below the status but its conditions.
	plainMember memberKind = iota
	// statusMember is the status itself.
	statusMember
	// conditionsMember is status.conditions.
	conditionsMember
)

// mergeValue merges three versions of a decoded JSON value: base, the
// version the pass read, mine, the pass's, and theirs, the stored one. A
// value one side left as base was takes the other side's; one both sides
// changed alike is kept. Otherwise objects are merged member by member,
// the status's conditions by type (mergeConditions), and anything else
// is a conflict: ok is false, or, with mineWins, the pass's value.
func mergeValue(base, mine, theirs any, kind memberKind, mineWins bool) (merged any, ok bool) {
	switch {
	case reflect.DeepEqual(mine, base):
		return theirs, true
	case reflect.DeepEqual(theirs, base), reflect.DeepEqual(theirs, mine):
		return mine, true
	case kind == conditionsMember:
		return mergeConditions(base, mine, theirs, mineWins)
	}
	m, okM := mine.(map[string]any)
	t, okT := theirs.(map[string]any)
	if !okM || !okT {
		return mine, mineWins
	}
	out := make(map[string]any, len(t))
	for _, side := range []map[string]any{m, t} {
		for k := range side {
			if _, done := out[k]; done {
				continue
			}
			sub := plainMember
			if kind == statusMember && k == "conditions" {
				sub = conditionsMember
			}
			v, ok := mergeValue(member(base, k), member(m, k), member(t, k), sub, mineWins)
			if !ok {
				return nil, false
			}
			if v != absent {
				out[k] = v
			}
		}
	}
	return out, true
}

// mergeConditions merges three versions of a list of conditions by type
// (see mergeValue): the types the pass added, changed or removed take the
// pass's condition, unless theirs changed that type too, to another value;
// every other condition of theirs stays as it is, where it is. Conditions
// the pass added come after theirs, in the pass's order. A list that is
// not one of objects with distinct string types is a conflict. With
// mineWins, the pass's condition is taken where theirs changed it too,
// and the pass's list where a list cannot be taken apart.
func mergeConditions(base, mine, theirs any, mineWins bool) (any, bool) {
	b, okB := conditionsByType(base)
	m, okM := conditionsByType(mine)
	t, okT := conditionsByType(theirs)
	if !okB || !okM || !okT {
		return mine, mineWins
	}
	// The pass's types in its order, then those it removed.
	var types []string
	for _, list := range []any{mine, base} {
		list, _ := list.([]any)
		for _, c := range list {
			if typ := c.(map[string]any)["type"].(string); !slices.Contains(types, typ) {
				types = append(types, typ)
			}
		}
	}
	out, _ := theirs.([]any)
	out = slices.Clone(out)
	for _, typ := range types {
		bc, mc, tc := b[typ], m[typ], t[typ]
		if reflect.DeepEqual(bc, mc) || reflect.DeepEqual(tc, mc) {
			continue
		}
		if !reflect.DeepEqual(tc, bc) && !mineWins {
			return nil, false
		}
		i := slices.IndexFunc(out, func(c any) bool { return c.(map[string]any)["type"] == typ })
		switch {
		case mc == nil && i < 0:
		case mc == nil:
			out = slices.Delete(out, i, i+1)
		case i >= 0:
			out[i] = mc
		default:
			out = append(out, mc)
		}
	}
	if len(out) == 0 && theirs == absent {
		return absent, true
	}
	return out, true
}

// conditionsByType indexes a decoded list of conditions by type; absent
// is an empty list. ok is false for anything but a list of objects with
// distinct string types.
func conditionsByType(v any) (map[string]any, bool) {
	if v == absent {
		return map[string]any{}, true
	}
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	byType := make(map[string]any, len(list))
	for _, c := range list {
		obj, ok := c.(map[string]any)
		if !ok {
			return nil, false
		}
		typ, ok := obj["type"].(string)
		if !ok || byType[typ] != nil {
			return nil, false
		}
		byType[typ] = obj
	}
	return byType, true
}
