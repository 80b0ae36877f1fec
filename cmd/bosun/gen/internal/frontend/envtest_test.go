package frontend_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/cmd/bosun/gen/internal/frontend"
	"github.com/bosunkit/bosun/conditions"
)

// The tests in this file run the generated code end to end with the bosun
// engine on a real API server: a bosun.Reconciler for Deployments whose
// steps are the generated steps SyncService and PublishAddress of
// NewFrontendManagerSteps, set up with bosun.ControllerManagedBy and
// nothing else: the steps add the watches their states need themselves. A
// Deployment keeps no conditions, so the engine records none; with no step
// that cleans up it adds no finalizer.

const (
	// settingsName is the name the settings state selects.
	settingsName = "frontend-settings"
	// addressAnnotation is where the Impl of TestPublishAddress reports the
	// Service's address.
	addressAnnotation = "frontend.example.com/address"

	// backoffBase and backoffMax bound the per-object exponential backoff of
	// the harness's controller: the n-th failure in a row of an object is
	// retried no sooner than backoffBase * 2^(n-1) later.
	backoffBase = 20 * time.Millisecond
	backoffMax  = 5 * time.Second
)

// seen is what the actions of one reconcile saw, in a form the tests
// compare.
type seen struct {
	// Actions are the Impl methods that ran, in order.
	Actions []string
	// Svc is "NAME@RESOURCEVERSION" of the svc state SyncService got, or ""
	// when it got nil.
	Svc string
	// SameSvc reports that PublishAddress got the very *corev1.Service that
	// SyncService got.
	SameSvc bool
	// Settings is the data of the settings state SyncService got, nil when
	// it got nil.
	Settings map[string]string
	// Reads counts the reads of Services and ConfigMaps, the kinds the
	// states select, made during the reconcile, per "Kind namespace/name".
	Reads map[string]int
	// NotControlled reports an error wrapping bosun.ErrNotControlled.
	NotControlled bool
	// Err is the text of any other error of the actions.
	Err string
}

// outcome is one reconcile that ran the actions.
type outcome struct {
	key  client.ObjectKey
	at   time.Time
	seen seen
}

// harness runs the steps of FrontendManager for Deployments with the bosun
// engine and records what the actions of each reconcile saw, the reads of
// each reconcile and every write of the controller.
type harness struct {
	// publish makes PublishAddress write the Service's ClusterIP to the
	// Deployment's annotation addressAnnotation.
	publish bool
	// writes counts the writes made through the controller's client.
	writes bosuntest.WriteCounter

	mu        sync.Mutex
	outcomes  []outcome
	reads     map[types.UID]map[string]int                  // per reconcile ID
	failures  map[client.ObjectKey]error                    // what SyncService returns, per Deployment
	recorders map[*bosun.Pass[*appsv1.Deployment]]*recorder // the impl of each reconcile under way
	// newImplAgain reports that newImpl was called twice in one reconcile.
	newImplAgain bool
}

// setup registers the controller with mgr: its steps are the generated
// steps of the actions SyncService and PublishAddress, then the harness's
// observe. Nothing here registers a watch: the generated steps set up the
// watches of their states (the Services the Deployments own, the settings
// ConfigMap) when Complete runs. The controller's client, which the engine
// and the states read through and the generated ConfigMap watch lists with,
// is the manager's, counting reads and writes. One worker takes the requests
// in the order they were enqueued.
func (h *harness) setup(mgr ctrl.Manager) error {
	mgr = bosuntest.ManagerWithClient(mgr, h.countReads(h.writes.Wrap(mgr.GetClient())))
	steps := frontend.NewFrontendManagerSteps(h.newImpl)
	return bosun.ControllerManagedBy[*appsv1.Deployment](mgr).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: 1,
			RateLimiter:             workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](backoffBase, backoffMax),
		}).
		Complete(&bosun.Reconciler[*appsv1.Deployment]{
			Name:  "frontend",
			Steps: []bosun.Step[*appsv1.Deployment]{steps.SyncService(), steps.PublishAddress(), observe{h: h}},
		})
}

