package children

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// turnOf returns the turn a test names by one of: "ready" (up to date and
// ready), "down" (up to date, not ready), "stale" (the desired child
// changed; ready), "stale-down", "drift" (changed by hand; ready),
// "drift-down" and "missing".
func turnOf(t *testing.T, state string) turn {
	t.Helper()
	switch state {
	case "ready":
		return turn{ready: true}
	case "down":
		return turn{}
	case "stale":
		return turn{change: true, stale: true, ready: true}
	case "stale-down":
		return turn{change: true, stale: true}
	case "drift":
		return turn{change: true, ready: true}
	case "drift-down":
		return turn{change: true}
	case "missing":
		return turn{missing: true, change: true}
	}
	t.Fatalf("unknown state %q", state)
	return turn{}
}

// TestPace checks which children of a kind a pass holds back under
// MaxUnavailable. The children are named a, b, c... in the order desired.
func TestPace(t *testing.T) {
	tests := []struct {
		name   string
		states []string
		max    int
		held   []string
	}{
		{"no limit changes all at once", []string{"stale", "stale", "stale"}, 0, nil},
		{"one at a time, in order", []string{"stale", "stale", "stale", "stale"}, 1, []string{"b", "c", "d"}},
		{"two at a time", []string{"stale", "stale", "stale", "stale"}, 2, []string{"c", "d"}},
		{"the one in progress holds the rest", []string{"down", "stale", "stale"}, 1, []string{"b", "c"}},
		{"the next goes once the first is ready", []string{"ready", "stale", "stale"}, 1, []string{"c"}},
		{"a budget of two with one in progress", []string{"ready", "down", "stale", "stale"}, 2, []string{"d"}},
		{"a child that never gets ready holds the roll-out", []string{"down", "ready", "stale", "stale"}, 1, []string{"c", "d"}},
		{"any child down takes up the budget", []string{"stale", "stale", "down"}, 1, []string{"a", "b"}},
		{"a stale child that is down goes at once", []string{"stale-down", "stale", "stale"}, 1, []string{"b", "c"}},
		{"the fix reaches every broken child", []string{"stale-down", "stale-down", "stale"}, 1, []string{"c"}},
		{"creates go and take up the budget", []string{"missing", "missing", "stale"}, 1, []string{"c"}},
		{"drift goes and takes up the budget", []string{"drift", "stale", "stale"}, 1, []string{"b", "c"}},
		{"drift of a child that is down goes", []string{"drift-down", "stale"}, 1, []string{"b"}},
		{"drift beyond the budget goes all the same", []string{"drift", "drift", "stale"}, 1, []string{"c"}},
		{"a converged set holds nothing", []string{"ready", "ready", "ready"}, 1, nil},
		{"the budget covers the whole set", []string{"stale", "stale"}, 3, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turns := make([]turn, len(tt.states))
			for i, s := range tt.states {
				turns[i] = turnOf(t, s)
			}
			var held []string
			for i, h := range pace(turns, tt.max) {
				if h {
					held = append(held, string(rune('a'+i)))
				}
			}
			if diff := cmp.Diff(tt.held, held); diff != "" {
				t.Errorf("held (-want +got):\n%s", diff)
			}
		})
	}
}

// TestResolveRejectsNegativeMaxUnavailable checks that a negative
// MaxUnavailable fails at setup.
func TestResolveRejectsNegativeMaxUnavailable(t *testing.T) {
	_, err := resolve([]Kind{{Object: &appsv1.Deployment{}, MaxUnavailable: -1}}, testScheme(t))
	if err == nil || !strings.Contains(err.Error(), "MaxUnavailable") {
		t.Errorf("resolve error = %v, want one naming MaxUnavailable", err)
	}
}

