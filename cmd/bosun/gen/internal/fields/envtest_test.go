package fields_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/cmd/bosun/gen/internal/fields"
	"github.com/bosunkit/bosun/cmd/bosun/gen/internal/testapi"
	"github.com/bosunkit/bosun/conditions"
)

// drained is what one call of Drain got: the names of the Pods of each
// state, sorted, nil for none.
type drained struct {
	Pods   []string
	Queued []string
}

// drain is one call of Drain, for the Target key.
type drain struct {
	key client.ObjectKey
	got drained
}

// drains records the calls of Drain that the engine makes.
type drains struct {
	mu    sync.Mutex
	calls []drain
}

// setup registers with mgr a bosun engine controller for Targets whose one
// step is the generated step of the action Drain, with an Impl recording
// into d. The step sets up, by itself, the field indexes its states list by
// and the watches that reconcile a Target when a Pod comes into or leaves
// its selection: nothing here registers them. Updates of a Target that
// leave its generation alone (status writes, the engine's own among them)
// do not reconcile it, so that every reconcile after a Target's first comes
// from the Pod watch. One worker takes the requests in the order they were
// enqueued.
func (d *drains) setup(mgr ctrl.Manager) error {
	steps := fields.NewNodeManagerSteps(func(req *bosun.Pass[*testapi.Target], _ *fields.NodeManagerState) fields.NodeManagerImpl {
		return &recorder{d: d, key: client.ObjectKeyFromObject(req.Object)}
	})
	return bosun.ControllerManagedBy[*testapi.Target](mgr).
		For(nil, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Complete(&bosun.Reconciler[*testapi.Target]{
			Name:  "nodemanager",
			Steps: []bosun.Step[*testapi.Target]{steps.Drain()},
		})
}

// all returns the calls so far, in order.
func (d *drains) all() []drain {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]drain(nil), d.calls...)
}

// wait waits until the latest call of Drain for key got want, and returns
// its index in all().
func (d *drains) wait(t *testing.T, key client.ObjectKey, want drained) int {
	t.Helper()
	var at int
	bosuntest.Eventually(t, func(context.Context) error {
		all := d.all()
		for i := len(all) - 1; i >= 0; i-- {
			if all[i].key != key {
				continue
			}
			if diff := cmp.Diff(want, all[i].got); diff != "" {
				return fmt.Errorf("latest Drain of %s (-want +got):\n%s", key, diff)
			}
			at = i
			return nil
		}
		return fmt.Errorf("no Drain of %s yet", key)
	})
	return at
}

// count returns how many of calls are for key.
func count(calls []drain, key client.ObjectKey) int {
	n := 0
	for _, c := range calls {
		if c.key == key {
			n++
		}
	}
	return n
}

// recorder is the NodeManagerImpl of one reconcile.
type recorder struct {
	d   *drains
	key client.ObjectKey
}

func (r *recorder) Drain(_ context.Context, _ logr.Logger, pods, queued []corev1.Pod) (ctrl.Result, error) {
	r.d.mu.Lock()
	defer r.d.mu.Unlock()
	r.d.calls = append(r.d.calls, drain{key: r.key, got: drained{Pods: names(pods), Queued: names(queued)}})
	return ctrl.Result{}, nil
}

var _ fields.NodeManagerImpl = (*recorder)(nil)

// names returns the sorted names of pods, nil for none.
func names(pods []corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	slices.Sort(out)
	return out
}

// createTarget creates a Target whose pods state selects the Pods on node
// in the Target's phase, and whose queued state selects the Pods labelled
// queue=QUEUE on node-NAME.
func createTarget(t *testing.T, c client.Client, ns, name, node, queue string) *testapi.Target {
	t.Helper()
	tg := &testapi.Target{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       testapi.TargetSpec{Schedule: "@daily", ServiceName: node, Template: testapi.TemplateSpec{Queue: queue}},
	}
	if err := c.Create(t.Context(), tg); err != nil {
		t.Fatalf("create target %s: %v", name, err)
	}
	return tg
}