// newImpl makes the recorder of one reconcile, the impl the steps of that
// reconcile share, and keeps it for the reconcile's observe step.
func (h *harness) newImpl(req *bosun.Pass[*appsv1.Deployment], state *frontend.FrontendManagerState) frontend.FrontendManagerImpl {
	rec := &recorder{req: req, state: state, publish: h.publish, fail: h.failure(client.ObjectKeyFromObject(req.Object))}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.recorders == nil {
		h.recorders = map[*bosun.Pass[*appsv1.Deployment]]*recorder{}
	}
	if h.recorders[req] != nil {
		h.newImplAgain = true
	}
	h.recorders[req] = rec
	return rec
}

// fail makes SyncService return err for the Deployment key from its next
// reconcile on; nil makes it succeed again.
func (h *harness) fail(key client.ObjectKey, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failures == nil {
		h.failures = map[client.ObjectKey]error{}
	}
	h.failures[key] = err
}

func (h *harness) failure(key client.ObjectKey) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.failures[key]
}

// observe is the last step of the harness's reconciler. Its Post, which
// the engine runs at the end of every reconcile whatever the steps before
// it returned, records what the actions of the reconcile saw.
type observe struct{ h *harness }

func (observe) Name() string { return "observe" }

func (observe) Do(context.Context, *bosun.Pass[*appsv1.Deployment]) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}

func (o observe) Post(ctx context.Context, req *bosun.Pass[*appsv1.Deployment]) error {
	o.h.record(ctx, req)
	return nil
}

var _ bosun.Poster[*appsv1.Deployment] = observe{}

// record records what the actions of req's reconcile saw, from the
// reconcile's recorder and reads. A reconcile that made no recorder ran no
// step, and is not recorded.
func (h *harness) record(ctx context.Context, req *bosun.Pass[*appsv1.Deployment]) {
	h.mu.Lock()
	rec := h.recorders[req]
	delete(h.recorders, req)
	h.mu.Unlock()
	if rec == nil {
		return
	}
	s := seen{Actions: rec.actions}
	if rec.syncSvc != nil {
		s.Svc = rec.syncSvc.Name + "@" + rec.syncSvc.ResourceVersion
	}
	s.SameSvc = len(rec.actions) == 2 && rec.syncSvc == rec.publishSvc
	if rec.settings != nil {
		s.Settings = rec.settings.Data
	}
	switch err := rec.err(ctx); {
	case errors.Is(err, bosun.ErrNotControlled):
		s.NotControlled = true
	case err != nil:
		s.Err = err.Error()
	}
	id := controller.ReconcileIDFromContext(ctx)
	h.mu.Lock()
	defer h.mu.Unlock()
	s.Reads = h.reads[id]
	delete(h.reads, id)
	h.outcomes = append(h.outcomes, outcome{key: client.ObjectKeyFromObject(req.Object), at: time.Now(), seen: s})
}

// countReads returns c counting, per reconcile, its reads of the kinds the
// states select. Reads outside a reconcile, such as the list of the
// generated ConfigMap watch, are not counted.
func (h *harness) countReads(c client.WithWatch) client.Client {
	count := func(ctx context.Context, obj any, what string) {
		switch obj.(type) {
		case *corev1.Service, *corev1.ConfigMap, *corev1.ServiceList, *corev1.ConfigMapList:
		default:
			return
		}
		id := controller.ReconcileIDFromContext(ctx)
		if id == "" {
			return
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.reads == nil {
			h.reads = map[types.UID]map[string]int{}
		}
		if h.reads[id] == nil {
			h.reads[id] = map[string]int{}
		}
		h.reads[id][strings.TrimSpace(reflect.TypeOf(obj).Elem().Name()+" "+what)]++
	}
	return interceptor.NewClient(c, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			count(ctx, obj, key.String())
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			count(ctx, list, "")
			return c.List(ctx, list, opts...)
		},
	})
}

// all returns the outcomes so far, in the order the workflows ended.
func (h *harness) all() []outcome {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]outcome(nil), h.outcomes...)
}

