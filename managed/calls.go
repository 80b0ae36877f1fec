package managed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/internal/panics"
)

// call runs fn, turning a panic into a *conditions.PanicError.
func call[R any](name string, fn func() (R, error)) (r R, err error) {
	if pe := panics.Catch(name, func() { r, err = fn() }); pe != nil {
		return r, pe
	}
	return r, err
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
type caller[T client.Object] struct {
	connector Connector[T]
	// step is the step's name; timeout bounds each call (Timing.Call).
	step    string
	timeout time.Duration
	hook    CallHook
	limiter *Limiter
	// keys are where the step keeps its annotations; each call sees
	// the step's external name under AnnotationExternalName.
	keys   recordKeys
	meters *meters[T]
	rec    *recorder[T]
	// polls learns, at a Connect, whether the clients observe in
	// batches and which credential keys they name.
	polls *polls
}

// newCaller returns the caller of a step configured by cfg, which
// connects through c.
func newCaller[T client.Object](cfg *config, c Connector[T], m *meters[T], rec *recorder[T], p *polls) *caller[T] {
	return &caller[T]{connector: c, step: cfg.name, timeout: cfg.callTimeout, hook: cfg.hook, limiter: cfg.limiter, keys: cfg.keys, meters: m, rec: rec, polls: p}
}

// connect calls the Connector and returns the client with the function that
// disconnects it. Disconnect runs even when ctx has ended, within the call
// timeout.
//
// The pass holds a slot of the step's Limiter from before Connect until
// it has disconnected.
func (c *caller[T]) connect(ctx context.Context, req *bosun.Pass[T]) (ExternalClient[T], func(), error) {
	leave, waited, err := c.limiter.enter(ctx)
	if c.limiter.limited() {
		c.meters.of(req).wait.Observe(waited.Seconds())
	}
	if err != nil {
		return nil, nil, c.rec.fail(ReasonConnectFailed, fmt.Errorf("connecting to the external system: %w", err))
	}
	cl, err := limitedCall(ctx, c, req, opConnect, func(ctx context.Context) (ExternalClient[T], error) {
		defer c.keys.lendName(req.Object)()
		return c.connector.Connect(ctx, req.Object)
	})
	if err == nil && cl == nil {
		err = errors.New("the connector returned no client")
	}
	if err != nil {
		leave()
		return nil, nil, c.rec.fail(ReasonConnectFailed, fmt.Errorf("connecting to the external system: %w", err))
	}
	c.learn(cl)
	done := func() {
		defer leave()
		d, ok := cl.(Disconnecter)
		if !ok {
			return
		}
		_, err := callWithin(context.WithoutCancel(ctx), c.step+" disconnect", c.timeout, func(ctx context.Context) (struct{}, error) {
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
func (c *caller[T]) learn(cl ExternalClient[T]) {
	ps := c.polls
	if _, ok := cl.(BatchObserver[T]); ok && !ps.batching.Load() {
		ps.batching.Store(true)
	}
	if rep, ok := cl.(CredentialRepairer[T]); ok && ps.keys.Load() == nil {
		keys := rep.CredentialKeys()
		ps.keys.Store(&keys)
	}
}

// observe calls Observe for obj.
func (c *caller[T]) observe(ctx context.Context, req *bosun.Pass[T], cl ExternalClient[T], obj T) (Observation, error) {
	obs, err := callExternal(ctx, c, req, opObserve, obj, func(ctx context.Context) (Observation, error) {
		return cl.Observe(ctx, obj)
	})
	if err != nil {
		return obs, c.rec.fail(ReasonObserveFailed, fmt.Errorf("observing %s: %w", describe(c.keys.name(obj)), err))
	}
	return obs, nil
}

// callExternal runs fn, the call op of the ExternalClient for obj, as
// limitedCall does, between the hooks of the step; meanwhile obj carries
// the step's external name where the ExternalClient reads it
// (recordKeys.lendName).
func callExternal[T client.Object, R any](ctx context.Context, c *caller[T], req *bosun.Pass[T], op string, obj T, fn func(ctx context.Context) (R, error)) (R, error) {
	name := c.keys.name(obj)
	if planned(ctx, c.step, op, name) {
		var zero R
		return zero, nil
	}
	defer c.keys.lendName(obj)()
	h := c.hook
	if h == nil {
		return limitedCall(ctx, c, req, op, fn)
	}
	call := ExternalCall{Step: c.step, Op: op, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID(), ExternalName: name}
	if err := h.BeforeCall(ctx, call); err != nil {
		var zero R
		return zero, err
	}
	r, err := limitedCall(ctx, c, req, op, fn)
	return r, h.AfterCall(ctx, call, err)
}

// limitedCall runs fn, the call op of the external system for the pass
// req, once the rate of the step's Limiter lets it start, within the call
// timeout, and records it in the step's metrics.
func limitedCall[T client.Object, R any](ctx context.Context, c *caller[T], req *bosun.Pass[T], op string, fn func(ctx context.Context) (R, error)) (R, error) {
	m := c.meters.of(req)
	waited, err := c.limiter.pace(ctx)
	if c.limiter.limited() {
		m.wait.Observe(waited.Seconds())
	}
	if err != nil {
		var zero R
		return zero, err
	}
	m.inFlight.Inc()
	defer m.inFlight.Dec()
	start := time.Now()
	r, err := callWithin(ctx, c.step+" "+op, c.timeout, fn)
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
func (c *caller[T]) observeBatch(ctx context.Context, req *bosun.Pass[T], objs []T) ([]Observation, error) {
	bo, ok := c.connector.(BatchObserver[T])
	var done func()
	if ok {
		leave, waited, err := c.limiter.enter(ctx)
		if c.limiter.limited() {
			c.meters.of(req).wait.Observe(waited.Seconds())
		}
		if err != nil {
			return nil, err
		}
		done = leave
	} else {
		cl, d, err := c.connect(ctx, req)
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
	call := ExternalCall{Step: c.step, Op: opObserveBatch}
	h := c.hook
	if h != nil {
		if err := h.BeforeCall(ctx, call); err != nil {
			return nil, err
		}
	}
	obs, err := limitedCall(ctx, c, req, opObserveBatch, func(ctx context.Context) ([]Observation, error) {
		for _, o := range objs {
			defer c.keys.lendName(o)()
		}
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