// zoneDeployments returns the desired set of TestPlanHoldsBack and the
// envtest roll-out tests: one Deployment per zone of one replica, whose
// image is tagged with the Widget's spec.value.
func zoneDeployments(zones ...string) DesiredFunc[*testapi.Widget] {
	return func(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		var objs []client.Object
		for _, z := range zones {
			labels := map[string]string{"zone": z}
			objs = append(objs, &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: z},
				Spec: appsv1.DeploymentSpec{
					Replicas: ptr.To[int32](1),
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{
							Name: "web", Image: fmt.Sprintf("registry.example/web:%d", req.Object.Spec.Value),
						}}},
					},
				},
			})
		}
		return objs, nil
	}
}

// TestPlanHoldsBack plans a change of four Deployments, one of which is
// not ready, under MaxUnavailable 2, against a fake client: the broken one
// and one more are updated, the other two are held, and the condition
// tells the progress.
func TestPlanHoldsBack(t *testing.T) {
	scheme := testScheme(t)
	if err := testapi.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	desired := zoneDeployments("zone-a", "zone-b", "zone-c", "zone-d")
	step := NewStep("zones", desired, []Kind{{Object: &appsv1.Deployment{}, MaxUnavailable: 2}})
	ks, err := step.kinds(scheme)
	if err != nil {
		t.Fatal(err)
	}
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", UID: "1234", Generation: 2}, Spec: testapi.WidgetSpec{Value: 1}}
	// The live Deployments, as the step applied them for value 1, all
	// ready but zone-b.
	objs, err := desired(t.Context(), &bosun.Pass[*testapi.Widget]{Object: w})
	if err != nil {
		t.Fatal(err)
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(appsv1.SchemeGroupVersion.WithKind("Deployment"), meta.RESTScopeNamespace)
	mapper.Add(testapi.GroupVersion.WithKind("Widget"), meta.RESTScopeNamespace)
	newBuilder := func() *fake.ClientBuilder { return fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(mapper) }
	req := &bosun.Pass[*testapi.Widget]{Object: w, Client: newBuilder().Build()}
	var live []client.Object
	for i, obj := range objs {
		ch, err := stampChild(step, req, obj, i, ks, testapi.GroupVersion.WithKind("Widget"))
		if err != nil {
			t.Fatal(err)
		}
		d, err := typed(ch.applied, ch.kind)
		if err != nil {
			t.Fatal(err)
		}
		dep := d.(*appsv1.Deployment)
		dep.Generation = 1
		if dep.Name != "zone-b" {
			dep.Status = availableStatus(1, 1)
		}
		live = append(live, dep)
	}
	req.Client = newBuilder().WithObjects(live...).WithStatusSubresource(&appsv1.Deployment{}).Build()

	w.Spec.Value = 2
	plan, err := step.Plan(t.Context(), req)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	want := Plan{
		Update: []Ref{{"Deployment", "ns", "zone-a"}, {"Deployment", "ns", "zone-b"}},
		Held:   []Ref{{"Deployment", "ns", "zone-c"}, {"Deployment", "ns", "zone-d"}},
	}
	if diff := cmp.Diff(want, plan); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}

	// The condition of a pass that held them back, as reportKinds sets
	// it once zone-a and zone-b are applied (not ready: the deployment
	// controller has not seen them).
	p := &pass{}
	if err := preparePass(t.Context(), step, req, p); err != nil {
		t.Fatal(err)
	}
	for _, ch := range p.children {
		if ch.change {
			d := ch.live.DeepCopyObject().(*appsv1.Deployment)
			d.Generation++
			ch.live = d
		}
	}
	got := kindCondition(&ks[0], p.children)
	wantMsg := "0 of 4 Deployment updated, 2 waiting, 2 in progress: " +
		"zone-a: " + notSeen(2, 1) + "; zone-b: Replicas: 0/1"
	if got.Status != metav1.ConditionFalse || got.Reason != string(ReasonRollingUpdate) || got.Message != wantMsg {
		t.Errorf("condition %s/%s %q, want False/%s %q", got.Status, got.Reason, got.Message, ReasonRollingUpdate, wantMsg)
	}
}