// of returns the outcomes of key among all.
func of(all []outcome, key client.ObjectKey) []outcome {
	var out []outcome
	for _, o := range all {
		if o.key == key {
			out = append(out, o)
		}
	}
	return out
}

// wait waits until the latest outcome for key is want, and returns its
// index in all().
func (h *harness) wait(t *testing.T, key client.ObjectKey, want seen) int {
	t.Helper()
	var at int
	bosuntest.Eventually(t, func(context.Context) error {
		all := h.all()
		for i := len(all) - 1; i >= 0; i-- {
			if all[i].key != key {
				continue
			}
			if diff := cmp.Diff(want, all[i].seen); diff != "" {
				return fmt.Errorf("latest reconcile of %s (-want +got):\n%s", key, diff)
			}
			at = i
			return nil
		}
		return fmt.Errorf("%s not reconciled yet", key)
	})
	return at
}

// checkNoWrites fails the test if the controller wrote anything.
func (h *harness) checkNoWrites(t *testing.T) {
	t.Helper()
	if w := h.writes.Writes(); len(w) > 0 {
		t.Errorf("the controller wrote %v, want nothing", w)
	}
}

// checkOneImpl fails the test if the steps made more than one impl in one
// reconcile.
func (h *harness) checkOneImpl(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.newImplAgain {
		t.Error("newImpl was called more than once in one reconcile")
	}
}

// recorder is the FrontendManagerImpl of one reconcile: it records the
// states its actions get.
type recorder struct {
	req     *bosun.Pass[*appsv1.Deployment]
	state   *frontend.FrontendManagerState
	publish bool
	fail    error

	actions    []string
	syncSvc    *corev1.Service
	publishSvc *corev1.Service
	settings   *corev1.ConfigMap
}

func (r *recorder) SyncService(_ context.Context, _ logr.Logger, svc *corev1.Service, settings *corev1.ConfigMap) (ctrl.Result, error) {
	r.actions = append(r.actions, frontend.FrontendManagerSyncService)
	r.syncSvc, r.settings = svc, settings
	return ctrl.Result{}, r.fail
}

func (r *recorder) PublishAddress(_ context.Context, _ logr.Logger, svc *corev1.Service) (ctrl.Result, error) {
	r.actions = append(r.actions, frontend.FrontendManagerPublishAddress)
	r.publishSvc = svc
	if r.publish && svc != nil {
		// The engine writes what changed in the working copy.
		metav1.SetMetaDataAnnotation(&r.req.Object.ObjectMeta, addressAnnotation, svc.Spec.ClusterIP)
	}
	return ctrl.Result{}, nil
}

// err returns the error that ended the actions: SyncService's when it ran,
// else that of the state it failed to read (SyncService reads svc, then
// settings). The states keep what they read, failures included, so this
// reads nothing again.
func (r *recorder) err(ctx context.Context) error {
	if len(r.actions) > 0 {
		return r.fail
	}
	if _, err := r.state.GetSvc(ctx); err != nil {
		return err
	}
	_, err := r.state.GetSettings(ctx)
	return err
}

var _ frontend.FrontendManagerImpl = (*recorder)(nil)

// createDeployment creates a Deployment (which nothing runs: envtest has no
// controllers) and returns it as created. The Deployment is deleted when the
// test ends, before its manager stops, so that the managers of later tests,
// which watch every namespace, do not reconcile it.
func createDeployment(t *testing.T, c client.Client, ns, name string) *appsv1.Deployment {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "example.invalid/web"}}},
			},
		},
	}
	if err := c.Create(t.Context(), d); err != nil {
		t.Fatalf("create deployment %s: %v", name, err)
	}
	t.Cleanup(func() {
		// The test's context is done by now.
		if err := c.Delete(context.Background(), d); client.IgnoreNotFound(err) != nil {
			t.Errorf("delete deployment %s: %v", name, err)
		}
	})
	return d
}

