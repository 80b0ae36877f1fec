package managed

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
)

// Operations of the ExternalClient, as ExternalCall.Op names them.
const (
	OpObserve           = "observe"
	OpCreate            = "create"
	OpUpdate            = "update"
	OpDelete            = "delete"
	OpRepairCredentials = "repair credentials"
	OpPollOperation     = "poll operation"
	// OpConnect is the call of the Connector, which CallHook does not
	// see; metrics and the Limiter count it.
	OpConnect = "connect"
)

// ExternalCall describes one call the step makes of its ExternalClient.
type ExternalCall struct {
	// Step is the step's name (WithName).
	Step string
	// Op is one of the Op constants.
	Op string
	// Namespace and Name identify the object the call is for, UID which
	// incarnation of it.
	Namespace, Name string
	UID             types.UID
	// ExternalName is the object's external name when the call starts; it
	// may be empty before a Create of a provider-named resource.
	ExternalName string
}

// Mutating reports whether the call may change the external system: every
// operation but Observe and PollOperation.
func (c ExternalCall) Mutating() bool { return c.Op != OpObserve && c.Op != OpPollOperation }

// CallHook sees every call the step makes of its ExternalClient (not Connect or
// Disconnect). BeforeCall runs first: a non-nil error is what the call
// returns, and the ExternalClient is not called. AfterCall runs once the call has
// returned, with its error; what it returns replaces that error. Both run
// on the call's goroutine with the call's context.
//
// Tests use it to record what an operator does to an external system and to
// inject faults there: a crash after the k-th mutating call, or a call that
// took effect and whose answer was lost (AfterCall returning an error that
// wraps ErrOutcomeUnknown). Package bosuntest/faults provides one.
type CallHook interface {
	BeforeCall(ctx context.Context, call ExternalCall) error
	AfterCall(ctx context.Context, call ExternalCall, err error) error
}

// WithCallHook sets the hook that sees every call of the ExternalClient. Nil, the
// default, means none.
func WithCallHook(h CallHook) Option { return func(c *config) { c.hook = h } }

// callExternal runs fn, the call op of the ExternalClient for obj, as
// limitedCall does, between the hooks of the step.
func callExternal[T client.Object, R any](ctx context.Context, s *Step[T], req *bosun.Pass[T], op string, obj T, fn func(ctx context.Context) (R, error)) (R, error) {
	h := s.cfg.hook
	if h == nil {
		return limitedCall(ctx, s, req, op, fn)
	}
	call := ExternalCall{Step: s.cfg.name, Op: op, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID(), ExternalName: ExternalName(obj)}
	if err := h.BeforeCall(ctx, call); err != nil {
		var zero R
		return zero, err
	}
	r, err := limitedCall(ctx, s, req, op, fn)
	return r, h.AfterCall(ctx, call, err)
}

// limitedCall runs fn, the call op of the external system for the pass
// req, once the rate of the step's Limiter lets it start, within the call
// timeout, and records it in the step's metrics.
func limitedCall[T client.Object, R any](ctx context.Context, s *Step[T], req *bosun.Pass[T], op string, fn func(ctx context.Context) (R, error)) (R, error) {
	m := s.metricsFor(req)
	waited, err := s.cfg.limiter.pace(ctx)
	if s.cfg.limiter.limited() {
		m.wait.Observe(waited.Seconds())
	}
	if err != nil {
		var zero R
		return zero, err
	}
	m.inFlight.Inc()
	defer m.inFlight.Dec()
	start := time.Now()
	r, err := callWithin(ctx, s.cfg.name+" "+op, s.cfg.callTimeout, fn)
	m.callDuration.WithLabelValues(op).Observe(time.Since(start).Seconds())
	result := resultSuccess
	if err != nil {
		result = resultError
	}
	m.calls.WithLabelValues(op, result).Inc()
	return r, err
}
