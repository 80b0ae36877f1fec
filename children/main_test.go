package children

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/internal/wiretest"
	"github.com/bosunkit/bosun/tuning"
)

// shared is the control plane, with the Widget CRD installed, that the
// envtest tests of this package share. It runs kube-controller-manager's
// garbage collector and namespace controller for the tests of gc_test.go,
// and no Deployment controller: these tests write a Deployment's status
// themselves to say when it is available (examples/memcached runs the
// children step with the real one and simulated nodes).
var shared = bosuntest.Shared{Options: func() (controlplane.Options, error) {
	opts, err := testapi.ControlPlaneOptions()
	opts.ControllerManager = true
	opts.Controllers = []string{controlplane.GarbageCollectorController, controlplane.NamespaceController}
	return opts, err
}}

func TestMain(m *testing.M) { shared.Main(m) }

// finalizer is the finalizer of the test reconcilers with unowned children.
const finalizer = "children.test.bosun.dev/cleanup"

// env is what an envtest test works with.
type env struct {
	t      *testing.T
	c      client.Client
	ns     string
	writes *bosuntest.WriteCounter
	logs   *bosuntest.LogRecorder
	// passes counts the passes of the reconciler, and notes the Widgets it
	// loads for Touch.
	passes *bosuntest.ReconcileCounter
	// mgr is the manager running the reconciler.
	mgr ctrl.Manager
}

// reconciler returns a reconciler of Widgets with step as its only step,
// and the finalizer if the step cleans up.
func reconciler(step bosun.Step[*testapi.Widget]) *bosun.Reconciler[*testapi.Widget] {
	r := &bosun.Reconciler[*testapi.Widget]{Name: "widget-children", Steps: []bosun.Step[*testapi.Widget]{step}}
	if _, ok := step.(bosun.Cleaner[*testapi.Widget]); ok {
		r.Finalizer = finalizer
	}
	return r
}

// start runs r over the Widgets of a new namespace, with the watches its
// steps register filtered to children in that namespace, so that the children
// that earlier tests left behind wake no Widget here. Widgets that are
// children of a set (see TestCustomResourceChildReadiness) are not
// reconciled themselves.
func start(t *testing.T, r *bosun.Reconciler[*testapi.Widget], wrap ...func(client.Client) client.Client) *env {
	t.Helper()
	return startWith(t, r, nil, wrap...)
}

// startWith is start with configure, when not nil, changing the
// manager's options last.
func startWith(t *testing.T, r *bosun.Reconciler[*testapi.Widget], configure func(*ctrl.Options), wrap ...func(client.Client) client.Client) *env {
	t.Helper()
	return startHarness(t, r, harness{configure: configure, wrap: wrap})
}

// harness is what a test sets up around its reconciler.
type harness struct {
	// configure, when not nil, changes the manager's options last.
	configure func(*ctrl.Options)
	// build, when not nil, changes the controller's builder before it
	// completes, for options such as the rate limiter.
	build func(*bosun.Builder[*testapi.Widget]) *bosun.Builder[*testapi.Widget]
	// wrap wraps the client of the controller, in order.
	wrap []func(client.Client) client.Client
	// transport, when not nil, wraps the manager's connection to the API
	// server, for every request: cache, client and API reader.
	transport func(http.RoundTripper) http.RoundTripper
}

// startHarness is start with the options of h.
func startHarness(t *testing.T, r *bosun.Reconciler[*testapi.Widget], h harness) *env {
	t.Helper()
	cp := shared.ControlPlane(t)
	if h.transport != nil {
		cp = wiretest.Through(cp, h.transport)
	}
	e := &env{t: t, c: cp.Client, ns: bosuntest.Namespace(t, cp.Client), writes: &bosuntest.WriteCounter{}, logs: &bosuntest.LogRecorder{}, passes: &bosuntest.ReconcileCounter{}}
	here := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == e.ns || o.GetAnnotations()[annotationOwnerNamespace] == e.ns
	})
	parents := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[LabelSet] == "" })
	inNamespace := builder.WithPredicates(here, parents)
	// The cache is lean, as package operator makes it: what the step
	// reads of managedFields must survive it.
	lean := bosuntest.ManagerOptions{Configure: func(o *ctrl.Options) {
		tuning.LeanCache(&o.Cache)
		if h.configure != nil {
			h.configure(o)
		}
	}}
	e.mgr = bosuntest.RunManagerWith(t, cp, lean, func(mgr ctrl.Manager) error {
		var c client.Client = e.writes.Wrap(mgr.GetClient())
		for _, w := range h.wrap {
			c = w(c)
		}
		c = e.passes.WrapClient(c)
		mgr = bosuntest.ManagerWithClient(mgr, c)
		mgr = bosuntest.ManagerWithLogger(mgr, e.logs.Wrap(mgr.GetLogger()))
		b := bosun.ControllerManagedBy[*testapi.Widget](mgr).WithEventFilter(here).For(&testapi.Widget{}, inNamespace).WrapReconciler(e.passes.Wrap)
		if h.build != nil {
			b = h.build(b)
		}
		return b.Complete(r)
	})
	return e
}

// widget returns a Widget of the test's namespace with only its name set.
func (e *env) widget(name string) *testapi.Widget {
	return &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name}}
}

