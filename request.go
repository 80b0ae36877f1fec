package bosun

import (
	"context"
	"runtime/debug"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/flow"
)

// Request is what a step sees of one reconcile: the object and everything
// needed to act on it.
type Request[T client.Object] struct {
	// Controller is the name of the reconciler (Reconciler.Name), which
	// steps use as their field owner for server-side apply.
	Controller string
	// Object is the working copy of the object. Steps change it; the engine
	// writes back what changed at the end of the reconcile (metadata and spec,
	// and the status subresource, separately).
	Object T
	// Original is the object as it was loaded (after the engine committed its
	// claim). Steps must not change it.
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

	metrics *metricSet
}

// Deleting reports whether the object is being deleted.
func (r *Request[T]) Deleting() bool {
	return !r.Object.GetDeletionTimestamp().IsZero()
}

// Action returns a flow.Action, described by the step's name, that runs
// s.Do for this request when it runs. A panic in s.Do is recovered into a
// *flow.PanicError, and the step's duration and errors are recorded in the
// engine's metrics. Composites use it to run their steps with the
// combinators of package flow.
func (r *Request[T]) Action(s Step[T]) flow.Action {
	name := StepName(s)
	return flow.New(name, func(ctx context.Context) (ctrl.Result, error) {
		return r.call(ctx, name, PhaseDo, s.Do)
	})
}

// call runs fn as phase of the step called name: it recovers a panic into a
// *flow.PanicError and records the duration and any error.
func (r *Request[T]) call(ctx context.Context, name string, phase Phase, fn func(context.Context, *Request[T]) (ctrl.Result, error)) (res ctrl.Result, err error) {
	start := time.Now()
	defer func() {
		if v := recover(); v != nil {
			pe := &flow.PanicError{Action: name, Value: v, Stack: debug.Stack()}
			r.Log.Error(pe, "step panicked", "step", name, "phase", string(phase), "stack", string(pe.Stack))
			res, err = ctrl.Result{}, pe
		}
		r.metrics.observe(name, phase, time.Since(start), err)
	}()
	return fn(ctx, r)
}