// checkUntouched fails the test unless the API server holds each of deps at
// the resourceVersion it was created with, and without finalizers: nobody,
// the engine included, wrote to it (envtest runs no Deployment controller).
func checkUntouched(t *testing.T, c client.Client, deps ...*appsv1.Deployment) {
	t.Helper()
	for _, d := range deps {
		got := &appsv1.Deployment{}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(d), got); err != nil {
			t.Fatalf("get deployment %s: %v", d.Name, err)
		}
		if got.ResourceVersion != d.ResourceVersion {
			t.Errorf("deployment %s at resourceVersion %s, want %s as created", d.Name, got.ResourceVersion, d.ResourceVersion)
		}
		if len(got.Finalizers) > 0 {
			t.Errorf("deployment %s has finalizers %v, want none", d.Name, got.Finalizers)
		}
	}
}

// createService creates the Service name in ns, controlled by owner when it
// is not nil, and waits until cache holds it.
func createService(t *testing.T, c client.Client, cache client.Reader, ns, name string, owner *appsv1.Deployment) *corev1.Service {
	t.Helper()
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
	if owner != nil {
		s.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: "Deployment", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true),
		}}
	}
	if err := c.Create(t.Context(), s); err != nil {
		t.Fatalf("create service %s: %v", name, err)
	}
	waitCached(t, cache, s)
	return s
}

// waitCached waits until cache holds obj at obj's resourceVersion or later.
func waitCached(t *testing.T, cache client.Reader, obj client.Object) {
	t.Helper()
	want, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", obj.GetResourceVersion(), err)
	}
	got := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := cache.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
			return err
		}
		if rv, _ := strconv.ParseUint(got.GetResourceVersion(), 10, 64); rv < want {
			return fmt.Errorf("cache holds %s at resourceVersion %d, want %d", obj.GetName(), rv, want)
		}
		return nil
	})
}

// readsOnce is the Reads of a reconcile of the Deployment name in ns that
// read both states: each once, although both actions name svc.
func readsOnce(ns, name string) map[string]int {
	return map[string]int{
		"Service " + ns + "/" + name + "-svc":  1,
		"ConfigMap " + ns + "/" + settingsName: 1,
	}
}

// both are the actions of a reconcile that got its states.
var both = []string{frontend.FrontendManagerSyncService, frontend.FrontendManagerPublishAddress}

// ok is what a successful reconcile of key sees without a Service and with
// the given settings.
func ok(key client.ObjectKey, settings map[string]string) seen {
	return seen{Actions: both, SameSvc: true, Settings: settings, Reads: readsOnce(key.Namespace, key.Name)}
}

// barrier returns a function that changes the settings of ns, a namespace
// whose only Deployment is x, and waits for x to see the change; it returns
// the index in h.all() of that reconcile. Events reach the generated
// ConfigMap watch in the order the API server made them, and the one worker
// takes requests in the order they were enqueued, so any request a change
// before the barrier enqueued has been reconciled, or is about to be if its
// Deployment was being reconciled, when the barrier is. Two barriers in a row
// leave nothing pending.
func barrier(t *testing.T, h *harness, c client.Client, ns string, x client.ObjectKey) func() int {
	n := 0
	return func() int {
		t.Helper()
		n++
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: settingsName}}
		data := map[string]string{"barrier": strconv.Itoa(n)}
		if _, err := controllerutil.CreateOrUpdate(t.Context(), c, cm, func() error {
			cm.Data = data
			return nil
		}); err != nil {
			t.Fatalf("barrier %d: %v", n, err)
		}
		return h.wait(t, x, ok(x, data))
	}
}