// unready counts, after each apply of the controller while it is on, the
// Deployments of a namespace that are not ready as the API server has
// them, and keeps the largest count. In the tests that use it the
// Deployments' status is written by the test only, to mark them ready, so
// a Deployment becomes not ready only by an apply (which moves its
// generation past the status): the largest count after the applies is the
// largest at any moment.
type unready struct {
	c   client.Client
	ns  string
	on  atomic.Bool
	mu  sync.Mutex
	max int
	at  []string
}

// start counts from now on, reading through c in namespace ns.
func (u *unready) start(c client.Client, ns string) {
	u.c, u.ns = c, ns
	u.on.Store(true)
}

// most returns the largest count, and the Deployments that were not ready
// then.
func (u *unready) most() (int, []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.max, u.at
}

func (u *unready) wrap(c client.Client) client.Client {
	return interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
		Apply: func(ctx context.Context, cl client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			if err := cl.Apply(ctx, obj, opts...); err != nil {
				return err
			}
			if !u.on.Load() {
				return nil
			}
			var list appsv1.DeploymentList
			if err := u.c.List(ctx, &list, client.InNamespace(u.ns)); err != nil {
				return fmt.Errorf("test: listing deployments after an apply: %w", err)
			}
			var down []string
			for i := range list.Items {
				if ready, _ := DefaultReadiness(&list.Items[i]); !ready {
					down = append(down, list.Items[i].Name)
				}
			}
			u.mu.Lock()
			defer u.mu.Unlock()
			if len(down) > u.max {
				u.max, u.at = len(down), down
			}
			return nil
		},
	})
}

// images returns the image tag of each Deployment of the test's
// namespace, by name.
func (e *env) images() map[string]string {
	e.t.Helper()
	var list appsv1.DeploymentList
	if err := e.c.List(e.t.Context(), &list, client.InNamespace(e.ns)); err != nil {
		e.t.Fatalf("listing deployments: %v", err)
	}
	out := map[string]string{}
	for _, d := range list.Items {
		img := d.Spec.Template.Spec.Containers[0].Image
		out[d.Name] = img[strings.LastIndex(img, ":")+1:]
	}
	return out
}

// waitImages waits until images() is want.
func (e *env) waitImages(want map[string]string) {
	e.t.Helper()
	bosuntest.Eventually(e.t, func(context.Context) error {
		if diff := cmp.Diff(want, e.images()); diff != "" {
			return fmt.Errorf("deployment images (-want +got):\n%s", diff)
		}
		return nil
	}, bosuntest.Timeout(30*time.Second))
}

// tags returns the image tags of zones: the first n tagged now, the others
// before.
func tags(zones []string, n int, now, before string) map[string]string {
	out := map[string]string{}
	for i, z := range zones {
		out[z] = before
		if i < n {
			out[z] = now
		}
	}
	return out
}

// waitCondition waits until the condition typ of the Widget name is
// False with reason and message, for its current generation.
func (e *env) waitCondition(name, typ string, reason conditions.Reason, message string) {
	e.t.Helper()
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		w := &testapi.Widget{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: name}, w); err != nil {
			return err
		}
		c := conditions.Find(w.Status.Conditions, typ)
		switch {
		case c == nil:
			return errors.New("no " + typ + " condition")
		case c.ObservedGeneration != w.Generation:
			return fmt.Errorf("%s is for generation %d, want %d", typ, c.ObservedGeneration, w.Generation)
		case c.Status != metav1.ConditionFalse || c.Reason != string(reason) || c.Message != message:
			return fmt.Errorf("%s is %s/%s %q, want False/%s %q", typ, c.Status, c.Reason, c.Message, reason, message)
		}
		return nil
	}, bosuntest.Timeout(30*time.Second))
}

// notSeen is what the readiness of a Deployment of the given generation
// says until the deployment controller has seen its latest spec (which, on
// the package's control plane, the test does by hand): kstatus's message.
func notSeen(generation, observed int64) string {
	return fmt.Sprintf("Deployment generation is %d, but latest observed generation is %d", generation, observed)
}

