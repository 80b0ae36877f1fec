package scopes_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/cmd/bosun/gen/internal/scopes"
	"github.com/bosunkit/bosun/cmd/bosun/gen/internal/testapi"
)

// placed is what one call of Place got: the names of what each state
// read, "" or nil for nothing.
type placed struct {
	Defaults, Settings, Node string
	Queues, Spare            []string
}

// placements records the latest call of Place for each Target.
type placements struct {
	mu     sync.Mutex
	latest map[client.ObjectKey]placed
	calls  map[client.ObjectKey]int
}

// setup registers an engine controller for Targets whose one step is the
// generated step of Place. The step sets up the target indexes and the
// watches of ConfigMaps and Nodes by itself. Status writes do not
// reconcile a Target, so every reconcile after its first comes from a
// watch.
func (p *placements) setup(mgr ctrl.Manager) error {
	steps := scopes.NewPlacementManagerSteps(func(req *bosun.Pass[*testapi.Target], _ *scopes.PlacementManagerState) scopes.PlacementManagerImpl {
		return &placer{p: p, key: client.ObjectKeyFromObject(req.Object)}
	})
	return bosun.ControllerManagedBy[*testapi.Target](mgr).
		For(nil, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(&bosun.Reconciler[*testapi.Target]{Name: "placement", Steps: []bosun.Step[*testapi.Target]{steps.Place()}})
}

// wait waits until the latest call of Place for key got want.
func (p *placements) wait(t *testing.T, key client.ObjectKey, want placed) {
	t.Helper()
	bosuntest.Eventually(t, func(context.Context) error {
		p.mu.Lock()
		defer p.mu.Unlock()
		got, ok := p.latest[key]
		if !ok {
			return fmt.Errorf("no Place of %s yet", key)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			return fmt.Errorf("latest Place of %s (-want +got):\n%s", key, diff)
		}
		return nil
	})
}

// count returns how many times Place ran for key.
func (p *placements) count(key client.ObjectKey) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[key]
}

// placer is the PlacementManagerImpl of one reconcile.
type placer struct {
	p   *placements
	key client.ObjectKey
}

func (r *placer) Place(_ context.Context, _ logr.Logger, defaults, settings *corev1.ConfigMap, queues []corev1.ConfigMap, node *corev1.Node, spare []corev1.Node, _ []corev1.Pod) (ctrl.Result, error) {
	got := placed{}
	if defaults != nil {
		got.Defaults = defaults.Namespace + "/" + defaults.Name
	}
	if settings != nil {
		got.Settings = settings.Namespace + "/" + settings.Name
	}
	if node != nil {
		got.Node = node.Name
	}
	for _, q := range queues {
		got.Queues = append(got.Queues, q.Name)
	}
	for _, n := range spare {
		got.Spare = append(got.Spare, n.Name)
	}
	slices.Sort(got.Queues)
	slices.Sort(got.Spare)
	r.p.mu.Lock()
	defer r.p.mu.Unlock()
	r.p.latest[r.key] = got
	r.p.calls[r.key]++
	return ctrl.Result{}, nil
}

var _ scopes.PlacementManagerImpl = (*placer)(nil)

// create creates obj, failing the test on an error, and deletes it when the
// test ends if cleanup is set (cluster-scoped objects outlive the test's
// namespaces).
func create(t *testing.T, c client.Client, obj client.Object, cleanup bool) {
	t.Helper()
	// The namespace bosun-system outlives a test: a later run finds it.
	err := c.Create(t.Context(), obj)
	if apierrors.IsAlreadyExists(err) && obj.GetName() == "bosun-system" {
		err = nil
	}
	if err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
	if cleanup {
		t.Cleanup(func() { _ = c.Delete(context.Background(), obj) })
	}
}

func configMap(ns, name string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
}

