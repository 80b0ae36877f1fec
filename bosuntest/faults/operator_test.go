package faults_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/faults"
	"github.com/bosunkit/bosun/children"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/managed"
)

// shared is the control plane the kit's tests share, with the garbage
// collector: a Widget deleted and made again under its name must not meet
// its predecessor's ConfigMap.
var shared = bosuntest.Shared{Options: func() (controlplane.Options, error) {
	opts, err := testapi.ControlPlaneOptions()
	opts.ControllerManager = true
	return opts, err
}}

func TestMain(m *testing.M) { shared.Main(m) }

// finalizer is the test operator's finalizer.
const finalizer = "faults.test.bosun.dev/cleanup"

// store is an external system in memory that, like many cloud APIs, lets
// two resources have one name: a second create makes a duplicate, which
// is what the kit's oracles look for.
type store struct {
	mu        sync.Mutex
	next      int
	resources []resource
	creates   int
}

// resource is one resource of a store.
type resource struct {
	id, name, owner string
}

// byName returns the resources called name.
func (s *store) byName(name string) []resource {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []resource
	for _, r := range s.resources {
		if r.name == name {
			out = append(out, r)
		}
	}
	return out
}

// ownedBy counts the resources of each owner.
func (s *store) ownedBy() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for _, r := range s.resources {
		out[r.owner]++
	}
	return out
}

// storeClient is the managed.ExternalClient of a store.
type storeClient struct{ s *store }

func (c storeClient) Observe(_ context.Context, w *testapi.Widget) (managed.Observation, error) {
	found := c.s.byName(managed.ExternalName(w))
	if len(found) == 0 {
		return managed.Observation{}, nil
	}
	return managed.Observation{Exists: true, UpToDate: true, Available: true, Owner: found[0].owner}, nil
}

func (c storeClient) Create(_ context.Context, w *testapi.Widget) (managed.Creation, error) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.s.next++
	c.s.creates++
	c.s.resources = append(c.s.resources, resource{id: fmt.Sprint(c.s.next), name: managed.ExternalName(w), owner: managed.Identity(w)})
	return managed.Creation{}, nil
}

func (c storeClient) Update(context.Context, *testapi.Widget) (managed.UpdateResult, error) {
	return managed.UpdateResult{}, nil
}

func (c storeClient) Delete(_ context.Context, w *testapi.Widget) error {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	name := managed.ExternalName(w)
	c.s.resources = slices.DeleteFunc(c.s.resources, func(r resource) bool { return r.name == name })
	return nil
}

// setup registers the test operator: each Widget gets a ConfigMap and a
// resource in st, and reports Ready.
func setup(st *store) func(mgr ctrl.Manager, p *faults.Process) error {
	return setupRolling(st, 0)
}

// zones are the Deployments of a Widget whose operator rolls them out.
var zones = []string{"zone-a", "zone-b", "zone-c"}

// setupRolling is setup with, when maxUnavailable is above zero, a
// Deployment of no replicas per zone besides the ConfigMap, its pod
// template following the spec and its changes rolled out maxUnavailable
// at a time: ready once the deployment controller saw its spec.
func setupRolling(st *store, maxUnavailable int) func(mgr ctrl.Manager, p *faults.Process) error {
	return func(mgr ctrl.Manager, p *faults.Process) error {
		desired := func(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
			objs := []client.Object{&corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: req.Object.Name + "-part"},
				Data:       map[string]string{"value": fmt.Sprint(req.Object.Spec.Value)},
			}}
			if maxUnavailable > 0 {
				for _, z := range zones {
					objs = append(objs, zoneDeployment(req.Object.Name+"-"+z, req.Object.Spec.Value))
				}
			}
			return objs, nil
		}
		kinds := []children.Kind{children.Of(&corev1.ConfigMap{})}
		if maxUnavailable > 0 {
			kinds = append(kinds, children.Kind{Object: &appsv1.Deployment{}, MaxUnavailable: maxUnavailable})
		}
		connector := managed.ConnectorFunc[*testapi.Widget](func(context.Context, *testapi.Widget) (managed.ExternalClient[*testapi.Widget], error) {
			return storeClient{st}, nil
		})
		r := &bosun.Reconciler[*testapi.Widget]{
			Name:      "faults-test",
			Finalizer: finalizer,
			Steps: []bosun.Step[*testapi.Widget]{
				children.NewStep("parts", desired, kinds),
				managed.NewStep(connector,
					managed.WithCallHook(p.External()),
					managed.WithTiming(managed.Timing{Poll: time.Second, MinPoll: time.Second, Short: 200 * time.Millisecond, CreationGrace: time.Second})),
			},
		}
		p.Configure(&r.Options)
		b := faults.Shard(bosun.ControllerManagedBy[*testapi.Widget](mgr), p).Owns(&corev1.ConfigMap{})
		if maxUnavailable > 0 {
			b = b.Owns(&appsv1.Deployment{})
		}
		return b.Complete(r)
	}
}