// TestRollingUpdate changes the template of four Deployments under
// MaxUnavailable 1: they are updated one at a time, in order, each once
// the one before is ready; at no moment is more than one not ready; the
// condition shows the progress; Ready is True at the end, and the
// converged set costs no write.
func TestRollingUpdate(t *testing.T) {
	zones := []string{"zone-a", "zone-b", "zone-c", "zone-d"}
	step := NewStep("zones", zoneDeployments(zones...), []Kind{{Object: &appsv1.Deployment{}, MaxUnavailable: 1}})
	u := &unready{}
	e := start(t, reconciler(step), u.wrap)
	ready := map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}}

	// The first pass creates every zone at once.
	e.create("zones", 1, 0)
	e.waitImages(tags(zones, 0, "2", "1"))
	for _, z := range zones {
		e.markAvailable(z)
	}
	e.waitConditions("zones", ready)
	e.touch("zones", "created")
	e.writes.Reset()
	u.start(e.c, e.ns)

	e.setSpec("zones", 2, 0)
	for i, z := range zones {
		e.waitImages(tags(zones, i+1, "2", "1"))
		if i < len(zones)-1 {
			e.waitCondition("zones", "DeploymentReady", ReasonRollingUpdate,
				fmt.Sprintf("%d of 4 Deployment updated, %d waiting, 1 in progress: %s: %s", i, len(zones)-1-i, z, notSeen(2, 1)))
		} else {
			e.waitCondition("zones", "DeploymentReady", ReasonNotReady, "1 of 4 Deployment not ready: "+z+": "+notSeen(2, 1))
		}
		// Until z is ready, passes change no other zone.
		e.touch("zones", "held-"+z)
		if diff := cmp.Diff(tags(zones, i+1, "2", "1"), e.images()); diff != "" {
			t.Fatalf("deployment images while %s is not ready (-want +got):\n%s", z, diff)
		}
		e.markAvailable(z)
	}
	e.waitConditions("zones", ready)
	e.touch("zones", "rolled")
	if n, at := u.most(); n != 1 {
		t.Errorf("at most %d Deployments not ready at once (%v), want 1", n, at)
	}
	counts := e.writes.Counts()
	t.Logf("writes of the roll-out of 4 Deployments: %v", counts)
	if counts["apply Deployment"] != 4 || len(counts) != 2 {
		t.Errorf("writes of the roll-out %v, want 4 Deployment applies and status patches", counts)
	}

	// Converged: passes write nothing.
	e.writes.Reset()
	for i := range 3 {
		e.touch("zones", fmt.Sprint("settled-", i))
	}
	if n := e.writes.Total(); n != 0 {
		t.Errorf("%d writes by passes over a converged set, want 0: %v", n, e.writes.Writes())
	}
}

