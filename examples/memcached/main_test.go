package memcached

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/controlplane"
	cachev1 "github.com/bosunkit/bosun/examples/memcached/api/v1alpha1"
)

// shared is the control plane, with the Memcached CRD installed, that the
// envtest tests of this package share. Each test runs its own manager and
// works in a namespace of its own. It runs kube-controller-manager, whose
// deployment and replicaset controllers make the pods of a Memcached's
// Deployment and whose garbage collector removes the children of a deleted
// Memcached, and two simulated nodes, on which kube-scheduler places the
// pods and kwok makes them Running and Ready: the pods are real API
// objects, with no container behind them.
var shared = bosuntest.Shared{Options: func() (controlplane.Options, error) {
	opts, err := controlplane.OptionsFor(AddToScheme, CRDs)()
	opts.ControllerManager = true
	opts.Nodes = 2
	return opts, err
}}

func TestMain(m *testing.M) { shared.Main(m) }

// timeout bounds each wait of the envtest tests: pods are made, placed
// and made ready by three more processes.
const timeout = time.Minute

// env is what an envtest test works with: a client of its own, the test's
// namespace, and what the controller under test wrote and ran.
type env struct {
	t      *testing.T
	c      client.Client
	ns     string
	writes *bosuntest.WriteCounter
	passes *passLog
	// mgr is the manager the controller runs in.
	mgr ctrl.Manager
}

// start runs the Memcached controller, set up as SetupWithManager sets it
// up and with the pod cache of LimitPodCache, over a new namespace until
// the test ends. Every watch of the controller keeps only the events of
// that namespace. The controller's client counts its writes.
func start(t *testing.T) *env {
	t.Helper()
	cp := shared.ControlPlane(t)
	e := newEnv(t, cp)
	e.mgr = bosuntest.RunManagerWith(t, cp, bosuntest.ManagerOptions{Configure: LimitPodCache}, e.setup)
	return e
}

// newEnv makes the test's namespace on cp.
func newEnv(t *testing.T, cp *controlplane.ControlPlane) *env {
	t.Helper()
	return &env{t: t, c: cp.Client, ns: bosuntest.Namespace(t, cp.Client), writes: &bosuntest.WriteCounter{}, passes: &passLog{}}
}

// setup registers the controller with mgr, through the counting client,
// restricted to the test's namespace, and records its passes.
func (e *env) setup(mgr ctrl.Manager) error {
	bosun.ObservationOf(mgr).AddObserver(e.passes)
	c := e.passes.WrapClient(e.writes.Wrap(mgr.GetClient()))
	here := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == e.ns })
	return setup(bosuntest.ManagerWithClient(mgr, c), here)
}

func (e *env) key(name string) client.ObjectKey { return client.ObjectKey{Namespace: e.ns, Name: name} }

// create creates a Memcached of size servers in the test's namespace,
// changed by each of mutate.
func (e *env) create(name string, size int32, mutate ...func(*cachev1.Memcached)) {
	e.t.Helper()
	m := &cachev1.Memcached{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec:       cachev1.MemcachedSpec{Size: size},
	}
	for _, f := range mutate {
		f(m)
	}
	if err := e.c.Create(e.t.Context(), m); err != nil {
		e.t.Fatalf("creating memcached %s: %v", name, err)
	}
}

// patch changes the Memcached name with change.
func (e *env) patch(name string, change func(*cachev1.Memcached)) {
	e.t.Helper()
	m := &cachev1.Memcached{}
	if err := e.c.Get(e.t.Context(), e.key(name), m); err != nil {
		e.t.Fatalf("reading memcached %s: %v", name, err)
	}
	base := m.DeepCopy()
	change(m)
	if err := e.c.Patch(e.t.Context(), m, client.MergeFrom(base)); err != nil {
		e.t.Fatalf("patching memcached %s: %v", name, err)
	}
}

// touch is the passes' Touch of the Memcached name.
func (e *env) touch(name, value string) {
	e.t.Helper()
	e.passes.Touch(e.t, e.c, &cachev1.Memcached{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name}}, value)
}

// pods returns the pods of the Memcached name that are not being
// deleted, by name, read from the API server.
func (e *env) pods(ctx context.Context, name string) (map[string]corev1.Pod, error) {
	var list corev1.PodList
	if err := e.c.List(ctx, &list, client.InNamespace(e.ns), client.MatchingLabels{LabelName: "memcached", LabelMemcached: name}); err != nil {
		return nil, err
	}
	out := map[string]corev1.Pod{}
	for _, p := range list.Items {
		if p.DeletionTimestamp.IsZero() {
			out[p.Name] = p
		}
	}
	return out, nil
}

