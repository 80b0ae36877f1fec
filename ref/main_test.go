package ref_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/internal/testapi"
)

// shared is the control plane, with the Widget CRD, that the envtest tests
// of this package share. Each test works in namespaces of its own, and its
// manager's cache sees only those (and cluster-scoped objects), so that no
// test's controller reconciles another's Widgets.
var shared = bosuntest.Shared{Options: testapi.ControlPlaneOptions}

func TestMain(m *testing.M) { shared.Main(m) }

// referrerLabel marks the Widgets a test's controller reconciles; the
// Widgets they refer to are left alone, so the tests set their status.
const referrerLabel = "ref.test/referrer"

// env is one test's control plane, namespaces, controller and counts.
type env struct {
	t  *testing.T
	cp *controlplane.ControlPlane
	c  client.Client
	// ns is the test's namespace; other is a second one, for references
	// that lead out of ns.
	ns, other string
	// writes counts the writes of the controller.
	writes *bosuntest.WriteCounter

	mu     sync.Mutex
	passes map[string]int
}

// start runs a controller of Widgets labelled referrerLabel in the test's
// namespaces, whose steps are a pass counter and what steps returns.
func start(t *testing.T, steps func() []bosun.Step[*testapi.Widget]) *env {
	t.Helper()
	cp := shared.ControlPlane(t)
	e := &env{t: t, cp: cp, c: cp.Client, writes: &bosuntest.WriteCounter{}, passes: map[string]int{}}
	e.ns, e.other = bosuntest.Namespace(t, cp.Client), bosuntest.Namespace(t, cp.Client)
	count := bosun.NewStep("count", func(_ context.Context, p *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.passes[p.Object.Name]++
		return ctrl.Result{}, nil
	})
	opts := bosuntest.ManagerOptions{Namespaces: []string{e.ns, e.other}}
	bosuntest.RunManagerWith(t, cp, opts, func(mgr ctrl.Manager) error {
		mgr = bosuntest.ManagerWithClient(mgr, e.writes.Wrap(mgr.GetClient()))
		r := &bosun.Reconciler[*testapi.Widget]{
			Name:  "ref-" + e.ns,
			Steps: append([]bosun.Step[*testapi.Widget]{count}, steps()...),
		}
		referrers := builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetLabels()[referrerLabel] == "true"
		}))
		return bosun.ControllerManagedBy[*testapi.Widget](mgr).For(nil, referrers).Complete(r)
	})
	return e
}

// passCount returns the number of passes of the Widget name so far.
func (e *env) passCount(name string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.passes[name]
}

// referrer creates a Widget in ns, reconciled by the controller, with
// annotations (key, value pairs).
func (e *env) referrer(ns, name string, kv ...string) *testapi.Widget {
	e.t.Helper()
	w := widget(ns, name, kv...)
	w.Labels = map[string]string{referrerLabel: "true"}
	e.create(w)
	return w
}

func (e *env) create(obj client.Object) {
	e.t.Helper()
	if err := e.c.Create(e.t.Context(), obj); err != nil {
		e.t.Fatalf("create %T %s: %v", obj, client.ObjectKeyFromObject(obj), err)
	}
}

// target creates a Widget in ns of value v with labels, which the
// controller does not reconcile; ready says whether to mark it Ready.
func (e *env) target(ns, name string, v int64, labels map[string]string, ready bool) *testapi.Widget {
	e.t.Helper()
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Spec: testapi.WidgetSpec{Value: v}}
	e.create(w)
	if ready {
		e.markReady(w)
	}
	return w
}

// markReady sets the Ready condition of the Widget w True for its current
// generation.
func (e *env) markReady(w *testapi.Widget) {
	e.t.Helper()
	e.change(w, true, func() {
		conditions.Set(&w.Status.Conditions, metav1.Condition{
			Type: conditions.TypeReady, Status: metav1.ConditionTrue, Reason: string(conditions.ReasonSucceeded), ObservedGeneration: w.Generation,
		}, metav1.Now())
		w.Status.ObservedGeneration = w.Generation
	})
}

// change reads obj again, applies fn to it, and updates it (its status,
// when status is true), retrying conflicts.
func (e *env) change(obj client.Object, status bool, fn func()) {
	e.t.Helper()
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		fn()
		if status {
			return e.c.Status().Update(ctx, obj)
		}
		return e.c.Update(ctx, obj)
	})
}

// expect waits until the Widget ns/name has the condition typ with status
// st and reason, and a message holding msg, and until check, when not nil,
// passes; it returns the Widget.
func (e *env) expect(ns, name, typ string, st metav1.ConditionStatus, reason conditions.Reason, msg string, check func(*testapi.Widget) error) *testapi.Widget {
	e.t.Helper()
	w := &testapi.Widget{}
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, w); err != nil {
			return err
		}
		c := conditions.Find(w.Status.Conditions, typ)
		switch {
		case c == nil:
			return fmt.Errorf("no %s condition yet: %+v", typ, w.Status.Conditions)
		case c.Status != st || c.Reason != string(reason) || !strings.Contains(c.Message, msg):
			return fmt.Errorf("%s is %s/%s %q, want %s/%s with %q", typ, c.Status, c.Reason, c.Message, st, reason, msg)
		case c.ObservedGeneration != w.Generation:
			return fmt.Errorf("%s describes generation %d, not %d", typ, c.ObservedGeneration, w.Generation)
		}
		if check != nil {
			return check(w)
		}
		return nil
	})
	return w
}

// result checks that a Widget's status.result is v.
func result(v int64) func(*testapi.Widget) error {
	return func(w *testapi.Widget) error {
		if w.Status.Result != v {
			return fmt.Errorf("result is %d, want %d", w.Status.Result, v)
		}
		return nil
	}
}

// expectQuiet makes the controller reconcile the Widget name of ns a few
// times, by touching a label of the object it refers to, and checks that
// none of those passes wrote anything: a pass is over when the next one
// starts, as a controller never reconciles one object twice at once.
func (e *env) expectQuiet(name string, referred client.Object) {
	e.t.Helper()
	e.writes.Reset()
	const touches = 3
	for i := range touches {
		before := e.passCount(name)
		e.change(referred, false, func() {
			labels := referred.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			labels["ref.test/touched"] = fmt.Sprint(i)
			referred.SetLabels(labels)
		})
		bosuntest.Eventually(e.t, func(context.Context) error {
			if n := e.passCount(name); n <= before {
				return fmt.Errorf("pass %d after touch %d not seen yet", before+1, i)
			}
			return nil
		})
	}
	if got := e.writes.Writes(); len(got) != 0 {
		e.t.Errorf("passes over a converged Widget wrote %v, want nothing", got)
	}
}
