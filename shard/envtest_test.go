package shard_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/shard"
)

var shared = bosuntest.Shared{Options: testapi.ControlPlaneOptions}

func TestMain(m *testing.M) { shared.Main(m) }

// pass is one reconcile of an object by a member.
type pass struct {
	member     string
	start, end time.Time
}

// journal records the passes of every object.
type journal struct {
	mu     sync.Mutex
	passes map[types.NamespacedName][]pass
}

func (j *journal) record(key types.NamespacedName, p pass) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.passes[key] = append(j.passes[key], p)
}

// reconciledBy reports whether member has reconciled key since since.
func (j *journal) reconciledBy(key types.NamespacedName, member string, since time.Time) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, p := range j.passes[key] {
		if p.member == member && !p.start.Before(since) {
			return true
		}
	}
	return false
}

// overlaps returns the objects whose passes by two members overlapped.
func (j *journal) overlaps() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []string
	for key, ps := range j.passes {
		for i := range ps {
			for k := i + 1; k < len(ps); k++ {
				a, b := ps[i], ps[k]
				if a.member != b.member && a.start.Before(b.end) && b.start.Before(a.end) {
					out = append(out, fmt.Sprintf("%s: %s and %s", key, a.member, b.member))
				}
			}
		}
	}
	return out
}

// replica is one running member.
type replica struct {
	name   string
	mgr    ctrl.Manager
	cancel context.CancelFunc
	done   chan struct{}
}

func (r *replica) stop() {
	r.cancel()
	<-r.done
}

// startReplica runs a manager for member name of ring, whose controller
// records its passes in j.
func startReplica(t *testing.T, cp *controlplane.ControlPlane, ns, ring, name string, j *journal) *replica {
	t.Helper()
	m, err := shard.New(shard.Options{
		Ring: ring, Identity: name, Namespace: ns, Object: &testapi.Widget{},
		LeaseDuration: 3 * time.Second, RenewPeriod: 500 * time.Millisecond, ObjectNamespaces: []string{ns},
	})
	if err != nil {
		t.Fatal(err)
	}
	logger, quiet := bosuntest.TestLogger(t)
	opts := ctrl.Options{
		Scheme:                        cp.Scheme,
		Logger:                        logger,
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		Controller:                    config.Controller{SkipNameValidation: ptr.To(true)},
		LeaderElection:                true,
		LeaderElectionID:              ring + "-sharder",
		LeaderElectionNamespace:       ns,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 ptr.To(2 * time.Second),
		RenewDeadline:                 ptr.To(1500 * time.Millisecond),
		RetryPeriod:                   ptr.To(300 * time.Millisecond),
		GracefulShutdownTimeout:       ptr.To(10 * time.Second),
	}
	opts.Cache.DefaultNamespaces = map[string]cache.Config{ns: {}}
	m.ConfigureCache(&opts.Cache)
	mgr, err := ctrl.NewManager(cp.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	c := mgr.GetClient()
	r := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		p := pass{member: name, start: time.Now()}
		defer func() { p.end = time.Now(); j.record(req.NamespacedName, p) }()
		var w testapi.Widget
		if err := c.Get(ctx, req.NamespacedName, &w); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		time.Sleep(2 * time.Millisecond) // some work
		return reconcile.Result{}, nil
	})
	if err := ctrl.NewControllerManagedBy(mgr).Named("widgets-"+name).
		For(&testapi.Widget{}, builder.WithPredicates(m.Predicate())).
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false), MaxConcurrentReconciles: 2}).
		Complete(m.Wrap(r)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(logr.NewContext(context.Background(), logger))
	rep := &replica{name: name, mgr: mgr, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(rep.done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("replica %s: %v", name, err)
		}
	}()
	t.Cleanup(func() {
		rep.stop()
		quiet()
	})
	return rep
}

// waitShared waits until every object of ns is labelled with one of
// members, none is draining, and each has been reconciled by its member
// since since; it returns how many objects each member holds.
func waitShared(t *testing.T, c client.Client, j *journal, ns, ring string, members []string, since time.Time) map[string]int {
	t.Helper()
	var shares map[string]int
	bosuntest.Eventually(t, func(ctx context.Context) error {
		var list testapi.WidgetList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		shares = map[string]int{}
		for _, w := range list.Items {
			member := w.Labels[shard.LabelPrefix+ring]
			switch {
			case !slices.Contains(members, member):
				return fmt.Errorf("%s is labelled %q, want one of %v", w.Name, member, members)
			case w.Labels[shard.DrainPrefix+ring] != "":
				return fmt.Errorf("%s is draining", w.Name)
			case !j.reconciledBy(client.ObjectKeyFromObject(&w), member, since):
				return fmt.Errorf("%s has had no pass by its member %s", w.Name, member)
			}
			shares[member]++
		}
		for _, m := range members {
			if shares[m] == 0 {
				return fmt.Errorf("member %s holds nothing: %v", m, shares)
			}
		}
		return nil
	}, bosuntest.Timeout(time.Minute))
	return shares
}

