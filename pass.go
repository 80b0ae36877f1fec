package bosun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/panics"
	"github.com/bosunkit/bosun/internal/statusfield"
)

// Pass is what a step sees of one reconcile: the object and everything
// needed to act on it.
type Pass[T client.Object] struct {
	// Controller is the name of the reconciler (Reconciler.Name), which
	// steps use as their field owner for server-side apply.
	Controller string
	// Object is the working copy of the object. Steps change it; the engine
	// is its one writer: at the end of the pass it writes what changed since
	// Original (metadata and spec, then the status subresource), guarded by
	// Original's resourceVersion, and writes nothing when nothing changed.
	// A step that must persist a change before the pass ends (a mark that
	// must survive a crash in the next call) uses Commit.
	Object T
	// Original is the object as the pass last knew it stored: as loaded
	// (after the engine committed its claim), then as Commit or Reload left
	// it. It is the base of the engine's final write. Steps must neither
	// change nor replace it.
	Original T
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads from the API server directly, bypassing the cache.
	APIReader client.Reader
	// Log is the logger of this reconcile, with the controller name, the
	// object's namespace and name, and the reconcile ID.
	Log logr.Logger
	// Recorder records events.k8s.io events. It may discard them, but it is
	// never nil.
	Recorder events.EventRecorder
	// Policy is the reconcile policy in force for this reconcile.
	Policy Policy
	// Values carries data from one step to later steps of the same reconcile.
	Values *Values
	// Trigger is why this pass runs: a watch event (of which kind and
	// object), a requeue, a resync, a request annotation, an Enqueuer.
	Trigger Trigger

	metrics *metricSet
	// tracer makes a span per step; nil when tracing is off.
	tracer trace.Tracer
	// steps records the steps run for the PassObservers; nil when there
	// are none.
	steps *stepLog
	// write, when set, makes each write of the object by the pass (see
	// passState.write).
	write func(rv string, sent, after client.Object, send func() error) error
	// lastCleanup is set for the Cleanup that AnnotationReleaseFinalizer
	// asks for before the finalizer goes.
	lastCleanup bool
	// statusMu guards the object's status for UpdateConditions, which
	// the steps of a ParallelJoin call at once, and for the status
	// steps (NewStatusStep).
	statusMu sync.Mutex
	// parallel counts the ParallelJoins running their steps at once on
	// this pass: Commit and Reload, which replace Object and Original,
	// refuse to run then.
	parallel atomic.Int32
}

// errReplaceInParallel is the error of Commit and Reload called by a step
// of a ParallelJoin.
var errReplaceInParallel = errors.New("the steps of a ParallelJoin share the pass's object, which Commit and Reload replace: call them from a step outside one (Join runs its steps one after the other)")

// LastCleanup reports whether this pass runs the last Cleanup before the
// engine releases the finalizer whatever it returns, as
// AnnotationReleaseFinalizer "true" asks. A step that paces its external
// calls (a backoff after refused deletes, a wait between polls) makes
// them now: nothing will call it again.
func (r *Pass[T]) LastCleanup() bool { return r.lastCleanup }

// Commit writes the changes made so far to the object's metadata and spec
// (everything but its status) at once, guarded by the resourceVersion of
// Original, and advances the pass's view: Original becomes the object
// as written, and Object the same with the status this pass has computed
// so far. The engine's final write then builds on it. Nothing is written
// when nothing changed.
//
// A Conflict (the object changed, or was deleted and made again, since the
// pass read it) or a NotFound is returned wrapped; the step should end the
// pass with it (the engine requeues a Conflict quietly), or Reload and try
// again.
//
// A step of a ParallelJoin must not commit: the other steps read and
// change the same Object meanwhile. Commit then writes nothing and
// returns a terminal error.
func (r *Pass[T]) Commit(ctx context.Context) error {
	if r.parallel.Load() > 0 {
		return fmt.Errorf("committing: %w", reconcile.TerminalError(errReplaceInParallel))
	}
	data, err := client.MergeFrom(r.Original).Data(r.Object)
	if err != nil {
		return fmt.Errorf("committing: computing changes: %w", err)
	}
	var parts map[string]json.RawMessage
	if err := json.Unmarshal(data, &parts); err != nil {
		return fmt.Errorf("committing: computing changes: %w", err)
	}
	delete(parts, "status")
	if len(parts) == 0 {
		return nil
	}
	rv := r.Original.GetResourceVersion()
	body, err := withResourceVersion(parts, rv)
	if err != nil {
		return fmt.Errorf("committing: %w", err)
	}
	written := r.Original.DeepCopyObject().(T)
	send := func() error { return r.Client.Patch(ctx, written, client.RawPatch(types.MergePatchType, body)) }
	if r.write != nil {
		err = r.write(rv, r.Object, written, send)
	} else {
		err = send()
	}
	if err != nil {
		return fmt.Errorf("committing: %w", err)
	}
	r.advance(written)
	return nil
}