// startRolledOut runs a step with a Deployment per zone under
// MaxUnavailable 1, through the client wraps, makes the Widget "zones" of
// the Deployments' first image, marks them all available and waits for
// it to be Ready. It returns the test's env and the step.
func startRolledOut(t *testing.T, zones []string, wrap ...func(client.Client) client.Client) (*env, *Step[*testapi.Widget]) {
	t.Helper()
	step := NewStep("zones", zoneDeployments(zones...), []Kind{{Object: &appsv1.Deployment{}, MaxUnavailable: 1}})
	e := start(t, reconciler(step), wrap...)
	e.create("zones", 1, 0)
	e.waitImages(tags(zones, 0, "", "1"))
	for _, z := range zones {
		e.markAvailable(z)
	}
	e.waitConditions("zones", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
	return e, step
}

// TestRollingUpdateHeld changes three Deployments under MaxUnavailable 1
// and never makes the first one ready: the roll-out holds there, the
// condition names it and says it makes no progress, and Plan tells the
// others are held. A fix of the parent reaches the broken one at once and
// the roll-out goes on; a Deployment changed by hand during it is put
// back at once, although the budget is taken.
func TestRollingUpdateHeld(t *testing.T) {
	zones := []string{"zone-a", "zone-b", "zone-c"}
	e, step := startRolledOut(t, zones)
	ctx := t.Context()

	// A change whose pods never come: zone-a's roll-out passes its
	// deadline.
	e.setSpec("zones", 2, 0)
	e.waitImages(map[string]string{"zone-a": "2", "zone-b": "1", "zone-c": "1"})
	bosuntest.Eventually(t, func(ctx context.Context) error {
		d := &appsv1.Deployment{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "zone-a"}, d); err != nil {
			return err
		}
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, Conditions: []appsv1.DeploymentCondition{{
			Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded",
			Message: `ReplicaSet "zone-a-1" has timed out progressing.`,
		}}}
		return e.c.Status().Update(ctx, d)
	})
	stuck := `0 of 3 Deployment updated, 2 waiting, 1 in progress: zone-a: Progress deadline exceeded: ` +
		`ReplicaSet "zone-a-1" has timed out progressing.`
	e.waitCondition("zones", "DeploymentReady", ReasonRollingUpdate, stuck)
	e.waitCondition("zones", conditions.TypeReady, ReasonRollingUpdate, stuck)
	for i := range 3 {
		e.touch("zones", fmt.Sprint("stuck-", i))
	}
	if diff := cmp.Diff(map[string]string{"zone-a": "2", "zone-b": "1", "zone-c": "1"}, e.images()); diff != "" {
		t.Fatalf("deployment images while zone-a is stuck (-want +got):\n%s", diff)
	}
	w := &testapi.Widget{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "zones"}, w); err != nil {
		t.Fatal(err)
	}
	writes := &bosuntest.WriteCounter{}
	plan, err := step.Plan(ctx, &bosun.Pass[*testapi.Widget]{Controller: "widget-children", Object: w, Client: writes.Wrap(e.c)})
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	if diff := cmp.Diff(Plan{Held: []Ref{{"Deployment", e.ns, "zone-b"}, {"Deployment", e.ns, "zone-c"}}}, plan); diff != "" {
		t.Errorf("plan while zone-a is stuck (-want +got):\n%s", diff)
	}
	if n := writes.Total(); n != 0 {
		t.Errorf("Plan made %d writes, want none: %v", n, writes.Writes())
	}

	// The fix goes to the stuck zone-a at once, not to the others.
	e.setSpec("zones", 3, 0)
	e.waitImages(map[string]string{"zone-a": "3", "zone-b": "1", "zone-c": "1"})
	e.waitCondition("zones", "DeploymentReady", ReasonRollingUpdate, "0 of 3 Deployment updated, 2 waiting, 1 in progress: zone-a: "+notSeen(3, 2))
	e.markAvailable("zone-a")
	e.waitImages(map[string]string{"zone-a": "3", "zone-b": "3", "zone-c": "1"})
	e.markAvailable("zone-b")
	e.waitImages(map[string]string{"zone-a": "3", "zone-b": "3", "zone-c": "3"})

	// zone-c takes the budget; zone-a, changed by hand, is put back all
	// the same.
	d := &appsv1.Deployment{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "zone-a"}, d); err != nil {
		t.Fatal(err)
	}
	base := d.DeepCopy()
	d.Spec.Replicas = ptr.To[int32](3)
	if err := e.c.Patch(ctx, d, client.MergeFrom(base), client.FieldOwner("someone-else")); err != nil {
		t.Fatalf("scaling zone-a by hand: %v", err)
	}
	edited := d.Generation
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "zone-a"}, d); err != nil {
			return err
		}
		if d.Generation <= edited || *d.Spec.Replicas != 1 {
			return fmt.Errorf("zone-a has %d replicas at generation %d: not put back yet", *d.Spec.Replicas, d.Generation)
		}
		return nil
	}, bosuntest.Timeout(30*time.Second))
	e.markAvailable("zone-a")
	e.markAvailable("zone-c")
	e.waitConditions("zones", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
}