// TestServiceState checks the owned single-object state svc through the
// engine on a real API server: nil while there is no Service, the Service
// once it exists and the Deployment controls it (and again after it changes,
// which the generated Owns watch reports), and an error wrapping
// bosun.ErrNotControlled, with no action run, for a Service without a
// controller or controlled by another Deployment. Every reconcile reads each
// state once, and the engine writes nothing to a Deployment, failing or not.
func TestServiceState(t *testing.T) {
	cp := shared.ControlPlane(t)
	h := &harness{}
	mgr := bosuntest.RunManager(t, cp, h.setup)
	cache := mgr.GetCache()
	ns := bosuntest.Namespace(t, cp.Client)

	shop := createDeployment(t, cp.Client, ns, "shop")
	shopKey := client.ObjectKeyFromObject(shop)
	h.wait(t, shopKey, ok(shopKey, nil))

	// A Service the Deployment controls: creating it enqueues the
	// Deployment, and PublishAddress gets the object SyncService got.
	svc := createService(t, cp.Client, cache, ns, "shop-svc", shop)
	withSvc := func() seen {
		s := ok(shopKey, nil)
		s.Svc = "shop-svc@" + svc.ResourceVersion
		return s
	}
	h.wait(t, shopKey, withSvc())

	// Changing the owned Service enqueues its controller again.
	base := svc.DeepCopy()
	svc.Labels = map[string]string{"changed": "yes"}
	if err := cp.Client.Patch(t.Context(), svc, client.MergeFrom(base)); err != nil {
		t.Fatalf("patch service: %v", err)
	}
	h.wait(t, shopKey, withSvc())

	// Services of the selected name that the Deployment does not control:
	// the reconcile fails before any action runs, and the engine retries it.
	deps := []*appsv1.Deployment{shop}
	for _, tc := range []struct {
		name       string
		controller *appsv1.Deployment
	}{
		{name: "lone"},
		{name: "foreign", controller: shop},
	} {
		createService(t, cp.Client, cache, ns, tc.name+"-svc", tc.controller)
		d := createDeployment(t, cp.Client, ns, tc.name)
		deps = append(deps, d)
		key := client.ObjectKeyFromObject(d)
		want := seen{NotControlled: true, Reads: map[string]int{"Service " + ns + "/" + tc.name + "-svc": 1}}
		h.wait(t, key, want)
		bosuntest.Eventually(t, func(context.Context) error {
			if n := len(of(h.all(), key)); n < 2 {
				return fmt.Errorf("%s reconciled %d times, want a retry", key, n)
			}
			return nil
		})
		h.wait(t, key, want)
	}

	h.checkNoWrites(t)
	h.checkOneImpl(t)
	checkUntouched(t, cp.Client, deps...)
}

// TestSettingsState checks the settings state and the generated ConfigMap
// watch through the engine on a real API server: the state reads the
// ConfigMap through the cache, a change to the selected ConfigMap (created,
// updated, deleted) reconciles every Deployment of its namespace with the
// new data, and neither other ConfigMaps nor the selected name in another
// namespace reconcile them. The engine writes nothing to the Deployments.
func TestSettingsState(t *testing.T) {
	cp := shared.ControlPlane(t)
	h := &harness{}
	bosuntest.RunManager(t, cp, h.setup)
	ctx := t.Context()
	nsA := bosuntest.Namespace(t, cp.Client)
	nsB := bosuntest.Namespace(t, cp.Client)
	nsBarrier := bosuntest.Namespace(t, cp.Client)

	deps := []*appsv1.Deployment{
		createDeployment(t, cp.Client, nsA, "a1"),
		createDeployment(t, cp.Client, nsA, "a2"),
		createDeployment(t, cp.Client, nsB, "b"),
		createDeployment(t, cp.Client, nsBarrier, "x"),
	}
	var keys []client.ObjectKey
	for _, d := range deps {
		key := client.ObjectKeyFromObject(d)
		keys = append(keys, key)
		h.wait(t, key, ok(key, nil))
	}
	a1, a2, b, x := keys[0], keys[1], keys[2], keys[3]
	barrier := barrier(t, h, cp.Client, nsBarrier, x)

	// Creating and updating the selected ConfigMap reconciles both
	// Deployments of its namespace, which read the new data.
	settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: nsA, Name: settingsName}, Data: map[string]string{"port": "8080"}}
	if err := cp.Client.Create(ctx, settings); err != nil {
		t.Fatalf("create settings: %v", err)
	}
	h.wait(t, a1, ok(a1, map[string]string{"port": "8080"}))
	h.wait(t, a2, ok(a2, map[string]string{"port": "8080"}))
	settings.Data["port"] = "9090"
	if err := cp.Client.Update(ctx, settings); err != nil {
		t.Fatalf("update settings: %v", err)
	}
	h.wait(t, a1, ok(a1, map[string]string{"port": "9090"}))
	h.wait(t, a2, ok(a2, map[string]string{"port": "9090"}))
	barrier()
	start := barrier()

	// Other ConfigMaps, in either namespace, reconcile nothing.
	for _, ns := range []string{nsA, nsB} {
		other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other"}, Data: map[string]string{"k": "1"}}
		if err := cp.Client.Create(ctx, other); err != nil {
			t.Fatalf("create other: %v", err)
		}
		other.Data["k"] = "2"
		if err := cp.Client.Update(ctx, other); err != nil {
			t.Fatalf("update other: %v", err)
		}
	}
	end := barrier()
	all := h.all()
	for _, o := range all[start+1 : end] {
		if o.key != x {
			t.Errorf("%s reconciled after a change to a ConfigMap no state selects", o.key)
		}
	}
	// b, in another namespace, was reconciled once, when it was created.
	if n := len(of(all[:end], b)); n != 1 {
		t.Errorf("%s reconciled %d times, want once: the settings of another namespace changed", b, n)
	}

	// The selected name in b's namespace reconciles b.
	if err := cp.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: nsB, Name: settingsName}, Data: map[string]string{"port": "7070"}}); err != nil {
		t.Fatalf("create settings of b: %v", err)
	}
	h.wait(t, b, ok(b, map[string]string{"port": "7070"}))

	// Deleting the selected ConfigMap reconciles its Deployments, which then
	// find no settings.
	if err := cp.Client.Delete(ctx, settings); err != nil {
		t.Fatalf("delete settings: %v", err)
	}
	h.wait(t, a1, ok(a1, nil))
	h.wait(t, a2, ok(a2, nil))

	h.checkNoWrites(t)
	h.checkOneImpl(t)
	checkUntouched(t, cp.Client, deps...)
}