func node(name string, labels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// TestScopedStates runs the generated step of PlacementManager with the
// engine on a real API server. Its states read a ConfigMap in a fixed
// namespace, a ConfigMap and a list of ConfigMaps in the namespace the
// Target's spec names, a Node by name and a list of Nodes, with set-based
// label selectors; the watches the step set up, through the target indexes
// it registered, reconcile the Target when any of them appears, and not
// when an object it does not select changes.
func TestScopedStates(t *testing.T) {
	cp := shared.ControlPlane(t)
	c := cp.Client
	p := &placements{latest: make(map[client.ObjectKey]placed), calls: make(map[client.ObjectKey]int)}
	bosuntest.RunManager(t, cp, p.setup)
	ns := bosuntest.Namespace(t, c)
	cfg := bosuntest.Namespace(t, c)
	create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bosun-system"}}, false)
	nodeName := cfg + "-node"

	tg := &testapi.Target{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "t1"},
		Spec:       testapi.TargetSpec{Schedule: "@daily", ServiceName: nodeName, ConfigNamespace: cfg, Template: testapi.TemplateSpec{Queue: "q1"}},
	}
	// t2 reads another namespace and another node: nothing below is its.
	other := bosuntest.Namespace(t, c)
	t2 := &testapi.Target{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "t2"},
		Spec:       testapi.TargetSpec{Schedule: "@daily", ServiceName: other + "-node", ConfigNamespace: other, Template: testapi.TemplateSpec{Queue: "q2"}},
	}
	create(t, c, tg, false)
	create(t, c, t2, false)
	k1, k2 := client.ObjectKeyFromObject(tg), client.ObjectKeyFromObject(t2)
	want := placed{}
	p.wait(t, k1, want)
	p.wait(t, k2, placed{})

	// The settings, in the namespace the spec names, found through the
	// index on namespace and name.
	create(t, c, configMap(cfg, "t1-settings", nil), false)
	want.Settings = cfg + "/t1-settings"
	p.wait(t, k1, want)

	// The queues: in (q1, shared), notin (batch), owner exists, paused does
	// not. Each ConfigMap that misses one requirement is left out.
	for _, cm := range []*corev1.ConfigMap{
		configMap(cfg, "q-match", map[string]string{"queue": "q1", "owner": "a"}),
		configMap(cfg, "q-shared", map[string]string{"queue": "shared", "owner": "b", "tier": "web"}),
		configMap(cfg, "q-other-queue", map[string]string{"queue": "q2", "owner": "a"}),
		configMap(cfg, "q-batch", map[string]string{"queue": "q1", "owner": "a", "tier": "batch"}),
		configMap(cfg, "q-no-owner", map[string]string{"queue": "q1"}),
		configMap(cfg, "q-paused", map[string]string{"queue": "q1", "owner": "a", "paused": "yes"}),
		configMap(ns, "q-elsewhere", map[string]string{"queue": "q1", "owner": "a"}),
	} {
		create(t, c, cm, false)
	}
	want.Queues = []string{"q-match", "q-shared"}
	p.wait(t, k1, want)

	// The Node of the spec, by name, and the spare Nodes: labelled spare,
	// of a pool other than the spec's node, or of none.
	create(t, c, node(nodeName, map[string]string{"pool": nodeName}), true)
	create(t, c, node(cfg+"-spare", map[string]string{"spare": "", "pool": "other"}), true)
	create(t, c, node(cfg+"-spare-nopool", map[string]string{"spare": ""}), true)
	create(t, c, node(cfg+"-busy", map[string]string{"spare": "", "pool": nodeName}), true)
	create(t, c, node(cfg+"-plain", nil), true)
	want.Node = nodeName
	want.Spare = []string{cfg + "-spare", cfg + "-spare-nopool"}
	// t2 sees the spare Nodes too: its pool is another.
	p.wait(t, k1, want)

	// The shared defaults, in the fixed namespace, reach every Target.
	create(t, c, configMap("bosun-system", "schedule-defaults", nil), true)
	want.Defaults = "bosun-system/schedule-defaults"
	p.wait(t, k1, want)
	p.wait(t, k2, placed{Defaults: "bosun-system/schedule-defaults", Spare: []string{cfg + "-busy", cfg + "-spare", cfg + "-spare-nopool"}})

	// A ConfigMap no state of t1 selects does not reconcile it: a change to
	// q-batch leaves t1 alone, and the next selected change is the only one
	// that counts.
	before := p.count(k1)
	batch := configMap(cfg, "q-batch", nil)
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(batch), batch); err != nil {
		t.Fatal(err)
	}
	batch.Data = map[string]string{"x": "y"}
	if err := c.Update(t.Context(), batch); err != nil {
		t.Fatal(err)
	}
	create(t, c, configMap(cfg, "q-late", map[string]string{"queue": "shared", "owner": "c"}), false)
	want.Queues = []string{"q-late", "q-match", "q-shared"}
	p.wait(t, k1, want)
	if n := p.count(k1) - before; n != 1 {
		t.Errorf("Place ran %d times for t1 after one change to a ConfigMap it reads and one to a ConfigMap it does not, want 1", n)
	}
}
