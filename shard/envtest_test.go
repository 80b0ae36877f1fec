package shard_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/internal/rollout"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/shard"
)

var shared = bosuntest.Shared{Options: testapi.ControlPlaneOptions}

func TestMain(m *testing.M) {
	if os.Getenv(envReplica) != "" {
		os.Exit(runReplicaProcess())
	}
	shared.Main(m)
}

// The timings of the tests' rings and managers: short, so that a crashed
// replica's share moves within seconds.
const (
	leaseDuration = 4 * time.Second
	renewDeadline = 3 * time.Second
	renewPeriod   = 500 * time.Millisecond
	// requeue is how often a replica reconciles each of its objects again,
	// so that passes run while objects move.
	requeue = time.Second
	// objects is how many Widgets the tests share out.
	objects = 200
	// workers is how many passes a replica's controller runs at once.
	workers = 8
)

// work is a pass's work on key: 200ms for every fourth Widget, so that
// many passes are running when objects move, and 10ms for the others.
func work(key types.NamespacedName) {
	d := 10 * time.Millisecond
	if strings.HasSuffix(key.Name, "0") || strings.HasSuffix(key.Name, "4") || strings.HasSuffix(key.Name, "8") {
		d = 200 * time.Millisecond
	}
	time.Sleep(d)
}

// The environment of a replica run as a process of its own (see
// TestReplicaProcesses): its identity, kubeconfig, namespace and ring.
const (
	envReplica    = "SHARD_TEST_REPLICA"
	envKubeconfig = "SHARD_TEST_KUBECONFIG"
	envNamespace  = "SHARD_TEST_NAMESPACE"
	envRing       = "SHARD_TEST_RING"
)

// runReplicaProcess runs a replica in this process, as TestMain does when
// the environment names one: it prints each pass, "pass <name> <start>
// <end>" in Unix nanoseconds, on stdout, until it is killed.
func runReplicaProcess() int {
	name, ns, ringName := os.Getenv(envReplica), os.Getenv(envNamespace), os.Getenv(envRing)
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "replica:", err)
		return 1
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv(envKubeconfig))
	if err != nil {
		return fail(err)
	}
	// As the in-process replicas' config: no client-side throttling.
	cfg.QPS, cfg.Burst = -1, 0
	cpOpts, err := testapi.ControlPlaneOptions()
	if err != nil {
		return fail(err)
	}
	m, err := shard.New(shard.Options{
		Ring: ringName, Identity: name, Namespace: ns, Object: &testapi.Widget{},
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RenewPeriod: renewPeriod,
		ObjectNamespaces: []string{ns},
	})
	if err != nil {
		return fail(err)
	}
	opts := managerOptions(cpOpts.Scheme, logr.Discard(), ringName, ns)
	m.ConfigureCache(&opts.Cache)
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return fail(err)
	}
	if err := m.SetupWithManager(mgr); err != nil {
		return fail(err)
	}
	var mu sync.Mutex
	rec := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		start := time.Now()
		work(req.NamespacedName)
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf("pass %s %d %d\n", req.Name, start.UnixNano(), time.Now().UnixNano())
		return reconcile.Result{RequeueAfter: requeue}, nil
	})
	if err := ctrl.NewControllerManagedBy(mgr).Named("widgets").
		For(&testapi.Widget{}, builder.WithPredicates(m.Predicate())).
		WithOptions(m.ControllerOptions(controller.Options{MaxConcurrentReconciles: workers})).
		Complete(rec); err != nil {
		return fail(err)
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		return fail(err)
	}
	return 0
}

