package bosun_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/operator"
)

// shared is the control plane, with the Widget CRD, that the envtest tests of
// this package share. Each test works in a namespace of its own and runs
// managers that only see that namespace's Widgets.
var shared = bosuntest.Shared{Options: testapi.ControlPlaneOptions}

func TestMain(m *testing.M) { shared.Main(m) }

// testFinalizer is the finalizer of the test reconcilers that clean up.
const testFinalizer = "test.bosun.dev/cleanup"

// fixture is one test's control plane client and namespace.
type fixture struct {
	t  *testing.T
	cp *controlplane.ControlPlane
	c  client.Client
	ns string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	cp := shared.ControlPlane(t)
	return &fixture{t: t, cp: cp, c: cp.Client, ns: bosuntest.Namespace(t, cp.Client)}
}

// runOptions changes how run sets up the reconciler.
type runOptions struct {
	// client wraps the manager's client for the reconciler.
	client func(client.Client) client.WithWatch
	// logs records the controller's log.
	logs *bosuntest.LogRecorder
	// counter counts reconciles; the controller is then registered directly
	// with controller-runtime.
	counter *bosuntest.ReconcileCounter
	// configure, when set, changes the manager's options (asOperator).
	configure func(*ctrl.Options)
	// watchKind adds a watch of Widgets that enqueues nothing, as a
	// step's watch of its parents does (to forget one that is deleted).
	watchKind bool
	// manager, when set, is given the manager before the controller is
	// set up.
	manager func(ctrl.Manager)
}

// asOperator gives a manager's options the cache and client of package
// operator's managers: a lean cache (tuning.LeanCache), and
// controller-runtime's client.
func asOperator(o *ctrl.Options) {
	lean := new(operator.Flags).ManagerOptions("test")
	o.NewCache, o.NewClient = lean.NewCache, lean.NewClient
}

// run starts a manager with r, watching only the fixture's namespace.
func (f *fixture) run(r *bosun.Reconciler[*testapi.Widget], opts runOptions) {
	f.t.Helper()
	inNamespace := builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == f.ns
	}))
	bosuntest.RunManagerWith(f.t, f.cp, bosuntest.ManagerOptions{Configure: opts.configure}, func(mgr ctrl.Manager) error {
		if opts.manager != nil {
			opts.manager(mgr)
		}
		if opts.client != nil {
			mgr = bosuntest.ManagerWithClient(mgr, opts.client(mgr.GetClient()))
		}
		if opts.logs != nil {
			mgr = bosuntest.ManagerWithLogger(mgr, opts.logs.Wrap(mgr.GetLogger()))
		}
		if opts.counter != nil {
			r.Client = mgr.GetClient()
			r.APIReader = mgr.GetAPIReader()
			r.Recorder = mgr.GetEventRecorder(r.Name)
			if err := r.Validate(); err != nil {
				return err
			}
			return ctrl.NewControllerManagedBy(mgr).For(&testapi.Widget{}, inNamespace).Named(r.Name).Complete(opts.counter.Wrap(r))
		}
		// Every event of another test's namespace is dropped: the owned
		// children and the namespace policy watch see the whole cluster.
		own := predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetNamespace() == f.ns || o.GetNamespace() == "" && o.GetName() == f.ns
		})
		b := bosun.ControllerManagedBy[*testapi.Widget](mgr).For(&testapi.Widget{}, inNamespace).WithEventFilter(own)
		if opts.watchKind {
			b = b.Watches(&testapi.Widget{}, handler.Funcs{})
		}
		return b.Complete(r)
	})
}

// create creates a Widget in the fixture's namespace.
func (f *fixture) create(name string, value, divisor int64, annotations map[string]string) *testapi.Widget {
	f.t.Helper()
	w := &testapi.Widget{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Annotations: annotations},
		Spec:       testapi.WidgetSpec{Value: value, Divisor: divisor},
	}
	if err := f.c.Create(context.Background(), w); err != nil {
		f.t.Fatalf("creating widget %s: %v", name, err)
	}
	return w
}

// get reads a Widget from the API server.
func (f *fixture) get(ctx context.Context, name string) (*testapi.Widget, error) {
	w := &testapi.Widget{}
	err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: name}, w)
	return w, err
}

// waitReady waits until the Widget's Ready condition has the status and
// reason given and describes its current generation, and returns it.
func (f *fixture) waitReady(name string, status metav1.ConditionStatus, reason conditions.Reason) *testapi.Widget {
	f.t.Helper()
	var got *testapi.Widget
	bosuntest.Eventually(f.t, func(ctx context.Context) error {
		w, err := f.get(ctx, name)
		if err != nil {
			return err
		}
		c := conditions.Find(w.Status.Conditions, conditions.TypeReady)
		switch {
		case c == nil:
			return errors.New("no Ready condition")
		case c.Status != status || c.Reason != string(reason):
			return fmt.Errorf("Ready is %s/%s (%q), want %s/%s", c.Status, c.Reason, c.Message, status, reason)
		case c.ObservedGeneration != w.Generation:
			return fmt.Errorf("Ready describes generation %d, want %d", c.ObservedGeneration, w.Generation)
		}
		got = w
		return nil
	})
	return got
}