// createPod creates a Pod bound to node (set directly: envtest runs no
// scheduler), with labels, and sets its phase through the status
// subresource unless phase is empty (the API server starts Pods Pending).
func createPod(t *testing.T, c client.Client, ns, name, node string, labels map[string]string, phase corev1.PodPhase) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "work", Image: "example.invalid/work"}},
		},
	}
	if err := c.Create(t.Context(), p); err != nil {
		t.Fatalf("create pod %s: %v", name, err)
	}
	if phase != "" {
		setPhase(t, c, p, phase)
	}
	return p
}

// setPhase sets the phase of p through the status subresource.
func setPhase(t *testing.T, c client.Client, p *corev1.Pod, phase corev1.PodPhase) {
	t.Helper()
	base := p.DeepCopy()
	p.Status.Phase = phase
	if err := c.Status().Patch(t.Context(), p, client.MergeFrom(base)); err != nil {
		t.Fatalf("set phase of pod %s: %v", p.Name, err)
	}
}

// relabel sets the label queue of p.
func relabel(t *testing.T, c client.Client, p *corev1.Pod, queue string) {
	t.Helper()
	base := p.DeepCopy()
	p.Labels = map[string]string{"queue": queue}
	if err := c.Patch(t.Context(), p, client.MergeFrom(base)); err != nil {
		t.Fatalf("relabel pod %s: %v", p.Name, err)
	}
}

// waitSettled waits until cache holds the Target at key with a Ready
// condition, written by the engine, and the phase given: from then on the
// engine has nothing more to write to it.
func waitSettled(t *testing.T, cache client.Reader, key client.ObjectKey, phase testapi.Phase) *testapi.Target {
	t.Helper()
	tg := &testapi.Target{}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := cache.Get(ctx, key, tg); err != nil {
			return err
		}
		if conditions.Find(tg.Status.Conditions, conditions.TypeReady) == nil {
			return errors.New("no Ready condition yet")
		}
		if tg.Status.Phase != phase {
			return fmt.Errorf("phase %q, want %q", tg.Status.Phase, phase)
		}
		return nil
	})
	return tg
}

