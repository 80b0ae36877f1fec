package bosun

import (
	"errors"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// tracerName is the name of the OpenTelemetry tracer the engine makes its
// spans with.
const tracerName = "github.com/bosunkit/bosun"

// The attributes of the engine's spans, besides OpenTelemetry's own
// k8s.namespace.name.
const (
	// attrController is the reconciler's name, on every span.
	attrController = "bosun.controller"
	// attrObject is the reconciled object's name, on the pass's span.
	attrObject = "bosun.object"
	// attrTrigger is why the pass ran (Trigger.String), on its span.
	attrTrigger = "bosun.trigger"
	// attrTriggerKind is the kind of the trigger (Trigger.Kind).
	attrTriggerKind = "bosun.trigger.kind"
	// attrResult is how a pass or step ended: "done", "requeue",
	// "requeue_after", "stopped" (ErrStop, no failure) or "error".
	attrResult = "bosun.result"
	// attrRequeueAfter is the requeue delay a pass or step asked for, in
	// seconds.
	attrRequeueAfter = "bosun.requeue_after_seconds"
	// attrStep and attrPhase name the step and its method on a step's
	// span.
	attrStep  = "bosun.step"
	attrPhase = "bosun.phase"

	attrNamespace = "k8s.namespace.name"
)

// defaultTracerProvider is otel's global provider as it is before a
// program sets one: while it is still the global one, tracing is off.
var defaultTracerProvider = otel.GetTracerProvider()

// tracerCache keeps the tracer of the provider it was made from.
type tracerCache struct {
	tp trace.TracerProvider
	t  trace.Tracer
}

// tracerFor returns the tracer of the passes of a reconciler whose
// Options.TracerProvider is tp, or nil when tracing is off: no
// TracerProvider and no global one set. cache keeps the tracer made last.
func tracerFor(tp trace.TracerProvider, cache *atomic.Pointer[tracerCache]) trace.Tracer {
	if tp == nil {
		tp = otel.GetTracerProvider()
		if tp == defaultTracerProvider {
			return nil
		}
	}
	if c := cache.Load(); c != nil && c.tp == tp {
		return c.t
	}
	t := tp.Tracer(tracerName)
	cache.Store(&tracerCache{tp: tp, t: t})
	return t
}

// endSpan records the outcome of a pass or step on span, sets its status
// and ends it. ErrStop is no failure: a step that returns it, alone or
// wrapped, has the result "stopped" and no error status.
func endSpan(span trace.Span, res ctrl.Result, err error) {
	switch {
	case err != nil && withoutStop(err) == nil:
		span.SetAttributes(attribute.String(attrResult, "stopped"))
		if res.RequeueAfter > 0 {
			span.SetAttributes(attribute.Float64(attrRequeueAfter, res.RequeueAfter.Seconds()))
		}
	case err != nil:
		span.SetAttributes(attribute.String(attrResult, "error"))
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		if errors.Is(err, reconcile.TerminalError(nil)) {
			span.SetAttributes(attribute.Bool("bosun.terminal", true))
		}
	case res.RequeueAfter > 0:
		span.SetAttributes(attribute.String(attrResult, "requeue_after"), attribute.Float64(attrRequeueAfter, res.RequeueAfter.Seconds()))
	case res.Requeue: //nolint:staticcheck // Requeue is deprecated but still honoured by controller-runtime.
		span.SetAttributes(attribute.String(attrResult, "requeue"))
	default:
		span.SetAttributes(attribute.String(attrResult, "done"))
	}
	span.End()
}