// Reload reads the object again from the API server (through APIReader)
// and makes it the pass's view: Original becomes the object as stored,
// and Object the same with the status changes this pass has made so far:
// the condition types and status fields it changed take its values, and
// the others keep what is stored, such as another controller's
// conditions. Changes to Object's metadata and spec that were not
// committed are dropped. Use it after Commit failed with a Conflict. As
// Commit, it refuses to run in a step of a ParallelJoin.
func (r *Pass[T]) Reload(ctx context.Context) error {
	if r.parallel.Load() > 0 {
		return fmt.Errorf("reloading: %w", reconcile.TerminalError(errReplaceInParallel))
	}
	fresh := r.Original.DeepCopyObject().(T)
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(r.Object), fresh); err != nil {
		return fmt.Errorf("reloading: %w", err)
	}
	mine := r.Original.DeepCopyObject().(T)
	if !statusfield.Copy(mine, r.Object) {
		// A status the engine cannot take apart: the pass's, whole.
		r.advance(fresh)
		return nil
	}
	same, patch, err := statusOnlyDiff(r.Original, mine)
	if err != nil || !same {
		r.advance(fresh)
		return nil
	}
	obj := fresh.DeepCopyObject().(T)
	if patch != nil {
		rebased, onto, err := rebaseStatus(r.Original, fresh, patch, true)
		if err != nil {
			r.advance(fresh)
			return nil
		}
		if onto != nil {
			obj = rebased
		}
	}
	r.Original, r.Object = fresh, obj
	return nil
}

// advance makes stored the pass's Original, and a copy of it with
// Object's status its Object.
func (r *Pass[T]) advance(stored T) {
	obj := stored.DeepCopyObject().(T)
	statusfield.Copy(obj, r.Object)
	r.Original, r.Object = stored, obj
}

// Deleting reports whether the object is being deleted.
func (r *Pass[T]) Deleting() bool {
	return !r.Object.GetDeletionTimestamp().IsZero()
}

// UpdateConditions calls change with the status conditions of Object and
// stores the list it leaves, holding the pass's lock on the status while
// it runs, and reports whether Object keeps conditions (implements
// conditions.Object); when it does not, change is not called. The
// conditions are one list shared by every step, so steps that run at once
// (in a ParallelJoin) change theirs only through it; the steps of
// packages ref and children do, and a status step (NewStatusStep) holds
// the same lock. change should do no more than edit the list
// (conditions.Set, say): the lock is held while it runs.
func (r *Pass[T]) UpdateConditions(change func(conds *[]metav1.Condition)) bool {
	co, ok := any(r.Object).(conditions.Object)
	if !ok {
		return false
	}
	r.statusMu.Lock()
	defer r.statusMu.Unlock()
	conds := co.GetConditions()
	change(&conds)
	co.SetConditions(conds)
	return true
}

// nameTakenSuffix follows the child's kind in the reason of CreateChild's
// error for a name held by an object of another owner: <Kind>NameTaken,
// one reason per kind of child, so no constant names them all; an
// operator declares the one of its kind (as the cronjob example's
// ReasonJobNameTaken).
const nameTakenSuffix = "NameTaken"