// zoneDeployment returns the Deployment called name, of no replicas,
// whose pod template says value.
func zoneDeployment(name string, value int64) *appsv1.Deployment {
	labels := map[string]string{"app.kubernetes.io/instance": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: "registry.example/app:" + strconv.FormatInt(value, 10),
				}}},
			},
		},
	}
}

// createWidgets makes n Widgets in ns.
func createWidgets(n int) func(ctx context.Context, c client.Client, ns string) ([]client.Object, error) {
	return func(ctx context.Context, c client.Client, ns string) ([]client.Object, error) {
		var objs []client.Object
		for i := range n {
			w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("w%d", i)}, Spec: testapi.WidgetSpec{Value: int64(i + 1)}}
			if err := c.Create(ctx, w); err != nil {
				return nil, err
			}
			objs = append(objs, w)
		}
		return objs, nil
	}
}

// converged checks that every Widget is Ready for its generation, has its
// ConfigMap and exactly one resource in st.
func converged(st *store) func(ctx context.Context, c client.Client, ns string, objs []client.Object) error {
	return func(ctx context.Context, c client.Client, ns string, objs []client.Object) error {
		var errs []error
		for _, o := range objs {
			w := &testapi.Widget{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(o), w); err != nil {
				errs = append(errs, err)
				continue
			}
			ready := meta.FindStatusCondition(w.Status.Conditions, conditions.TypeReady)
			if ready == nil || ready.Status != metav1.ConditionTrue || ready.ObservedGeneration != w.Generation {
				errs = append(errs, fmt.Errorf("%s not ready: %v", w.Name, ready))
				continue
			}
			cm := &corev1.ConfigMap{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: w.Name + "-part"}, cm); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", w.Name, err))
			} else if got, want := cm.Data["value"], fmt.Sprint(w.Spec.Value); got != want {
				errs = append(errs, fmt.Errorf("%s: its ConfigMap holds %s, the spec %s", w.Name, got, want))
			}
			if n := len(st.byName(ns + "." + w.Name)); n != 1 {
				errs = append(errs, fmt.Errorf("%s has %d external resources", w.Name, n))
			}
		}
		return errors.Join(errs...)
	}
}

// duplicates counts the Widgets with more than one resource in st.
func duplicates(st *store) func(ctx context.Context, c client.Client, ns string, objs []client.Object) (int, error) {
	return func(ctx context.Context, c client.Client, ns string, objs []client.Object) (int, error) {
		n := 0
		for _, o := range objs {
			if len(st.byName(ns+"."+o.GetName())) > 1 {
				n++
			}
		}
		return n, nil
	}
}

// cleaned checks that the Widgets are gone with their resources in st. The
// ConfigMaps are left to the garbage collector.
func cleaned(st *store) func(ctx context.Context, c client.Client, ns string, objs []client.Object) error {
	return func(ctx context.Context, c client.Client, ns string, objs []client.Object) error {
		var errs []error
		for _, o := range objs {
			err := c.Get(ctx, client.ObjectKeyFromObject(o), &testapi.Widget{})
			if !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("%s still there (%w)", o.GetName(), err))
			}
			if n := len(st.byName(ns + "." + o.GetName())); n != 0 {
				errs = append(errs, fmt.Errorf("%s left %d external resources", o.GetName(), n))
			}
		}
		return errors.Join(errs...)
	}
}

// scenario is the test operator's scenario over n Widgets.
func scenario(st *store, n int) faults.Scenario {
	return faults.Scenario{
		Setup:      setup(st),
		Create:     createWidgets(n),
		Converged:  converged(st),
		Duplicates: duplicates(st),
		Cleaned:    cleaned(st),
		Bound:      30 * time.Second,
	}
}
