package managed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/flow"
)

// call runs fn, turning a panic into a *flow.PanicError.
func call[R any](name string, fn func() (R, error)) (r R, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &flow.PanicError{Action: name, Value: v, Stack: debug.Stack()}
		}
	}()
	return fn()
}

// callWithin runs fn, an external call, with a context that ends after
// timeout, and recovers a panic like call. An error the call returns after
// that deadline says that the call timed out, and after how long.
func callWithin[R any](ctx context.Context, name string, timeout time.Duration, fn func(ctx context.Context) (R, error)) (R, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, err := call(name, func() (R, error) { return fn(cctx) })
	if err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("timed out after %s: %w", timeout, err)
	}
	return r, err
}

// outcomeUnknown reports whether err leaves it unknown whether the call
// that returned it took effect (see ErrOutcomeUnknown).
func outcomeUnknown(err error) bool {
	if errors.Is(err, ErrOutcomeUnknown) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// caller is the stage that calls the external system: Connect and
// Observe, and, through callExternal, every other call, within the step's
// hooks, limits and deadlines.
type caller[T client.Object] struct{ *Step[T] }

// connect calls the Connector and returns the client with the function that
// disconnects it. Disconnect runs even when ctx has ended, within the call
// timeout.
//
// The pass holds a slot of the step's Limiter from before Connect until
// it has disconnected.
func (s caller[T]) connect(ctx context.Context, req *bosun.Pass[T]) (ExternalClient[T], func(), error) {
	leave, waited, err := s.cfg.limiter.enter(ctx)
	if s.cfg.limiter.limited() {
		s.meters.of(req).wait.Observe(waited.Seconds())
	}
	if err != nil {
		return nil, nil, s.rec.fail(ReasonConnectFailed, fmt.Errorf("connecting to the external system: %w", err))
	}
	cl, err := limitedCall(ctx, s.Step, req, opConnect, func(ctx context.Context) (ExternalClient[T], error) {
		return s.connector.Connect(ctx, req.Object)
	})
	if err == nil && cl == nil {
		err = errors.New("the connector returned no client")
	}
	if err != nil {
		leave()
		return nil, nil, s.rec.fail(ReasonConnectFailed, fmt.Errorf("connecting to the external system: %w", err))
	}
	s.learn(cl)
	done := func() {
		defer leave()
		d, ok := cl.(Disconnecter)
		if !ok {
			return
		}
		_, err := callWithin(context.WithoutCancel(ctx), s.cfg.name+" disconnect", s.cfg.callTimeout, func(ctx context.Context) (struct{}, error) {
			return struct{}{}, d.Disconnect(ctx)
		})
		if err != nil {
			req.Log.Error(err, "disconnecting from the external system failed")
		}
	}
	return cl, done, nil
}

// learn notes what the step's pacing needs to know of its clients,
// from cl: whether they observe in batches, and the credential keys they
// name.
func (s caller[T]) learn(cl ExternalClient[T]) {
	ps := &s.memory.polls
	if _, ok := cl.(BatchObserver[T]); ok && !ps.batching.Load() {
		ps.batching.Store(true)
	}
	if rep, ok := cl.(CredentialRepairer[T]); ok && ps.keys.Load() == nil {
		keys := rep.CredentialKeys()
		ps.keys.Store(&keys)
	}
}

// observe calls Observe for obj.
func (s caller[T]) observe(ctx context.Context, req *bosun.Pass[T], cl ExternalClient[T], obj T) (Observation, error) {
	obs, err := callExternal(ctx, s.Step, req, opObserve, obj, func(ctx context.Context) (Observation, error) {
		return cl.Observe(ctx, obj)
	})
	if err != nil {
		return obs, s.rec.fail(ReasonObserveFailed, fmt.Errorf("observing %s: %w", describe(ExternalName(obj)), err))
	}
	return obs, nil
}

// callExternal runs fn, the call op of the ExternalClient for obj, as
// limitedCall does, between the hooks of the step.
func callExternal[T client.Object, R any](ctx context.Context, s *Step[T], req *bosun.Pass[T], op string, obj T, fn func(ctx context.Context) (R, error)) (R, error) {
	if planned(ctx, s, op, obj) {
		var zero R
		return zero, nil
	}
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
	m := s.meters.of(req)
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

// errNotBatchObserver is the error of a round whose client turned out not
// to be a BatchObserver.
var errNotBatchObserver = errors.New("the connected client is not a BatchObserver")

// observeBatch observes objs in one call of the BatchObserver, the
// Connector's, or else that of a client connected for the pass req, within
// the step's hook, limits and deadline, counted in its metrics as
// "observe batch".
func (s caller[T]) observeBatch(ctx context.Context, req *bosun.Pass[T], objs []T) ([]Observation, error) {
	bo, ok := s.connector.(BatchObserver[T])
	var done func()
	if ok {
		leave, waited, err := s.cfg.limiter.enter(ctx)
		if s.cfg.limiter.limited() {
			s.meters.of(req).wait.Observe(waited.Seconds())
		}
		if err != nil {
			return nil, err
		}
		done = leave
	} else {
		cl, d, err := s.connect(ctx, req)
		if err != nil {
			return nil, err
		}
		done = d
		if bo, ok = cl.(BatchObserver[T]); !ok {
			done()
			return nil, errNotBatchObserver
		}
	}
	defer done()
	call := ExternalCall{Step: s.cfg.name, Op: opObserveBatch}
	h := s.cfg.hook
	if h != nil {
		if err := h.BeforeCall(ctx, call); err != nil {
			return nil, err
		}
	}
	obs, err := limitedCall(ctx, s.Step, req, opObserveBatch, func(ctx context.Context) ([]Observation, error) {
		return bo.ObserveBatch(ctx, objs)
	})
	if h != nil {
		err = h.AfterCall(ctx, call, err)
	}
	if err == nil && len(obs) != len(objs) {
		err = fmt.Errorf("ObserveBatch returned %d observations for %d objects", len(obs), len(objs))
	}
	return obs, err
}