// errUnavailable is the failure of SyncService in TestActionError.
var errUnavailable = errors.New("load balancer unavailable")

// TestActionError checks that the engine retries a Deployment whose action
// fails with growing delays, not in a hot loop; that it reports the error
// in a Warning event on the Deployment, since a Deployment has no conditions
// to hold it; that other Deployments are left alone; and that the retries
// stop once the action succeeds. The engine writes nothing meanwhile.
func TestActionError(t *testing.T) {
	cp := shared.ControlPlane(t)
	h := &harness{}
	bosuntest.RunManager(t, cp, h.setup)
	ns := bosuntest.Namespace(t, cp.Client)
	nsBarrier := bosuntest.Namespace(t, cp.Client)

	fine := createDeployment(t, cp.Client, ns, "fine")
	fineKey := client.ObjectKeyFromObject(fine)
	h.wait(t, fineKey, ok(fineKey, nil))
	brokenKey := client.ObjectKey{Namespace: ns, Name: "broken"}
	h.fail(brokenKey, errUnavailable)
	broken := createDeployment(t, cp.Client, ns, brokenKey.Name)
	x := createDeployment(t, cp.Client, nsBarrier, "x")
	xKey := client.ObjectKeyFromObject(x)
	h.wait(t, xKey, ok(xKey, nil))
	barrier := barrier(t, h, cp.Client, nsBarrier, xKey)

	// Six attempts in a row fail, each after the backoff of the one before.
	const attempts = 6
	failed := ok(brokenKey, nil)
	failed.Actions, failed.SameSvc, failed.Err = both[:1], false, errUnavailable.Error()
	var tries []outcome
	bosuntest.Eventually(t, func(context.Context) error {
		if tries = of(h.all(), brokenKey); len(tries) < attempts {
			return fmt.Errorf("%s reconciled %d times, want %d attempts", brokenKey, len(tries), attempts)
		}
		return nil
	})
	for i, o := range tries[:attempts] {
		if diff := cmp.Diff(failed, o.seen); diff != "" {
			t.Errorf("attempt %d of %s (-want +got):\n%s", i+1, brokenKey, diff)
		}
		if i == 0 {
			continue
		}
		if gap, least := o.at.Sub(tries[i-1].at), backoffBase<<(i-1); gap < least {
			t.Errorf("attempt %d of %s came %s after the one before, want at least %s of backoff", i+1, brokenKey, gap, least)
		}
	}

	// The error shows in an event on the Deployment.
	bosuntest.Eventually(t, func(ctx context.Context) error {
		var events eventsv1.EventList
		if err := cp.Client.List(ctx, &events, client.InNamespace(ns)); err != nil {
			return err
		}
		var got []string
		for _, e := range events.Items {
			if e.Regarding.Name == brokenKey.Name && e.Type == corev1.EventTypeWarning && e.Reason == string(conditions.ReasonError) && strings.Contains(e.Note, errUnavailable.Error()) {
				return nil
			}
			got = append(got, e.Regarding.Name+": "+e.Type+" "+e.Reason+" "+e.Note)
		}
		return fmt.Errorf("no Warning event on %s with the error; events: %q", brokenKey, got)
	})

	// The retries left fine alone: reconciled once, when it was created.
	end := barrier()
	if n := len(of(h.all()[:end], fineKey)); n != 1 {
		t.Errorf("%s reconciled %d times while %s failed, want once", fineKey, n, brokenKey)
	}

	// Once the action succeeds, the next retry settles the Deployment.
	h.fail(brokenKey, nil)
	done := h.wait(t, brokenKey, ok(brokenKey, nil))
	barrier()
	end = barrier()
	if n := len(of(h.all()[done+1:end], brokenKey)); n != 0 {
		t.Errorf("%s reconciled %d more times after it succeeded, want none", brokenKey, n)
	}

	h.checkNoWrites(t)
	h.checkOneImpl(t)
	checkUntouched(t, cp.Client, fine, broken, x)
}

