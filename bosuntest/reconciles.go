package bosuntest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ReconcileCall is one call of a reconciler wrapped by a ReconcileCounter.
type ReconcileCall struct {
	// Request is the request the reconciler was called with.
	Request reconcile.Request
	// Start is when the call began.
	Start time.Time
	// Duration is how long the call took.
	Duration time.Duration
	// Result and Err are what the call returned. A call that panicked has
	// an Err saying so.
	Result reconcile.Result
	Err    error
}

// ReconcileCounter counts the calls of the reconcilers it wraps, per object.
// A test that the controller settles ("no hot loop") reads the count, waits,
// and checks that the count stays put:
//
//	before := counter.Count(key)
//	time.Sleep(2 * time.Second)
//	if n := counter.Count(key) - before; n > 0 { ... }
//
// A call is recorded when it returns. The zero value is ready to use and is
// safe for concurrent use.
type ReconcileCounter struct {
	mu    sync.Mutex
	calls []ReconcileCall
}

// Wrap returns a reconciler that calls r and records each call.
func (c *ReconcileCounter) Wrap(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (res reconcile.Result, err error) {
		call := ReconcileCall{Request: req, Start: time.Now()}
		defer func() {
			call.Duration = time.Since(call.Start)
			call.Result, call.Err = res, err
			p := recover()
			if p != nil {
				call.Err = fmt.Errorf("bosuntest: reconciler panicked: %v", p)
			}
			c.record(call)
			if p != nil {
				panic(p)
			}
		}()
		return r.Reconcile(ctx, req)
	})
}

func (c *ReconcileCounter) record(call ReconcileCall) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, call)
}

// Count returns the number of calls for the object key.
func (c *ReconcileCounter) Count(key client.ObjectKey) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, call := range c.calls {
		if call.Request.NamespacedName == key {
			n++
		}
	}
	return n
}

// CountSince returns the number of calls for the object key that began at
// or after since.
func (c *ReconcileCounter) CountSince(key client.ObjectKey, since time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, call := range c.calls {
		if call.Request.NamespacedName == key && !call.Start.Before(since) {
			n++
		}
	}
	return n
}

// Counts returns the number of calls per object key. The map is the
// caller's.
func (c *ReconcileCounter) Counts() map[client.ObjectKey]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	counts := make(map[client.ObjectKey]int)
	for _, call := range c.calls {
		counts[call.Request.NamespacedName]++
	}
	return counts
}

// Total returns the number of calls for all objects.
func (c *ReconcileCounter) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.calls)
}

// Calls returns the recorded calls in the order they returned. The slice is
// the caller's.
func (c *ReconcileCounter) Calls() []ReconcileCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]ReconcileCall(nil), c.calls...)
}

// Reset forgets every recorded call.
func (c *ReconcileCounter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = nil
}