// managerOptions are the options of a replica's manager in ring, with
// its Leases in ns: leader election with short timings.
func managerOptions(scheme *runtime.Scheme, logger logr.Logger, ringName, ns string) ctrl.Options {
	opts := ctrl.Options{
		Scheme:                        scheme,
		Logger:                        logger,
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		Controller:                    config.Controller{SkipNameValidation: ptr.To(true)},
		LeaderElection:                true,
		LeaderElectionID:              ringName + "-sharder",
		LeaderElectionNamespace:       ns,
		LeaderElectionReleaseOnCancel: true,
		// Short, but long enough that a manager on a busy machine (-race,
		// other tests) does not lose the election and stop.
		LeaseDuration:           ptr.To(6 * time.Second),
		RenewDeadline:           ptr.To(5 * time.Second),
		RetryPeriod:             ptr.To(time.Second),
		GracefulShutdownTimeout: ptr.To(10 * time.Second),
	}
	opts.Cache.DefaultNamespaces = map[string]cache.Config{ns: {}}
	return opts
}

// pass is one reconcile of an object by a member.
type pass struct {
	member     string
	start, end time.Time
}

// journal records the passes of every object by every replica.
type journal struct {
	mu     sync.Mutex
	passes map[types.NamespacedName][]pass
}

func newJournal() *journal { return &journal{passes: map[types.NamespacedName][]pass{}} }

func (j *journal) record(key types.NamespacedName, p pass) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.passes[key] = append(j.passes[key], p)
}

// reconciledBy reports whether member has started a pass of key since
// since.
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

// count returns how many passes of key member has started since since.
func (j *journal) count(key types.NamespacedName, member string, since time.Time) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := 0
	for _, p := range j.passes[key] {
		if p.member == member && !p.start.Before(since) {
			n++
		}
	}
	return n
}

// overlaps returns the objects whose passes by two members overlapped,
// and how many passes there were in all.
func (j *journal) overlaps() ([]string, int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []string
	total := 0
	for key, ps := range j.passes {
		total += len(ps)
		sorted := slices.Clone(ps)
		sort.Slice(sorted, func(a, b int) bool { return sorted[a].start.Before(sorted[b].start) })
		// A pass overlaps an earlier one of another member when it starts
		// before the latest end so far.
		var last pass
		for i, p := range sorted {
			if i > 0 && p.member != last.member && p.start.Before(last.end) {
				out = append(out, fmt.Sprintf("%s: %s [%s, %s] and %s [%s, %s]", key,
					last.member, last.start.Format(time.StampMicro), last.end.Format(time.StampMicro),
					p.member, p.start.Format(time.StampMicro), p.end.Format(time.StampMicro)))
			}
			if i == 0 || p.end.After(last.end) {
				last = p
			}
		}
	}
	return out, total
}

// checkNoOverlap fails the test when two replicas reconciled an object at
// once.
func checkNoOverlap(t *testing.T, j *journal) {
	t.Helper()
	o, total := j.overlaps()
	if len(o) > 0 {
		t.Errorf("objects reconciled by two replicas at once (%d of %d passes):\n%s", len(o), total, strings.Join(o, "\n"))
		return
	}
	t.Logf("%d passes in all, none overlapping between replicas", total)
}

// replica is one running member, with a manager of its own.
type replica struct {
	name   string
	mgr    ctrl.Manager
	member *shard.Member
	cancel context.CancelFunc
	done   chan struct{}
	// crashed makes the manager's client fail to delete or update Leases,
	// as a process that dies cannot release its Lease.
	crashed *atomic.Bool
}

// stop stops the replica cleanly: it releases its Lease.
func (r *replica) stop() {
	r.cancel()
	<-r.done
}

// kill stops the replica as a crash would: its Lease stays, to expire.
func (r *replica) kill() {
	r.crashed.Store(true)
	r.stop()
}

// ring is a set of replicas of one test, in a namespace of its own.
type ring struct {
	t    *testing.T
	cp   *controlplane.ControlPlane
	ns   string
	name string
	j    *journal
}

func newRing(t *testing.T) *ring {
	cp := shared.ControlPlane(t)
	return &ring{t: t, cp: cp, ns: bosuntest.Namespace(t, cp.Client), name: "widgets", j: newJournal()}
}

