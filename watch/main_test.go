package watch_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
)

// shared is the control plane (a real kube-apiserver and etcd) that the
// envtest tests of this package share; the first of them starts it. They
// use built-in kinds only, so it needs no CRD. Each test runs its own
// manager and works in namespaces of its own, and its controller sees only
// those namespaces.
var shared = bosuntest.Shared{}

func TestMain(m *testing.M) { shared.Main(m) }

// quiet is how long a controller must go without a reconcile to count as
// settled. Events reach a controller within milliseconds; a parent that a
// handler wrongly enqueued would be reconciled well within it.
const quiet = 700 * time.Millisecond

// recorder records which objects a controller reconciled. It is safe for
// concurrent use.
type recorder struct {
	mu    sync.Mutex
	seen  map[client.ObjectKey]int
	total int
	last  time.Time
}

func newRecorder() *recorder { return &recorder{seen: map[client.ObjectKey]int{}} }

// record notes a reconcile of key.
func (r *recorder) record(key client.ObjectKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[key]++
	r.total++
	r.last = time.Now()
}

// reconciler returns a reconciler that records each request and then calls
// next (nil: does nothing else).
func (r *recorder) reconciler(next reconcile.Func) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		r.record(req.NamespacedName)
		if next == nil {
			return reconcile.Result{}, nil
		}
		return next(ctx, req)
	})
}

// keys returns the reconciled keys, sorted, as "namespace/name".
func (r *recorder) keys() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []string{}
	for k := range r.seen {
		out = append(out, k.String())
	}
	slices.Sort(out)
	return out
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.seen)
}

// idleFor returns how long ago the last reconcile was recorded.
func (r *recorder) idleFor() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Since(r.last)
}

var errBusy = errors.New("controller still reconciling")

// settle waits until the controller has been idle for quiet.
func settle(t *testing.T, r *recorder) {
	t.Helper()
	bosuntest.Eventually(t, func(context.Context) error {
		if idle := r.idleFor(); idle < quiet {
			return fmt.Errorf("%w: last reconcile %s ago", errBusy, idle.Round(time.Millisecond))
		}
		return nil
	}, bosuntest.Interval(50*time.Millisecond))
}

// start waits until the controller has reconciled each of parents (the
// first reconcile that a controller gives every object it watches), lets it
// settle, and forgets what it reconciled so far, so that the next
// expectWoken sees only what the test does next.
func start(t *testing.T, r *recorder, parents ...client.ObjectKey) {
	t.Helper()
	bosuntest.Eventually(t, func(context.Context) error {
		got := r.keys()
		for _, k := range parents {
			if !slices.Contains(got, k.String()) {
				return fmt.Errorf("first reconcile of %s not seen yet (reconciled: %v)", k, got)
			}
		}
		return nil
	})
	settle(t, r)
	r.reset()
}

// expectWoken waits until every key in want was reconciled, lets the
// controller settle, and checks that no other object was: exactly want.
// Then it forgets what was reconciled, for the next step of the test.
func expectWoken(t *testing.T, r *recorder, step string, want ...client.ObjectKey) {
	t.Helper()
	wantKeys := []string{}
	for _, k := range want {
		wantKeys = append(wantKeys, k.String())
	}
	slices.Sort(wantKeys)
	bosuntest.Eventually(t, func(context.Context) error {
		got := r.keys()
		for _, k := range wantKeys {
			if !slices.Contains(got, k) {
				return fmt.Errorf("%s: %s not reconciled yet (reconciled: %v)", step, k, got)
			}
		}
		return nil
	})
	settle(t, r)
	if diff := cmp.Diff(wantKeys, r.keys()); diff != "" {
		t.Errorf("%s: reconciled objects (-want +got):\n%s", step, diff)
	}
	r.reset()
}

// inNamespaces lets through the events of objects in the namespaces ns.
func inNamespaces(ns ...string) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool { return slices.Contains(ns, o.GetNamespace()) })
}

// env is one test's control plane, client and namespaces.
type env struct {
	t  *testing.T
	cp *controlplane.ControlPlane
	c  client.Client
	// ns is the test's namespace; other is a second one, for objects that
	// must not be confused with those of ns.
	ns, other string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	cp := shared.ControlPlane(t)
	return &env{t: t, cp: cp, c: cp.Client, ns: bosuntest.Namespace(t, cp.Client), other: bosuntest.Namespace(t, cp.Client)}
}

func (e *env) key(name string) client.ObjectKey { return client.ObjectKey{Namespace: e.ns, Name: name} }

func (e *env) create(objs ...client.Object) {
	e.t.Helper()
	for _, obj := range objs {
		if err := e.c.Create(e.t.Context(), obj); err != nil {
			e.t.Fatalf("create %T %s: %v", obj, client.ObjectKeyFromObject(obj), err)
		}
	}
}

// change reads obj's object, applies fn to it and updates it, retrying
// conflicts.
func (e *env) change(obj client.Object, fn func()) {
	e.t.Helper()
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		fn()
		return e.c.Update(ctx, obj)
	})
}

func (e *env) delete(obj client.Object) {
	e.t.Helper()
	if err := e.c.Delete(e.t.Context(), obj); err != nil {
		e.t.Fatalf("delete %T %s: %v", obj, client.ObjectKeyFromObject(obj), err)
	}
}