// waitReady waits until the Memcached name is Ready for its current
// generation with size servers: its status counts size ready replicas and
// lists exactly the names of its pods, size of them, each Running, Ready,
// placed on a node and of image; its Deployment has size replicas of
// image. It returns the Memcached and its pods.
func (e *env) waitReady(name string, size int32, image string) (*cachev1.Memcached, map[string]corev1.Pod) {
	e.t.Helper()
	m := &cachev1.Memcached{}
	var pods map[string]corev1.Pod
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		if err := e.c.Get(ctx, e.key(name), m); err != nil {
			return err
		}
		if err := readyFor(m); err != nil {
			return err
		}
		var err error
		if pods, err = e.pods(ctx, name); err != nil {
			return err
		}
		if m.Status.ReadyReplicas != size || len(pods) != int(size) {
			return fmt.Errorf("status.readyReplicas %d, %d pods; want %d", m.Status.ReadyReplicas, len(pods), size)
		}
		names := make([]string, 0, len(pods))
		for n, p := range pods {
			names = append(names, n)
			if err := running(&p, image); err != nil {
				return fmt.Errorf("pod %s: %w", n, err)
			}
		}
		slices.Sort(names)
		if !slices.Equal(names, m.Status.Pods) {
			return fmt.Errorf("status.pods %v, want the pods %v", m.Status.Pods, names)
		}
		var d appsv1.Deployment
		if err := e.c.Get(ctx, e.key(name), &d); err != nil {
			return err
		}
		if got := *d.Spec.Replicas; got != size || d.Spec.Template.Spec.Containers[0].Image != image {
			return fmt.Errorf("deployment has %d replicas of %s, want %d of %s", got, d.Spec.Template.Spec.Containers[0].Image, size, image)
		}
		return nil
	}, bosuntest.Timeout(timeout))
	return m, pods
}

// readyFor returns nil when m's status describes its generation and its
// conditions are all True: Ready, DeploymentReady and ServiceReady.
func readyFor(m *cachev1.Memcached) error {
	if m.Status.ObservedGeneration != m.Generation {
		return fmt.Errorf("observedGeneration %d, generation %d", m.Status.ObservedGeneration, m.Generation)
	}
	for _, typ := range []string{conditions.TypeReady, cachev1.ConditionDeploymentReady, cachev1.ConditionServiceReady} {
		c := conditions.Find(m.Status.Conditions, typ)
		switch {
		case c == nil:
			return errors.New("no " + typ + " condition")
		case c.Status != metav1.ConditionTrue:
			return fmt.Errorf("%s is %s/%s (%q)", typ, c.Status, c.Reason, c.Message)
		case c.ObservedGeneration != m.Generation:
			return fmt.Errorf("%s is for generation %d, want %d", typ, c.ObservedGeneration, m.Generation)
		}
	}
	return nil
}

// running returns nil when p is placed on a node, Running and Ready, and
// runs image.
func running(p *corev1.Pod, image string) error {
	ready := false
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	switch {
	case p.Spec.NodeName == "":
		return errors.New("not placed on a node")
	case p.Status.Phase != corev1.PodRunning || !ready:
		return fmt.Errorf("phase %s, ready %t", p.Status.Phase, ready)
	case p.Spec.Containers[0].Image != image:
		return fmt.Errorf("image %s, want %s", p.Spec.Containers[0].Image, image)
	}
	return nil
}

// waitCached waits until the cache of the controller's manager holds the
// Deployment and the Service of the Memcached name, and exactly the pods
// given (and no other of the Memcached).
func (e *env) waitCached(name string, pods map[string]corev1.Pod) {
	e.t.Helper()
	c := e.mgr.GetClient()
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		if err := c.Get(ctx, e.key(name), &appsv1.Deployment{}); err != nil {
			return fmt.Errorf("deployment in the cache: %w", err)
		}
		if err := c.Get(ctx, e.key(name), &corev1.Service{}); err != nil {
			return fmt.Errorf("service in the cache: %w", err)
		}
		var list corev1.PodList
		if err := c.List(ctx, &list, client.InNamespace(e.ns), client.MatchingLabels{LabelMemcached: name}); err != nil {
			return err
		}
		if len(list.Items) != len(pods) {
			return fmt.Errorf("%d pods in the cache, want %d", len(list.Items), len(pods))
		}
		for _, p := range list.Items {
			if want, ok := pods[p.Name]; !ok || want.ResourceVersion != p.ResourceVersion {
				return fmt.Errorf("pod %s in the cache at version %s, want %s", p.Name, p.ResourceVersion, want.ResourceVersion)
			}
		}
		return nil
	}, bosuntest.Timeout(timeout))
}

// passLog records the passes of the controller in its ReconcileCounter,
// which notes the Memcacheds the controller loads for its Touch.
type passLog struct {
	bosuntest.ReconcileCounter
}

// ObservePass implements bosun.PassObserver.
func (l *passLog) ObservePass(_ context.Context, r bosun.PassReport) {
	l.Record(bosuntest.ReconcileCall{Request: reconcile.Request{NamespacedName: r.Object}, Start: r.Start, Duration: r.Duration})
}