// createWidgets creates n Widgets w000, w001, ...
func (r *ring) createWidgets(n int) {
	r.t.Helper()
	for i := range n {
		w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: fmt.Sprintf("w%03d", i)}, Spec: testapi.WidgetSpec{Value: 1, Divisor: 1}}
		if err := r.cp.Client.Create(r.t.Context(), w); err != nil {
			r.t.Fatal(err)
		}
	}
}

// start runs a replica, the member name of the ring, whose controller
// records its passes in the ring's journal. engine chooses bosun's
// engine, set up with bosun's builder and the member's ControllerOptions;
// otherwise a plain reconciler behind the member's Wrap.
func (r *ring) start(name string, engine bool) *replica {
	r.t.Helper()
	setup := r.setupPlain
	if engine {
		setup = r.setupEngine
	}
	return r.startWith(name, replicaOptions{setup: setup})
}

// replicaOptions change a replica that startWith runs.
type replicaOptions struct {
	// config reaches the API server; nil means the control plane's.
	config *rest.Config
	// shard changes the member's options.
	shard func(*shard.Options)
	// patch, when set, is called before each patch of the manager's
	// client; an error fails the patch.
	patch func(obj client.Object, patch client.Patch) error
	// setup registers the replica's controllers; nil means setupPlain.
	setup func(mgr ctrl.Manager, m *shard.Member, name string) error
	// manager, when set, changes the manager's options last.
	manager func(*ctrl.Options)
}

// startWith runs a replica, the member name of the ring, as opts say.
func (r *ring) startWith(name string, ro replicaOptions) *replica {
	t := r.t
	t.Helper()
	so := shard.Options{
		Ring: r.name, Identity: name, Namespace: r.ns, Object: &testapi.Widget{},
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RenewPeriod: renewPeriod,
		ObjectNamespaces: []string{r.ns},
	}
	if ro.shard != nil {
		ro.shard(&so)
	}
	m, err := shard.New(so)
	if err != nil {
		t.Fatal(err)
	}
	logger, quiet := bosuntest.TestLogger(t)
	crashed := &atomic.Bool{}
	opts := managerOptions(r.cp.Scheme, logger, r.name, r.ns)
	opts.NewClient = func(cfg *rest.Config, o client.Options) (client.Client, error) {
		c, err := client.NewWithWatch(cfg, o)
		if err != nil {
			return nil, err
		}
		return interceptor.NewClient(c, interceptor.Funcs{
			Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
				if _, ok := obj.(*coordinationv1.Lease); ok && crashed.Load() {
					return errors.New("crashed")
				}
				return c.Delete(ctx, obj, opts...)
			},
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				// With Options.Standby a member closes its Lease rather
				// than deleting it.
				if _, ok := obj.(*coordinationv1.Lease); ok && crashed.Load() {
					return errors.New("crashed")
				}
				return c.Update(ctx, obj, opts...)
			},
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				if ro.patch != nil {
					if err := ro.patch(obj, patch); err != nil {
						return err
					}
				}
				return c.Patch(ctx, obj, patch, opts...)
			},
		}), nil
	}
	m.ConfigureCache(&opts.Cache)
	if ro.manager != nil {
		ro.manager(&opts)
	}
	cfg := ro.config
	if cfg == nil {
		cfg = r.cp.Config
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	setup := ro.setup
	if setup == nil {
		setup = r.setupPlain
	}
	if err := setup(mgr, m, name); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(logr.NewContext(context.Background(), logger))
	rep := &replica{name: name, mgr: mgr, member: m, cancel: cancel, done: make(chan struct{}), crashed: crashed}
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

// setupPlain registers a controller-runtime controller whose reconciler,
// behind the member's Wrap, reads the Widget and records its pass; a
// request of a Widget not in the cache is no pass of it.
func (r *ring) setupPlain(mgr ctrl.Manager, m *shard.Member, name string) error {
	return ctrl.NewControllerManagedBy(mgr).Named("widgets-"+name).
		For(&testapi.Widget{}, builder.WithPredicates(m.Predicate())).
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false), MaxConcurrentReconciles: workers}).
		Complete(m.Wrap(r.plain(mgr, name, nil)))
}