// lagging is a cache that lags behind the writes to some Deployments: a
// list of Deployments shows the versions it holds in place of the live
// ones, as an informer does that has not had the watch event of a
// Deployment's latest write yet.
type lagging struct {
	mu   sync.Mutex
	held map[string]*appsv1.Deployment
}

// hold makes lists show d as it is now, until release.
func (l *lagging) hold(d *appsv1.Deployment) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held == nil {
		l.held = map[string]*appsv1.Deployment{}
	}
	l.held[d.Name] = d.DeepCopy()
}

// release makes lists show every Deployment as it is.
func (l *lagging) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held = nil
}

func (l *lagging) wrap(c client.Client) client.Client {
	return interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
		List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := cl.List(ctx, list, opts...); err != nil {
				return err
			}
			deps, ok := list.(*appsv1.DeploymentList)
			if !ok {
				return nil
			}
			l.mu.Lock()
			defer l.mu.Unlock()
			for i := range deps.Items {
				if d := l.held[deps.Items[i].Name]; d != nil {
					deps.Items[i] = *d.DeepCopy()
				}
			}
			return nil
		},
	})
}

// TestRollingUpdateOverACacheBehindItsApply changes three Deployments
// under MaxUnavailable 1 twice in a row: the first change has reached
// zone-a (ready again) and zone-b (not ready yet) when the second one
// comes, and the cache has not shown zone-b's apply: it shows zone-b as
// it was before, ready. The pass of the second change must not take zone-a
// down while zone-b is: at no moment may two Deployments be not ready.
func TestRollingUpdateOverACacheBehindItsApply(t *testing.T) {
	zones := []string{"zone-a", "zone-b", "zone-c"}
	u := &unready{}
	lag := &lagging{}
	e, _ := startRolledOut(t, zones, u.wrap, lag.wrap)
	ctx := t.Context()
	e.touch("zones", "created")
	before := &appsv1.Deployment{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "zone-b"}, before); err != nil {
		t.Fatal(err)
	}
	u.start(e.c, e.ns)

	// The first change: zone-a goes and gets ready, then zone-b goes;
	// the cache misses zone-b's apply (its watch event is late, or
	// dropped until the next relist) and shows it as before, ready.
	e.setSpec("zones", 2, 0)
	e.waitImages(tags(zones, 1, "2", "1"))
	lag.hold(before)
	e.markAvailable("zone-a")
	e.waitImages(tags(zones, 2, "2", "1"))
	e.touch("zones", "zone-b-applied")

	// The second change comes while the cache is still behind.
	e.setSpec("zones", 3, 0)
	bosuntest.Eventually(t, func(context.Context) error {
		for _, tag := range e.images() {
			if tag == "3" {
				return nil
			}
		}
		return errors.New("no Deployment has the second change yet")
	}, bosuntest.Timeout(30*time.Second))
	e.touch("zones", "second-change")
	if n, at := u.most(); n > 1 {
		t.Errorf("%d Deployments not ready at once (%v) after the second change, want at most 1: the pass took the cache's old, ready zone-b for the live one", n, at)
	}

	// Once the cache catches up, the roll-out of the second change ends.
	lag.release()
	bosuntest.Eventually(t, func(ctx context.Context) error {
		var list appsv1.DeploymentList
		if err := e.c.List(ctx, &list, client.InNamespace(e.ns)); err != nil {
			return err
		}
		for i := range list.Items {
			if ready, _ := DefaultReadiness(&list.Items[i]); !ready {
				e.markAvailable(list.Items[i].Name)
			}
		}
		if diff := cmp.Diff(tags(zones, 3, "3", ""), e.images()); diff != "" {
			return fmt.Errorf("deployment images (-want +got):\n%s", diff)
		}
		return nil
	}, bosuntest.Timeout(60*time.Second))
	for _, z := range zones {
		e.markAvailable(z)
	}
	e.waitConditions("zones", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
	if n, at := u.most(); n > 1 {
		t.Errorf("%d Deployments not ready at once (%v) during the roll-out, want at most 1", n, at)
	}
}