// TestFieldStates runs the generated step of NodeManager with the bosun
// engine on a real API server: the field indexes on .spec.nodeName and
// .status.phase, which the step registered with the manager's cache, make
// the states list exactly the selected Pods of the Target's namespace, and
// the Pod watch the step added reconciles a Target when a Pod comes into or
// leaves its selection, and no other Target.
func TestFieldStates(t *testing.T) {
	cp := shared.ControlPlane(t)
	ctx := t.Context()
	d := &drains{}
	mgr := bosuntest.RunManager(t, cp, d.setup)
	cache := mgr.GetCache()
	c := cp.Client
	ns := bosuntest.Namespace(t, c)
	nsOther := bosuntest.Namespace(t, c)

	// t1 selects the Running Pods on node-a, and the Pods labelled queue=q1
	// on node-t1. t2 is never Running: its pods state selects nothing, its
	// queued state the Pods labelled queue=q2 on node-t2. t3 is the barrier.
	t1 := createTarget(t, c, ns, "t1", "node-a", "q1")
	t2 := createTarget(t, c, ns, "t2", "node-b", "q2")
	t3 := createTarget(t, c, ns, "t3", "node-c", "bq")
	base := t1.DeepCopy()
	t1.Status.Phase = "Running"
	if err := c.Status().Patch(ctx, t1, client.MergeFrom(base)); err != nil {
		t.Fatalf("set phase of t1: %v", err)
	}
	k1, k2, k3 := client.ObjectKeyFromObject(t1), client.ObjectKeyFromObject(t2), client.ObjectKeyFromObject(t3)
	t1 = waitSettled(t, cache, k1, "Running")
	t2 = waitSettled(t, cache, k2, "")
	waitSettled(t, cache, k3, "")

	// barrier adds a Pod to t3's queued state and waits for Drain to get
	// it; it returns the index of that call. Pod events reach the watch in
	// the order the API server made them and the one worker takes requests
	// in the order they were enqueued, so a request that an earlier Pod
	// change enqueued has been reconciled by then, or is about to be if its
	// Target was being reconciled: two barriers in a row leave nothing
	// pending.
	var barrierPods []string
	barrier := func() int {
		t.Helper()
		name := "barrier-" + strconv.Itoa(len(barrierPods))
		createPod(t, c, ns, name, "node-t3", map[string]string{"queue": "bq"}, "")
		barrierPods = append(barrierPods, name)
		return d.wait(t, k3, drained{Queued: slices.Sorted(slices.Values(barrierPods))})
	}

	// Selected by t1: run-a (pods) and queued-1 (queued). The others differ
	// from a selection in one field, a label or the namespace.
	createPod(t, c, ns, "run-a", "node-a", nil, corev1.PodRunning)
	pendingA := createPod(t, c, ns, "pending-a", "node-a", nil, "")
	createPod(t, c, ns, "run-b", "node-b", nil, corev1.PodRunning)
	queued1 := createPod(t, c, ns, "queued-1", "node-t1", map[string]string{"queue": "q1"}, "")
	createPod(t, c, ns, "queued-1-elsewhere", "node-x", map[string]string{"queue": "q1"}, "")
	q2OnT1 := createPod(t, c, ns, "queued-2-on-t1", "node-t1", map[string]string{"queue": "q2"}, "")
	otherRunA := createPod(t, c, nsOther, "run-a", "node-a", nil, corev1.PodRunning)
	otherQ2 := createPod(t, c, nsOther, "queued-2", "node-t2", map[string]string{"queue": "q2"}, "")

	want1 := drained{Pods: []string{"run-a"}, Queued: []string{"queued-1"}}
	d.wait(t, k1, want1)

	// The getters read through the cache, which answers the field
	// selectors from the indexes.
	bosuntest.Eventually(t, func(ctx context.Context) error {
		var errs []error
		for _, tc := range []struct {
			target *testapi.Target
			want   drained
		}{{t1, want1}, {t2, drained{}}} {
			s := fields.NewNodeManagerState(cache, tc.target)
			pods, err := s.GetPods(ctx)
			if err != nil {
				return err
			}
			queued, err := s.GetQueued(ctx)
			if err != nil {
				return err
			}
			if diff := cmp.Diff(tc.want, drained{Pods: names(pods), Queued: names(queued)}); diff != "" {
				errs = append(errs, fmt.Errorf("states of %s (-want +got):\n%s", tc.target.Name, diff))
			}
		}
		return errors.Join(errs...)
	})

	barrier()
	start := barrier()
	// t2 selects none of the Pods above: the engine ran it once, when it
	// was created.
	if n := count(d.all()[:start], k2); n != 1 {
		t.Errorf("Drain ran %d times for t2, want once: a Pod it does not select enqueued it", n)
	}

	// A Pod that comes into t1's selection by its phase reconciles t1.
	setPhase(t, c, pendingA, corev1.PodRunning)
	want1.Pods = []string{"pending-a", "run-a"}
	d.wait(t, k1, want1)
	// A Pod that leaves t1's selection reconciles t1 too.
	relabel(t, c, queued1, "q9")
	want1.Queued = nil
	d.wait(t, k1, want1)
	barrier()
	start = barrier()

	// Changes to Pods no Target of their namespace selects, before and
	// after the change: one that matches t2's label but not its node, and
	// those of another namespace that the states of t1 and t2 would select
	// there.
	relabel(t, c, q2OnT1, "q3")
	relabel(t, c, otherRunA, "q1")
	relabel(t, c, otherQ2, "q2x")
	end := barrier()
	for _, call := range d.all()[start+1 : end] {
		if call.key != k3 {
			t.Errorf("Drain ran for %s after changes to Pods it does not select", call.key)
		}
	}

	// A Pod that comes into t2's selection reconciles t2.
	createPod(t, c, ns, "queued-2", "node-t2", map[string]string{"queue": "q2"}, "")
	d.wait(t, k2, drained{Queued: []string{"queued-2"}})
}