// plain is setupPlain's reconciler; seen, when set, is told of the Widget
// each pass found.
func (r *ring) plain(mgr ctrl.Manager, name string, seen func(*testapi.Widget, time.Time)) reconcile.Reconciler {
	c := mgr.GetClient()
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		p := pass{member: name, start: time.Now()}
		var w testapi.Widget
		if err := c.Get(ctx, req.NamespacedName, &w); err != nil {
			// Not in the cache: nothing to work on, no pass of the object.
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		if seen != nil {
			seen(&w, p.start)
		}
		defer func() { p.end = time.Now(); r.j.record(req.NamespacedName, p) }()
		work(req.NamespacedName)
		return reconcile.Result{RequeueAfter: requeue}, nil
	})
}

// setupEngine registers a bosun controller, with the member's
// ControllerOptions, whose one step writes the Widget's result; an
// observer records each whole pass that ran the step, the engine's writes
// included.
func (r *ring) setupEngine(mgr ctrl.Manager, m *shard.Member, name string) error {
	return bosun.ControllerManagedBy[*testapi.Widget](mgr).
		For(nil, builder.WithPredicates(m.Predicate())).
		WithOptions(m.ControllerOptions(controller.Options{MaxConcurrentReconciles: workers})).
		Complete(r.engine(name, nil))
}

// engine is setupEngine's reconciler; seen, when set, is told of the
// Widget each pass's step found.
func (r *ring) engine(name string, seen func(*testapi.Widget, time.Time)) *bosun.Reconciler[*testapi.Widget] {
	work := bosun.NewStep("work", func(_ context.Context, p *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
		if seen != nil {
			seen(p.Object, time.Now())
		}
		work(client.ObjectKeyFromObject(p.Object))
		p.Object.Status.Result = p.Object.Spec.Value / max(p.Object.Spec.Divisor, 1)
		return ctrl.Result{RequeueAfter: requeue}, nil
	})
	return &bosun.Reconciler[*testapi.Widget]{
		Name:  "widgets-" + name,
		Steps: []bosun.Step[*testapi.Widget]{work},
		Options: bosun.Options{IgnoreNamespacePolicy: true, Observers: []bosun.PassObserver{bosun.PassObserverFunc(func(_ context.Context, rep bosun.PassReport) {
			// A pass that ran no step found nothing to work on: the object
			// is not in the cache.
			if len(rep.Steps) > 0 {
				r.j.record(rep.Object, pass{member: name, start: rep.Start, end: rep.Start.Add(rep.Duration)})
			}
		})}},
	}
}

// labelled returns the Widgets of the ring's namespace by the member
// their label names ("" for none), and how many are draining.
func (r *ring) labelled(ctx context.Context) (map[string][]testapi.Widget, int, error) {
	var list testapi.WidgetList
	if err := r.cp.Client.List(ctx, &list, client.InNamespace(r.ns)); err != nil {
		return nil, 0, err
	}
	out := map[string][]testapi.Widget{}
	draining := 0
	for _, w := range list.Items {
		out[w.Labels[shard.LabelPrefix+r.name]] = append(out[w.Labels[shard.LabelPrefix+r.name]], w)
		if w.Labels[shard.DrainPrefix+r.name] != "" {
			draining++
		}
	}
	return out, draining, nil
}