// TestPublishAddress checks the engine's write of a Deployment: an action
// that changes the working copy, here PublishAddress setting an annotation
// once the Service exists, makes the engine patch the Deployment once, with
// no status write and no finalizer, and a later reconcile that changes
// nothing writes nothing.
func TestPublishAddress(t *testing.T) {
	cp := shared.ControlPlane(t)
	h := &harness{publish: true}
	mgr := bosuntest.RunManager(t, cp, h.setup)
	ctx := t.Context()
	ns := bosuntest.Namespace(t, cp.Client)

	pub := createDeployment(t, cp.Client, ns, "pub")
	key := client.ObjectKeyFromObject(pub)
	h.wait(t, key, ok(key, nil))
	h.checkNoWrites(t)

	svc := createService(t, cp.Client, mgr.GetCache(), ns, "pub-svc", pub)
	if svc.Spec.ClusterIP == "" {
		t.Fatal("the API server assigned the Service no ClusterIP")
	}
	got := &appsv1.Deployment{}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := cp.Client.Get(ctx, key, got); err != nil {
			return err
		}
		if a := got.Annotations[addressAnnotation]; a != svc.Spec.ClusterIP {
			return fmt.Errorf("annotation %s is %q, want %q", addressAnnotation, a, svc.Spec.ClusterIP)
		}
		return nil
	})
	if len(got.Finalizers) > 0 {
		t.Errorf("deployment has finalizers %v, want none", got.Finalizers)
	}
	want := []bosuntest.Write{{Verb: bosuntest.VerbPatch, Kind: "Deployment", Namespace: ns, Name: pub.Name}}
	if diff := cmp.Diff(want, h.writes.Writes()); diff != "" {
		t.Errorf("writes after the Service appeared (-want +got):\n%s", diff)
	}

	// A reconcile that finds the annotation in place writes nothing.
	settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: settingsName}, Data: map[string]string{"port": "8080"}}
	if err := cp.Client.Create(ctx, settings); err != nil {
		t.Fatalf("create settings: %v", err)
	}
	steady := ok(key, settings.Data)
	steady.Svc = "pub-svc@" + svc.ResourceVersion
	h.wait(t, key, steady)
	if diff := cmp.Diff(want, h.writes.Writes()); diff != "" {
		t.Errorf("writes after a reconcile that changed nothing (-want +got):\n%s", diff)
	}
	h.checkOneImpl(t)
	checkUntouched(t, cp.Client, got)
}