// checkMoved checks that each of moved, which changed members, has had a
// pass by its new member since since.
func checkMoved(t *testing.T, c client.Client, j *journal, ring string, moved []testapi.Widget, since time.Time) {
	t.Helper()
	if len(moved) == 0 {
		t.Error("no object moved")
	}
	for _, old := range moved {
		key := client.ObjectKeyFromObject(&old)
		bosuntest.Eventually(t, func(ctx context.Context) error {
			var w testapi.Widget
			if err := c.Get(ctx, key, &w); err != nil {
				return err
			}
			if member := w.Labels[shard.LabelPrefix+ring]; !j.reconciledBy(key, member, since) {
				return fmt.Errorf("%s, moved to %s, has had no pass by it", key, member)
			}
			return nil
		})
	}
}

// cached is how many Widgets the replica's cache holds, failing when one
// is not its own.
func cached(t *testing.T, r *replica, ring string) int {
	t.Helper()
	var list testapi.WidgetList
	if err := r.mgr.GetCache().List(t.Context(), &list); err != nil {
		t.Fatal(err)
	}
	for _, w := range list.Items {
		if got := w.Labels[shard.LabelPrefix+ring]; got != r.name {
			t.Errorf("replica %s caches %s, which is labelled %q", r.name, w.Name, got)
		}
	}
	return len(list.Items)
}

// TestReplicasShareTheObjects runs replicas of a controller on one control
// plane and checks that they split the objects and hand them over when a
// replica joins, leaves, or dies, with no object ever reconciled by two
// replicas at once.
func TestReplicasShareTheObjects(t *testing.T) {
	cp := shared.ControlPlane(t)
	c := cp.Client
	ns := bosuntest.Namespace(t, c)
	const ring, n = "widgets", 120
	for i := range n {
		w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("w%03d", i)}, Spec: testapi.WidgetSpec{Value: 1, Divisor: 1}}
		if err := c.Create(t.Context(), w); err != nil {
			t.Fatal(err)
		}
	}
	j := &journal{passes: map[types.NamespacedName][]pass{}}

	// One replica holds everything.
	start := time.Now()
	r0 := startReplica(t, cp, ns, ring, "r0", j)
	shares := waitShared(t, c, j, ns, ring, []string{"r0"}, start)
	t.Logf("1 replica: %v", shares)

	// Two more join: the objects are drained from r0 and split.
	joined := time.Now()
	r1 := startReplica(t, cp, ns, ring, "r1", j)
	r2 := startReplica(t, cp, ns, ring, "r2", j)
	shares = waitShared(t, c, j, ns, ring, []string{"r0", "r1", "r2"}, start)
	t.Logf("3 replicas, %s after the join: %v", time.Since(joined).Round(time.Millisecond), shares)
	total := 0
	for _, r := range []*replica{r0, r1, r2} {
		bosuntest.Eventually(t, func(context.Context) error {
			if got := cached(t, r, ring); got != shares[r.name] {
				return fmt.Errorf("replica %s caches %d Widgets, holds %d", r.name, got, shares[r.name])
			}
			return nil
		})
		total += shares[r.name]
	}
	if total != n {
		t.Errorf("the replicas hold %d objects, want %d", total, n)
	}

	// r1 stops cleanly: it releases its Lease and its objects move at once.
	var r1List testapi.WidgetList
	if err := c.List(t.Context(), &r1List, client.InNamespace(ns), client.MatchingLabels{shard.LabelPrefix + ring: "r1"}); err != nil {
		t.Fatal(err)
	}
	left := time.Now()
	r1.stop()
	shares = waitShared(t, c, j, ns, ring, []string{"r0", "r2"}, start)
	t.Logf("r1 left; its objects moved within %s: %v", time.Since(left).Round(time.Millisecond), shares)
	checkMoved(t, c, j, ring, r1List.Items, left)

	// A member dies: its Lease stops being renewed. ghost is such a
	// member, which takes objects and never reconciles nor lets go.
	ghost := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ring + "-ghost", Labels: map[string]string{shard.LabelRing: ring}},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("ghost"), LeaseDurationSeconds: ptr.To(int32(3)),
			RenewTime: &metav1.MicroTime{Time: time.Now()},
		},
	}
	if err := c.Create(t.Context(), ghost); err != nil {
		t.Fatal(err)
	}
	var taken []testapi.Widget
	bosuntest.Eventually(t, func(ctx context.Context) error {
		var list testapi.WidgetList
		if err := c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{shard.LabelPrefix + ring: "ghost"}); err != nil {
			return err
		}
		if len(list.Items) == 0 {
			return fmt.Errorf("no object moved to the ghost member")
		}
		taken = list.Items
		return nil
	})
	takenAt := time.Now()
	died := ghost.Spec.RenewTime.Add(3 * time.Second)
	shares = waitShared(t, c, j, ns, ring, []string{"r0", "r2"}, start)
	t.Logf("the ghost's lease expired; its objects were back %s later: %v", time.Since(died).Round(time.Millisecond), shares)
	// The objects the ghost held have had a pass by their new member.
	checkMoved(t, c, j, ring, taken, takenAt)

	if o := j.overlaps(); len(o) > 0 {
		t.Errorf("objects reconciled by two replicas at once: %v", o)
	}
}