// converge waits until every Widget is labelled with one of members, none
// is draining, each member holds some, and each Widget has had a pass by
// its member since since; it returns how many each member holds.
func (r *ring) converge(members []string, since time.Time, opts ...bosuntest.EventuallyOption) map[string]int {
	r.t.Helper()
	shares := map[string]int{}
	bosuntest.Eventually(r.t, func(ctx context.Context) error {
		byMember, draining, err := r.labelled(ctx)
		if err != nil {
			return err
		}
		clear(shares)
		for member, ws := range byMember {
			if !slices.Contains(members, member) {
				return fmt.Errorf("%d Widgets labelled %q, want one of %v", len(ws), member, members)
			}
			shares[member] = len(ws)
			for _, w := range ws {
				if !r.j.reconciledBy(client.ObjectKeyFromObject(&w), member, since) {
					return fmt.Errorf("%s has had no pass by its member %s", w.Name, member)
				}
			}
		}
		if draining > 0 {
			return fmt.Errorf("%d Widgets draining", draining)
		}
		for _, m := range members {
			if shares[m] == 0 {
				return fmt.Errorf("member %s holds nothing: %v", m, shares)
			}
		}
		return nil
	}, append([]bosuntest.EventuallyOption{bosuntest.Timeout(time.Minute)}, opts...)...)
	return shares
}

// checkCaches checks that the cache of each replica holds exactly its
// share: the Widgets labelled for it.
func (r *ring) checkCaches(shares map[string]int, reps ...*replica) {
	r.t.Helper()
	for _, rep := range reps {
		bosuntest.Eventually(r.t, func(ctx context.Context) error {
			var list testapi.WidgetList
			if err := rep.mgr.GetCache().List(ctx, &list); err != nil {
				return err
			}
			for _, w := range list.Items {
				if got := w.Labels[shard.LabelPrefix+r.name]; got != rep.name {
					return fmt.Errorf("replica %s caches %s, which is labelled %q", rep.name, w.Name, got)
				}
			}
			if len(list.Items) != shares[rep.name] {
				return fmt.Errorf("replica %s caches %d Widgets, holds %d", rep.name, len(list.Items), shares[rep.name])
			}
			return nil
		})
	}
}

// TestReplicasShareTheObjects runs 1, 2 and 4 replicas of a controller on
// one control plane, started together, and checks that every object is
// reconciled by its replica, that each replica caches only its share, and
// that no object is ever reconciled by two replicas at once.
func TestReplicasShareTheObjects(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("%d replicas", n), func(t *testing.T) {
			r := newRing(t)
			r.createWidgets(objects)
			start := time.Now()
			var reps []*replica
			var names []string
			for i := range n {
				name := fmt.Sprintf("r%d", i)
				reps = append(reps, r.start(name, i%2 == 1))
				names = append(names, name)
			}
			shares := r.converge(names, start)
			t.Logf("%d replicas converged in %s: %v", n, time.Since(start).Round(time.Millisecond), shares)
			total := 0
			for _, s := range shares {
				total += s
			}
			if total != objects {
				t.Errorf("the replicas hold %d objects, want %d", total, objects)
			}
			r.checkCaches(shares, reps...)
			if got := gauge(t, "bosun_shard_members", map[string]string{"ring": r.name}); got != float64(n) {
				t.Errorf("%s = %v, want %d", "bosun_shard_members", got, n)
			}
			checkNoOverlap(t, r.j)
		})
	}
}