// touch is the passes' Touch of the Widget name.
func (e *env) touch(name, value string) {
	e.t.Helper()
	e.passes.Touch(e.t, e.c, e.widget(name), value)
}

// passCount returns the number of passes of the Widget name so far.
func (e *env) passCount(name string) int {
	return e.passes.Count(client.ObjectKey{Namespace: e.ns, Name: name})
}

// window is bosuntest.Window with the Widget clock.
func (e *env) window(clock string, d time.Duration, n int) {
	e.t.Helper()
	bosuntest.Window(e.t, e.c, e.widget(clock), func() int { return e.passCount(clock) }, d, n)
}

// logged reports whether the controller logged msg.
func (e *env) logged(msg string) bool {
	for _, l := range e.logs.Entries() {
		if l.Message == msg {
			return true
		}
	}
	return false
}

// create makes a Widget in the test's namespace.
func (e *env) create(name string, value, divisor int64) *testapi.Widget {
	e.t.Helper()
	w := &testapi.Widget{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec:       testapi.WidgetSpec{Value: value, Divisor: divisor},
	}
	if err := e.c.Create(e.t.Context(), w); err != nil {
		e.t.Fatalf("creating widget %s: %v", name, err)
	}
	return w
}

// setSpec changes the spec of the Widget name.
func (e *env) setSpec(name string, value, divisor int64) {
	e.t.Helper()
	w := &testapi.Widget{}
	if err := e.c.Get(e.t.Context(), client.ObjectKey{Namespace: e.ns, Name: name}, w); err != nil {
		e.t.Fatalf("reading widget %s: %v", name, err)
	}
	base := w.DeepCopy()
	w.Spec.Value, w.Spec.Divisor = value, divisor
	if err := e.c.Patch(e.t.Context(), w, client.MergeFrom(base)); err != nil {
		e.t.Fatalf("patching widget %s: %v", name, err)
	}
}

// cond is a condition by the fields the tests check.
type cond struct {
	Status metav1.ConditionStatus
	Reason conditions.Reason
}

// waitConditions waits until the Widget name has the conditions want for
// its current generation, and returns it.
func (e *env) waitConditions(name string, want map[string]cond) *testapi.Widget {
	e.t.Helper()
	w := &testapi.Widget{}
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: name}, w); err != nil {
			return err
		}
		for typ, c := range want {
			got := conditions.Find(w.Status.Conditions, typ)
			switch {
			case got == nil:
				return errors.New("no " + typ + " condition")
			case got.Status != c.Status || got.Reason != string(c.Reason):
				return fmt.Errorf("%s is %s/%s (%q), want %s/%s", typ, got.Status, got.Reason, got.Message, c.Status, c.Reason)
			case got.ObservedGeneration != w.Generation:
				return fmt.Errorf("%s is for generation %d, want %d", typ, got.ObservedGeneration, w.Generation)
			}
		}
		return nil
	}, bosuntest.Timeout(30*time.Second))
	return w
}

// configMaps returns the names and "value" data of the ConfigMaps in the
// test's namespace that carry the set label.
func (e *env) configMaps(ns string) map[string]string {
	e.t.Helper()
	var list corev1.ConfigMapList
	if err := e.c.List(e.t.Context(), &list, client.InNamespace(ns), client.HasLabels{LabelSet}); err != nil {
		e.t.Fatalf("listing configmaps: %v", err)
	}
	out := map[string]string{}
	for _, cm := range list.Items {
		if cm.DeletionTimestamp.IsZero() {
			out[cm.Name] = cm.Data["value"]
		}
	}
	return out
}

// waitConfigMaps waits until configMaps(ns) is want.
func (e *env) waitConfigMaps(ns string, want map[string]string) {
	e.t.Helper()
	bosuntest.Eventually(e.t, func(context.Context) error {
		got := e.configMaps(ns)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("configmaps = %v, want %v", got, want)
		}
		return nil
	}, bosuntest.Timeout(30*time.Second))
}

// webApp is the desired set of the tests: Value ConfigMaps "cm-<i>" with
// data value=<Value>, and, when Divisor is not zero, a Deployment "web"
// with Divisor replicas and a Service "web".
func webApp(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
	w := req.Object
	var objs []client.Object
	for i := range w.Spec.Value {
		objs = append(objs, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "cm-" + strconv.FormatInt(i, 10)},
			Data:       map[string]string{"value": strconv.FormatInt(w.Spec.Value, 10)},
		})
	}
	if w.Spec.Divisor != 0 {
		labels := map[string]string{"app": w.Name}
		objs = append(objs,
			&appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: "web"},
				Spec: appsv1.DeploymentSpec{
					Replicas: ptr.To(int32(w.Spec.Divisor)),
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{
							Name: "web", Image: "registry.example/web:1",
							Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
						}}},
					},
				},
			},
			&corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "web"},
				Spec: corev1.ServiceSpec{
					Selector: labels,
					Ports:    []corev1.ServicePort{{Name: "http", Port: 80}},
				},
			},
		)
	}
	return objs, nil
}

// webKinds are the kinds of webApp.
func webKinds() []Kind {
	return []Kind{Of(&corev1.ConfigMap{}), Of(&appsv1.Deployment{}), Of(&corev1.Service{})}
}