// CreateChild creates obj as a child of the pass's object. It puts obj in
// the object's namespace when obj names none, makes the object obj's
// controller (an owner reference with controller and blockOwnerDeletion
// set), creates obj through Client with Controller as the field owner, and
// records a Normal event SuccessfulCreate, "created <kind> <name>" with the
// kind in lower case, about the object.
//
// A child whose name says what it is for (the run of a schedule, the
// backup of a day) is made once however the passes go: when an object of
// that name exists already, CreateChild reads it through APIReader into
// obj, so a cache that does not show it yet makes no difference. If the
// pass's object controls it, an earlier pass made it (perhaps one that
// died before it recorded so): CreateChild returns nil, with no event, and
// obj is the child as stored. If not, the name is held by an object of
// another owner, which is left as it is: the error is a conditions.Warning
// with the reason <Kind>NameTaken ("JobNameTaken" for a Job) that names
// it, so Ready says why the child is missing and the pass is retried with
// backoff. Any other failure is returned wrapped, with the kind and the
// name.
func (r *Pass[T]) CreateChild(ctx context.Context, obj client.Object) error {
	scheme := r.Client.Scheme()
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return fmt.Errorf("create child %s: %w", obj.GetName(), err)
	}
	kind := strings.ToLower(gvk.Kind)
	if obj.GetNamespace() == "" {
		obj.SetNamespace(r.Object.GetNamespace())
	}
	if err := controllerutil.SetControllerReference(r.Object, obj, scheme); err != nil {
		return fmt.Errorf("create %s %s: %w", kind, obj.GetName(), err)
	}
	err = r.Client.Create(ctx, obj, client.FieldOwner(r.Controller))
	switch {
	case err == nil:
		r.Recorder.Eventf(r.Object, obj, corev1.EventTypeNormal, string(conditions.ReasonSuccessfulCreate), "Create", "created %s %s", kind, obj.GetName())
		return nil
	case !apierrors.IsAlreadyExists(err):
		return fmt.Errorf("create %s %s: %w", kind, obj.GetName(), err)
	}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return fmt.Errorf("create %s %s: it exists, and reading it failed: %w", kind, obj.GetName(), err)
	}
	if !metav1.IsControlledBy(obj, r.Object) {
		owner, _ := apiutil.GVKForObject(r.Object, scheme)
		return conditions.Warningf(conditions.Reason(gvk.Kind+nameTakenSuffix), "%s %s exists and is not controlled by this %s; delete or rename it",
			kind, obj.GetName(), owner.Kind)
	}
	return nil
}

// ListChildren lists into list, through reader, the objects of the list's
// kind that the pass's object controls, in the object's namespace (in
// every namespace for a cluster-scoped object) and selected by opts; the
// others are left out of list. With Client as the reader it lists the
// cache. With APIReader it lists the API server, which a step does before
// it decides what to create or delete among children that a pass may have
// made moments ago, which the cache may not show yet.
func (r *Pass[T]) ListChildren(ctx context.Context, reader client.Reader, list client.ObjectList, opts ...client.ListOption) error {
	opts = append([]client.ListOption{client.InNamespace(r.Object.GetNamespace())}, opts...)
	if err := reader.List(ctx, list, opts...); err != nil {
		return fmt.Errorf("listing the children of %s: %w", klog.KObj(r.Object), err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return fmt.Errorf("listing the children of %s: %w", klog.KObj(r.Object), err)
	}
	items = slices.DeleteFunc(items, func(item runtime.Object) bool {
		obj, ok := item.(metav1.Object)
		return !ok || !metav1.IsControlledBy(obj, r.Object)
	})
	if err := meta.SetList(list, items); err != nil {
		return fmt.Errorf("listing the children of %s: %w", klog.KObj(r.Object), err)
	}
	return nil
}

// Run runs the Do of s for this pass, as the engine runs a step of
// Reconciler.Steps: a panic in it is recovered and returned as a
// *conditions.PanicError (and logged with its stack), and its duration and
// error are recorded in the engine's metrics, trace and pass report. A
// Composite's Do runs its steps with it, and combines their outcomes as it
// likes.
func (r *Pass[T]) Run(ctx context.Context, s Step[T]) (ctrl.Result, error) {
	return r.call(ctx, StepName(s), phaseDo, s.Do)
}

// call runs fn as phase of the step called name: it recovers a panic into a
// *conditions.PanicError and records the duration and any error.
func (r *Pass[T]) call(ctx context.Context, name string, phase phase, fn func(context.Context, *Pass[T]) (ctrl.Result, error)) (res ctrl.Result, err error) {
	start := time.Now()
	var span trace.Span
	if r.tracer != nil {
		ctx, span = r.tracer.Start(ctx, phase+" "+name, trace.WithAttributes(
			attribute.String(attrController, r.Controller),
			attribute.String(attrStep, name),
			attribute.String(attrPhase, phase),
		))
	}
	slot := r.steps.begin(name, phase, start)
	if pe := panics.Catch(name, func() { res, err = fn(ctx, r) }); pe != nil {
		r.Log.Error(pe, "step panicked", "step", name, "phase", phase, "stack", string(pe.Stack))
		res, err = ctrl.Result{}, pe
	}
	d := time.Since(start)
	r.metrics.observe(name, phase, d, err)
	r.steps.end(slot, d, res, err)
	if span != nil {
		endSpan(span, res, err)
	}
	return res, err
}

// Metrics returns the registerer of the reconciler running the pass
// (Options.Metrics, or controller-runtime's metrics.Registry when that
// is nil). Steps that keep metrics of their own register them there, once
// per registry (a prometheus.AlreadyRegisteredError tells them to use the
// collector found), and label them with Controller.
func (r *Pass[T]) Metrics() prometheus.Registerer {
	if r.metrics == nil {
		return metrics.Registry
	}
	return r.metrics.reg
}