// TestHandover moves objects between replicas: one joins (its share is
// drained from the others and acknowledged), one stops cleanly (its share
// moves at once), one crashes (its share moves once its Lease expires).
// No object is ever reconciled by two replicas at once.
func TestHandover(t *testing.T) {
	r := newRing(t)
	r.createWidgets(objects)
	start := time.Now()
	r0, r1, r2 := r.start("r0", false), r.start("r1", true), r.start("r2", false)
	shares := r.converge([]string{"r0", "r1", "r2"}, start)
	t.Logf("3 replicas: %v", shares)

	// r3 joins: the others let its share go through a drain.
	drainsBefore := counter(t, "bosun_shard_moves_total", map[string]string{"ring": r.name, "kind": "drain"})
	joined := time.Now()
	r3 := r.start("r3", true)
	shares = r.converge([]string{"r0", "r1", "r2", "r3"}, start)
	t.Logf("r3 joined; converged in %s: %v", time.Since(joined).Round(time.Millisecond), shares)
	drains := counter(t, "bosun_shard_moves_total", map[string]string{"ring": r.name, "kind": "drain"}) - drainsBefore
	if drains < float64(shares["r3"]) {
		t.Errorf("%v drains for the %d objects r3 took, want one each", drains, shares["r3"])
	}
	r.checkCaches(shares, r0, r1, r2, r3)

	// r1 stops cleanly: it releases its Lease and its objects move at
	// once, well within the Lease's duration.
	held, _, err := r.labelled(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	left := time.Now()
	r1.stop()
	shares = r.converge([]string{"r0", "r2", "r3"}, left, bosuntest.Interval(20*time.Millisecond))
	took := time.Since(left)
	t.Logf("r1 stopped; its %d objects moved in %s: %v", len(held["r1"]), took.Round(time.Millisecond), shares)
	r.checkMoved(held["r1"], left)
	if took >= leaseDuration {
		t.Errorf("a clean stop's objects moved in %s, not before the Lease would have expired (%s)", took, leaseDuration)
	}

	// r2 crashes: its Lease stays until it expires; then its objects move.
	held, _, err = r.labelled(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	crashed := time.Now()
	r2.kill()
	var lease coordinationv1.Lease
	if err := r.cp.Client.Get(t.Context(), client.ObjectKey{Namespace: r.ns, Name: shard.LeaseName(r.name, "r2")}, &lease); err != nil {
		t.Fatalf("the Lease of the crashed replica: %v", err)
	}
	shares = r.converge([]string{"r0", "r3"}, crashed, bosuntest.Interval(20*time.Millisecond))
	took = time.Since(crashed)
	t.Logf("r2 crashed; its %d objects moved in %s (Lease duration %s): %v", len(held["r2"]), took.Round(time.Millisecond), leaseDuration, shares)
	r.checkMoved(held["r2"], crashed)
	if took > leaseDuration+5*time.Second {
		t.Errorf("a crashed replica's objects moved in %s, want about the Lease duration %s", took, leaseDuration)
	}
	r.checkCaches(shares, r0, r3)
	checkNoOverlap(t, r.j)
}

// checkMoved checks that each of moved has had a pass by its new member
// since since.
func (r *ring) checkMoved(moved []testapi.Widget, since time.Time) {
	r.t.Helper()
	if len(moved) == 0 {
		r.t.Error("no object moved")
	}
	for _, old := range moved {
		var w testapi.Widget
		if err := r.cp.Client.Get(r.t.Context(), client.ObjectKeyFromObject(&old), &w); err != nil {
			r.t.Fatal(err)
		}
		if member := w.Labels[shard.LabelPrefix+r.name]; !r.j.reconciledBy(client.ObjectKeyFromObject(&w), member, since) {
			r.t.Errorf("%s, moved to %s, has had no pass by it", w.Name, member)
		}
	}
}

// TestMembership checks the members' Leases: one per replica, labelled
// with the ring; gone when a replica stops cleanly; left to expire when
// it crashes, after which the sharder drops the member.
func TestMembership(t *testing.T) {
	r := newRing(t)
	r.start("r0", false)
	r1, r2 := r.start("r1", false), r.start("r2", false)
	leases := func(ctx context.Context) (map[string]bool, error) {
		var list coordinationv1.LeaseList
		if err := r.cp.Client.List(ctx, &list, client.InNamespace(r.ns), client.MatchingLabels{"shard.bosun.dev/ring": r.name}); err != nil {
			return nil, err
		}
		out := map[string]bool{}
		for i := range list.Items {
			l := &list.Items[i]
			if l.Name != shard.LeaseName(r.name, ptr.Deref(l.Spec.HolderIdentity, "")) {
				return nil, fmt.Errorf("lease %s is held by %q", l.Name, ptr.Deref(l.Spec.HolderIdentity, ""))
			}
			out[*l.Spec.HolderIdentity] = rollout.Alive(l, time.Now())
		}
		return out, nil
	}
	expect := func(step string, want map[string]bool, members float64) {
		t.Helper()
		bosuntest.Eventually(t, func(ctx context.Context) error {
			got, err := leases(ctx)
			if err != nil {
				return err
			}
			if !maps(got, want) {
				return fmt.Errorf("%s: leases (holder: alive) %v, want %v", step, got, want)
			}
			if n := gauge(t, "bosun_shard_members", map[string]string{"ring": r.name}); n != members {
				return fmt.Errorf("%s: the sharder sees %v members, want %v", step, n, members)
			}
			return nil
		})
	}
	expect("three replicas", map[string]bool{"r0": true, "r1": true, "r2": true}, 3)

	r1.stop()
	expect("r1 stopped", map[string]bool{"r0": true, "r2": true}, 2)

	// A crash leaves the Lease, alive at first; it expires after its
	// duration and the sharder drops the member, though the Lease stays.
	r2.kill()
	killed := time.Now()
	got, err := leases(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["r2"]; !ok {
		t.Fatalf("the crashed replica's Lease is gone: %v", got)
	}
	expect("r2 crashed", map[string]bool{"r0": true, "r2": false}, 1)
	t.Logf("the crashed replica was dropped %s after it stopped", time.Since(killed).Round(time.Millisecond))

	// It comes back: the same identity renews the same Lease.
	r.start("r2", false)
	expect("r2 back", map[string]bool{"r0": true, "r2": true}, 2)
}

func maps(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// gauge returns the value of the metric name with labels in
// controller-runtime's registry; -1 when there is none.
func gauge(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue next
				}
			}
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	return -1
}

// counter is gauge for a counter: 0 when there is none yet.
func counter(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	return max(gauge(t, name, labels), 0)
}

// TestReplicaProcesses runs three replicas as processes of their own (this
// test binary, run again), kills one with SIGKILL, and checks that its
// share moves to the others within about the Lease duration, with no
// object reconciled by two replicas at once.
func TestReplicaProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	r := newRing(t)
	r.createWidgets(objects)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := r.cp.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	procs := map[string]*exec.Cmd{}
	var wg sync.WaitGroup
	// Last: the processes are stopped first, which closes their stdout.
	t.Cleanup(wg.Wait)
	start := time.Now()
	for _, name := range []string{"p0", "p1", "p2"} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envReplica+"="+name, envKubeconfig+"="+kubeconfig, envNamespace+"="+r.ns, envRing+"="+r.name)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[name] = cmd
		wg.Go(func() { r.readPasses(name, out) })
		t.Cleanup(func() {
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
		})
	}
	shares := r.converge([]string{"p0", "p1", "p2"}, start)
	t.Logf("3 processes converged in %s: %v", time.Since(start).Round(time.Millisecond), shares)

	held, _, err := r.labelled(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if err := procs["p1"].Process.Kill(); err != nil {
		t.Fatal(err)
	}
	shares = r.converge([]string{"p0", "p2"}, killed, bosuntest.Interval(20*time.Millisecond))
	took := time.Since(killed)
	t.Logf("p1 killed; its %d objects moved in %s (Lease duration %s): %v", len(held["p1"]), took.Round(time.Millisecond), leaseDuration, shares)
	r.checkMoved(held["p1"], killed)
	if took > leaseDuration+5*time.Second {
		t.Errorf("a killed replica's objects moved in %s, want about the Lease duration %s", took, leaseDuration)
	}
	checkNoOverlap(t, r.j)
}

// readPasses records in the ring's journal the passes a replica process
// prints, until its stdout closes.
func (r *ring) readPasses(name string, out io.Reader) {
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 || f[0] != "pass" {
			continue
		}
		start, err1 := strconv.ParseInt(f[2], 10, 64)
		end, err2 := strconv.ParseInt(f[3], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		r.j.record(types.NamespacedName{Namespace: r.ns, Name: f[1]}, pass{member: name, start: time.Unix(0, start), end: time.Unix(0, end)})
	}
}
