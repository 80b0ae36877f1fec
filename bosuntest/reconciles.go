package bosuntest

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
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
// A test that the controller settles ("no hot loop") reads the count, lets
// a Window go by, measured in another object's passes as well as in time,
// and checks that the count stays put:
//
//	before := counter.Count(key)
//	bosuntest.Window(t, c, clock, func() int { return counter.Count(client.ObjectKeyFromObject(clock)) }, 2*time.Second, 10)
//	if n := counter.Count(key) - before; n > 0 { ... }
//
// A call is recorded when it returns. The zero value is ready to use and is
// safe for concurrent use.
type ReconcileCounter struct {
	mu    sync.Mutex
	calls []ReconcileCall
	// loaded holds when the clients of WrapClient first read each object
	// with each value of TouchLabel (see Touch).
	loaded map[touch]time.Time
}

// TouchLabel is the label ReconcileCounter.Touch sets on an object.
const TouchLabel = "bosuntest.bosun.dev/touch"

// touch names an object, by its group and kind (see kindOf) and key, with
// a value of TouchLabel.
type touch struct {
	kind  string
	key   client.ObjectKey
	value string
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
			c.Record(call)
			if p != nil {
				panic(p)
			}
		}()
		return r.Reconcile(ctx, req)
	})
}

// Record records a call the counter did not wrap: for example a pass that
// a bosun.PassObserver was told of, for a controller a test cannot wrap:
//
//	bosun.ObservationOf(mgr).AddObserver(bosun.PassObserverFunc(func(_ context.Context, r bosun.PassReport) {
//		counter.Record(bosuntest.ReconcileCall{Request: reconcile.Request{NamespacedName: r.Object}, Start: r.Start, Duration: r.Duration})
//	}))
func (c *ReconcileCounter) Record(call ReconcileCall) {
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

// WrapClient returns a client that makes its calls through cl and notes
// when a Get first returns each object with each value of TouchLabel, for
// Touch. Wrap the client the counted controller reads its objects with
// (the manager's, through ManagerWithClient).
func (c *ReconcileCounter) WrapClient(cl client.Client) client.WithWatch {
	ww, ok := cl.(client.WithWatch)
	if !ok {
		ww = watchless{cl}
	}
	return interceptor.NewClient(ww, interceptor.Funcs{
		Get: func(ctx context.Context, w client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if err := w.Get(ctx, key, obj, opts...); err != nil {
				return err
			}
			if v, ok := obj.GetLabels()[TouchLabel]; ok {
				c.noteLoad(touch{kind: kindOf(obj, w.Scheme()), key: key, value: v}, time.Now())
			}
			return nil
		},
	})
}

func (c *ReconcileCounter) noteLoad(t touch, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.loaded == nil {
		c.loaded = map[touch]time.Time{}
	}
	if _, seen := c.loaded[t]; !seen {
		c.loaded[t] = at
	}
}

// Touch sets the label TouchLabel of obj, an object of the counted
// controller's kind with its namespace and name set, to value through cl,
// and waits until the counted call during which a client of WrapClient
// first read the object so labelled has returned. The watch delivers the
// events of one object in order, and the work queue runs one call of an
// object at a time, so by then the calls that the object's earlier changes
// brought (the controller's own writes among them) have returned too: a
// test counts what they did once Touch returns. value must be one the
// object has not had. Touch gives up, failing the test, after two minutes.
func (c *ReconcileCounter) Touch(t TB, cl client.Client, obj client.Object, value string) {
	t.Helper()
	target, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		t.Fatalf("bosuntest: Touch: %T is not a client.Object once copied", obj)
		return
	}
	key := client.ObjectKeyFromObject(obj)
	patch := fmt.Sprintf(`{"metadata":{"labels":{%s:%s}}}`, strconv.Quote(TouchLabel), strconv.Quote(value))
	if err := cl.Patch(t.Context(), target, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatalf("bosuntest: touching %s: %v", key, err)
		return
	}
	want := touch{kind: kindOf(obj, cl.Scheme()), key: key, value: value}
	Eventually(t, func(context.Context) error { return c.returnedSince(want) }, Timeout(2*time.Minute))
}

// returnedSince tells whether the call that was running when t was first
// loaded has returned.
func (c *ReconcileCounter) returnedSince(t touch) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.loaded[t]
	if !ok {
		return fmt.Errorf("no read of %s with %s=%s yet", t.key, TouchLabel, t.value)
	}
	for _, call := range c.calls {
		if call.Request.NamespacedName == t.key && !call.Start.After(at) && !call.Start.Add(call.Duration).Before(at) {
			return nil
		}
	}
	return fmt.Errorf("the call that read %s with %s=%s has not returned yet", t.key, TouchLabel, t.value)
}

// kindOf returns the group and kind of obj, typed or unstructured, as
// scheme knows them; its Go type when the scheme does not know it.
func kindOf(obj client.Object, scheme *runtime.Scheme) string {
	if gvk, err := apiutil.GVKForObject(obj, scheme); err == nil {
		return gvk.GroupKind().String()
	}
	return fmt.Sprintf("%T", obj)
}