// outputName is the name of the Secret the output step writes for a Widget.
func outputName(widget string) string { return widget + "-out" }

// journal records what the test steps saw, by Widget name.
type journal struct {
	mu sync.Mutex
	// do counts the Do calls.
	do map[string]int
	// finalizerAtFirstDo is whether the API server (read around the cache)
	// held the finalizer when Do first ran.
	finalizerAtFirstDo map[string]bool
	// instances are the instance names of the reconcilers whose Do ran.
	instances map[string]map[string]bool
	// posts counts the Post calls.
	posts map[string]int
	// observes counts the Observe calls.
	observes map[string]int
}

func newJournal() *journal {
	return &journal{
		do:                 map[string]int{},
		finalizerAtFirstDo: map[string]bool{},
		instances:          map[string]map[string]bool{},
		posts:              map[string]int{},
		observes:           map[string]int{},
	}
}

func (j *journal) count(m map[string]int, name string) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return m[name]
}

// divide computes status.result = value / divisor and owns the condition
// Computed. A zero divisor is a terminal error with reason ZeroDivisor.
type divide struct {
	j        *journal
	instance string
}

func (d *divide) Name() string         { return "divide" }
func (d *divide) Conditions() []string { return []string{"Computed"} }

func (d *divide) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	w := req.Object
	d.j.mu.Lock()
	d.j.do[w.Name]++
	if d.j.instances[w.Name] == nil {
		d.j.instances[w.Name] = map[string]bool{}
	}
	d.j.instances[w.Name][d.instance] = true
	d.j.mu.Unlock()
	if w.Spec.Divisor == 0 {
		return ctrl.Result{}, conditions.Terminal("ZeroDivisor", errors.New("divisor is zero"))
	}
	w.Status.Result = w.Spec.Value / w.Spec.Divisor
	conds := w.Status.Conditions
	conditions.Set(&conds, metav1.Condition{Type: "Computed", Status: metav1.ConditionTrue, Reason: "Divided", ObservedGeneration: w.Generation}, metav1.Now())
	w.Status.Conditions = conds
	return ctrl.Result{}, nil
}

// Observe records that it ran and marks the result as observed only.
func (d *divide) Observe(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	d.j.mu.Lock()
	d.j.observes[req.Object.Name]++
	d.j.mu.Unlock()
	req.Object.Status.Result = -1
	return ctrl.Result{}, nil
}

// Post counts its calls.
func (d *divide) Post(_ context.Context, req *bosun.Pass[*testapi.Widget]) error {
	d.j.mu.Lock()
	defer d.j.mu.Unlock()
	d.j.posts[req.Object.Name]++
	return nil
}

// output writes a Secret with the result and deletes it in Cleanup. On its
// first Do for a Widget it records, reading around the cache, whether the
// finalizer was already stored.
type output struct {
	j *journal
}

func (o *output) Name() string { return "output" }

func (o *output) Do(ctx context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	w := req.Object
	o.j.mu.Lock()
	_, seen := o.j.finalizerAtFirstDo[w.Name]
	o.j.mu.Unlock()
	if !seen {
		stored := &testapi.Widget{}
		if err := req.APIReader.Get(ctx, client.ObjectKeyFromObject(w), stored); err != nil {
			return ctrl.Result{}, err
		}
		o.j.mu.Lock()
		o.j.finalizerAtFirstDo[w.Name] = controllerutil.ContainsFinalizer(stored, testFinalizer)
		o.j.mu.Unlock()
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: outputName(w.Name)}}
	_, err := controllerutil.CreateOrUpdate(ctx, req.Client, s, func() error {
		s.StringData = nil
		s.Data = map[string][]byte{"result": fmt.Appendf(nil, "%d", w.Status.Result)}
		return nil
	})
	if apierrors.IsAlreadyExists(err) {
		// The cache has not seen the Secret this step made on an earlier pass.
		return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
	}
	return ctrl.Result{}, err
}

func (o *output) Cleanup(ctx context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: req.Object.Namespace, Name: outputName(req.Object.Name)}}
	if err := req.Client.Delete(ctx, s); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// panicker panics in Do for Widgets whose value is 666.
type panicker struct{}

func (panicker) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	if req.Object.Spec.Value == 666 {
		panic("the number of the beast")
	}
	return ctrl.Result{}, nil
}

// newReconciler returns a reconciler with divide and, when cleans is set,
// output.
func newReconciler(name string, j *journal, cleans bool) *bosun.Reconciler[*testapi.Widget] {
	r := &bosun.Reconciler[*testapi.Widget]{
		Name:  name,
		Steps: []bosun.Step[*testapi.Widget]{&divide{j: j}},
	}
	if cleans {
		r.Steps = append(r.Steps, &output{j: j})
		r.Finalizer = testFinalizer
	}
	return r
}

// bindRole gives user the rules in the fixture's namespace: a Role named
// operator and its RoleBinding.
func (f *fixture) bindRole(user string, rules ...rbacv1.PolicyRule) {
	f.t.Helper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "operator"}, Rules: rules}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "operator"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "operator"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := f.c.Create(f.t.Context(), obj); err != nil {
			f.t.Fatal(err)
		}
	}
}
