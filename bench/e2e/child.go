package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/children"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/operator"
	"github.com/bosunkit/bosun/tuning"
)

// The arms: the controllers the bench compares, each run in a process of
// its own so that its CPU time and heap are its own.
const (
	// armBosun is bosun on controller-runtime's and client-go's plumbing,
	// with package operator's defaults (the lean cache); armBosunTuned is
	// the same controller with tuning on (operator.Flags.Tuning).
	armBosun      = "bosun"
	armBosunTuned = "bosun-tuned"
	armHand       = "hand-written"
	armBare       = "bare"
	// armCacheBosun, armCacheBosunTuned and armCacheCR only fill a cache
	// of Widgets, with bosun's default options, with tuning on, and with
	// controller-runtime's.
	armCacheBosun      = "cache-bosun"
	armCacheBosunTuned = "cache-bosun-tuned"
	armCacheCR         = "cache-controller-runtime"
	// armCacheConfigMaps and armCacheSets fill a cache of ConfigMaps with
	// bosun's default options, without and with children.CacheSetsOnly.
	armCacheConfigMaps = "cache-configmaps"
	armCacheSets       = "cache-sets"
	// armShard is the bosun arm as one replica of a ring (package shard).
	armShard = "shard"
)

// childConfig is what a child process is told on its command line.
type childConfig struct {
	arm        string
	kubeconfig string
	namespaces []string
	workers    int
	n          int
	syncPeriod time.Duration
	// identity names the replica of armShard, and lease is the duration
	// of its Leases.
	identity string
	lease    time.Duration
	// standby sets shard.Options.Standby.
	standby bool
}

// stats is what a child reports when asked.
type stats struct {
	// Start is when the controller started (Unix nanoseconds).
	Start int64 `json:"start"`
	// Reconciles counts the reconciles (for bare, the patches).
	Reconciles int64 `json:"reconciles"`
	// CPU is the process's user and system time so far.
	CPU time.Duration `json:"cpu"`
	// Heap is the live heap after a collection (only when asked for).
	Heap uint64 `json:"heap,omitempty"`
	// HeapBefore is the live heap before the cache started (cache arms).
	HeapBefore uint64 `json:"heapBefore,omitempty"`
	// Synced is set once the cache arms' cache is filled.
	Synced bool `json:"synced,omitempty"`
	// Cached is how many Widgets the cache holds (armShard).
	Cached int `json:"cached,omitempty"`
	// Leader is set when the replica leads, and so runs the sharder
	// (armShard).
	Leader bool `json:"leader,omitempty"`
	// Passes are the passes of armShard so far, when asked for.
	Passes []passRecord `json:"passes,omitempty"`
}

// passRecord is one pass of a replica: the object, and its start and end
// in Unix nanoseconds.
type passRecord struct {
	Object     string `json:"o"`
	Start, End int64
}

// runChild runs one arm until its standard input closes, answering each
// line "stats", "settled" (which ends the CPU profile) or "heap" read
// there with a JSON stats line.
func runChild(args []string) error {
	fs := flag.NewFlagSet("child", flag.ContinueOnError)
	var c childConfig
	var ns string
	fs.StringVar(&c.arm, "arm", "", "")
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "")
	fs.StringVar(&ns, "namespaces", "", "")
	fs.IntVar(&c.workers, "workers", 4, "")
	fs.IntVar(&c.n, "n", 0, "")
	fs.DurationVar(&c.syncPeriod, "sync-period", 0, "")
	fs.StringVar(&c.identity, "identity", "", "")
	fs.DurationVar(&c.lease, "lease", 0, "")
	fs.BoolVar(&c.standby, "standby", false, "")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c.namespaces = strings.Split(ns, ",")
	switch c.arm {
	case armCacheBosun, armCacheBosunTuned, armCacheCR, armCacheConfigMaps, armCacheSets:
		if os.Getenv(profileEnv) != "" {
			// A heap profile that sees small objects one by one; the
			// controller arms keep the default rate, which costs them
			// no CPU to speak of.
			runtime.MemProfileRate = 64
		}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		return fmt.Errorf("loading %s: %w", c.kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = -1, -1
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var st stats
	var mu sync.Mutex
	var heapBefore uint64
	var synced func() bool
	reconciles := func() int64 { return reconcileTotal() }
	var done chan error
	var passes *passLog
	var cachedCount func() int
	var elected <-chan struct{}
	switch c.arm {
	case armShard:
		passes = &passLog{}
		mgr, err := newShardManager(cfg, c, passes)
		if err != nil {
			return err
		}
		cachedCount = func() int {
			var list testapi.WidgetList
			if err := mgr.GetCache().List(ctx, &list); err != nil {
				return -1
			}
			return len(list.Items)
		}
		elected = mgr.Elected()
		st.Start = time.Now().UnixNano()
		done = make(chan error, 1)
		go func() { done <- mgr.Start(ctx) }()
	case armBare:
		var n int64
		var nmu sync.Mutex
		reconciles = func() int64 { nmu.Lock(); defer nmu.Unlock(); return n }
		cl, err := client.New(cfg, client.Options{Scheme: scheme()})
		if err != nil {
			return err
		}
		st.Start = time.Now().UnixNano()
		done = make(chan error, 1)
		go func() {
			done <- bare(ctx, cl, c, func() { nmu.Lock(); n++; nmu.Unlock() })
		}()
	default:
		mgr, cacheOnly, err := newManager(cfg, c)
		if err != nil {
			return err
		}
		if cacheOnly {
			heapBefore = liveHeap()
			var obj client.Object = &testapi.Widget{}
			if c.arm == armCacheConfigMaps || c.arm == armCacheSets {
				obj = &corev1.ConfigMap{}
			}
			inf, err := mgr.GetCache().GetInformer(ctx, obj)
			if err != nil {
				return err
			}
			synced = inf.HasSynced
		}
		st.Start = time.Now().UnixNano()
		done = make(chan error, 1)
		go func() { done <- mgr.Start(ctx) }()
	}

	stopProfile := func() {}
	if dir := os.Getenv(profileEnv); dir != "" {
		if stopProfile, err = profile(dir, c); err != nil {
			return err
		}
	}
	defer func() { stopProfile() }()
	in := bufio.NewScanner(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		select {
		case err := <-done:
			if err != nil {
				return err
			}
		default:
		}
		mu.Lock()
		s := st
		mu.Unlock()
		s.Reconciles = reconciles()
		s.CPU = cpuTime()
		if synced != nil {
			s.Synced = synced()
			s.HeapBefore = heapBefore
		}
		if in.Text() == "settled" {
			// The profile covers the convergence alone, not the churn or
			// the restart that may follow, so that runs of every size
			// compare.
			stopProfile()
			stopProfile = func() {}
		}
		if in.Text() == "heap" {
			s.Heap = liveHeap()
			if dir := os.Getenv(profileEnv); dir != "" {
				writeHeapProfile(dir, c)
			}
		}
		if cachedCount != nil {
			s.Cached = cachedCount()
		}
		if elected != nil {
			select {
			case <-elected:
				s.Leader = true
			default:
			}
		}
		if in.Text() == "passes" && passes != nil {
			s.Passes = passes.all()
		}
		if err := out.Encode(s); err != nil {
			return err
		}
	}
	cancel()
	return nil
}

// newManager makes the manager of arm c.arm; cacheOnly is true for the
// cache arms, which run no controller.
func newManager(cfg *rest.Config, c childConfig) (mgr ctrl.Manager, cacheOnly bool, err error) {
	opts := ctrl.Options{
		Scheme:                 scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{}},
		Logger:                 ctrl.Log,
	}
	for _, ns := range c.namespaces {
		opts.Cache.DefaultNamespaces[ns] = cache.Config{}
	}
	if c.syncPeriod > 0 {
		opts.Cache.SyncPeriod = &c.syncPeriod
	}
	switch c.arm {
	case armHand, armCacheCR:
	case armBosunTuned, armCacheBosunTuned:
		operatorCache(&opts, true)
	default:
		operatorCache(&opts, false)
	}
	if c.arm == armCacheSets {
		children.CacheSetsOnly(&opts.Cache, &corev1.ConfigMap{})
	}
	mgr, err = ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, false, err
	}
	// Each bosun arm is what it says: bosun's builder tunes the controllers
	// of a tuned manager only.
	if tuned := c.arm == armBosunTuned || c.arm == armCacheBosunTuned; tuning.Enabled(mgr) != tuned {
		return nil, false, fmt.Errorf("arm %s: tuning.Enabled is %v, want %v", c.arm, tuning.Enabled(mgr), tuned)
	}
	copts := controller.Options{MaxConcurrentReconciles: c.workers}
	switch c.arm {
	case armBosun, armBosunTuned:
		r := &bosun.Reconciler[*testapi.Widget]{Name: "widgets", Steps: []bosun.Step[*testapi.Widget]{divide{}}}
		err = bosun.ControllerManagedBy[*testapi.Widget](mgr).For(&testapi.Widget{}).WithOptions(copts).Complete(r)
	case armHand:
		err = ctrl.NewControllerManagedBy(mgr).For(&testapi.Widget{}).Named("widgets").WithOptions(copts).Complete(&hand{c: mgr.GetClient()})
	case armCacheBosun, armCacheBosunTuned, armCacheCR, armCacheConfigMaps, armCacheSets:
		return mgr, true, nil
	default:
		err = fmt.Errorf("unknown arm %q", c.arm)
	}
	return mgr, false, err
}

// operatorCache gives opts the cache and client package operator makes:
// by default controller-runtime's client and a cache with
// tuning.LeanCache applied in NewCache (to the options that carry the
// manager's HTTP client); with tuned, as with --tuning, both wrapped by
// tuning.Enable, which bosun's builder then sees (tuning.Enabled).
func operatorCache(opts *ctrl.Options, tuned bool) {
	o := (&operator.Flags{Tuning: tuned}).ManagerOptions("bench")
	opts.NewCache, opts.NewClient = o.NewCache, o.NewClient
}

// The reasons of the condition Computed, which both arms write.
const (
	// reasonDivided is the reason of Computed=True.
	reasonDivided conditions.Reason = "Divided"
	// reasonZeroDivisor is the reason of Computed=False, and of Ready, for
	// a zero divisor.
	reasonZeroDivisor conditions.Reason = "ZeroDivisor"
)

// divide is the work of the bosun arm: status.result is value / divisor,
// and the condition Computed says so; a zero divisor fails the pass, to
// be retried with backoff.
type divide struct{}

func (divide) Name() string         { return "divide" }
func (divide) Conditions() []string { return []string{"Computed"} }

func (divide) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	w := req.Object
	if w.Spec.Divisor == 0 {
		return ctrl.Result{}, conditions.Warning(reasonZeroDivisor, errZeroDivisor)
	}
	w.Status.Result = w.Spec.Value / w.Spec.Divisor
	conds := w.Status.Conditions
	conditions.Set(&conds, metav1.Condition{Type: "Computed", Status: metav1.ConditionTrue, Reason: string(reasonDivided), ObservedGeneration: w.Generation}, metav1.Now())
	w.Status.Conditions = conds
	return ctrl.Result{}, nil
}

var errZeroDivisor = errors.New("divisor is zero")

// hand is the same work as a careful hand-written controller-runtime
// reconciler does it: it reads the object and its Namespace (for the
// reconcile policy, as the engine does) from the cache, computes the
// status, and patches it, guarded by resourceVersion, only when it
// changed.
type hand struct{ c client.Client }

func (h *hand) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var w testapi.Widget
	if err := h.c.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	var ns corev1.Namespace
	if err := h.c.Get(ctx, types.NamespacedName{Name: w.Namespace}, &ns); err != nil {
		return ctrl.Result{}, err
	}
	if ns.Annotations[bosun.AnnotationReconcilePolicy] == string(bosun.PolicySkip) {
		return ctrl.Result{}, nil
	}
	orig := w.DeepCopy()
	var failed error
	if w.Spec.Divisor == 0 {
		failed = errZeroDivisor
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: "Computed", Status: metav1.ConditionFalse, Reason: string(reasonZeroDivisor), Message: failed.Error(), ObservedGeneration: w.Generation})
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: string(reasonZeroDivisor), Message: failed.Error(), ObservedGeneration: w.Generation})
	} else {
		w.Status.Result = w.Spec.Value / w.Spec.Divisor
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: "Computed", Status: metav1.ConditionTrue, Reason: string(reasonDivided), ObservedGeneration: w.Generation})
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: string(conditions.ReasonSucceeded), ObservedGeneration: w.Generation})
	}
	w.Status.ObservedGeneration = w.Generation
	if !equality.Semantic.DeepEqual(orig.Status, w.Status) {
		if err := h.c.Status().Patch(ctx, &w, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, failed
}

// bare is the least any controller does: one status patch per object,
// Ready, from a plain client loop with c.workers goroutines and no reads.
// The objects' names are known (objectName), so nothing is listed.
func bare(ctx context.Context, cl client.Client, c childConfig, done func()) error {
	next := make(chan int)
	errs := make(chan error, c.workers)
	var wg sync.WaitGroup
	for range c.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				w := &testapi.Widget{}
				w.Namespace, w.Name = c.namespaces[0], objectName(i)
				now := time.Now().UTC().Format(time.RFC3339)
				body := fmt.Sprintf(`{"status":{"observedGeneration":1,"result":%d,"conditions":[`+
					`{"type":"Computed","status":"True","reason":"Divided","message":"","observedGeneration":1,"lastTransitionTime":%q},`+
					`{"type":"Ready","status":"True","reason":"Succeeded","message":"","observedGeneration":1,"lastTransitionTime":%q}]}}`,
					int64(i), now, now)
				if err := cl.Status().Patch(ctx, w, client.RawPatch(types.MergePatchType, []byte(body))); err != nil {
					errs <- fmt.Errorf("patching %s: %w", w.Name, err)
					return
				}
				done()
			}
		}()
	}
	for i := range c.n {
		select {
		case next <- i:
		case err := <-errs:
			close(next)
			wg.Wait()
			return err
		}
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// profileEnv names a directory where each child writes the CPU profile
// of its run until it settled, <arm>-<n>-<pid>.pprof.
const profileEnv = "BOSUN_BENCH_PROFILE"

// profile starts the CPU profile of this child in dir; stop ends it.
func profile(dir string, c childConfig) (stop func(), err error) {
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d-%d.pprof", c.arm, c.n, os.Getpid())))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// reconcileTotal is the sum of controller-runtime's
// controller_runtime_reconcile_total in this process.
func reconcileTotal() int64 {
	mfs, err := metrics.Registry.Gather()
	if err != nil {
		return -1
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			n += m.GetCounter().GetValue()
		}
	}
	return int64(n)
}

// cpuTime is the user and system time of this process.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// writeHeapProfile writes the child's heap profile to dir, as
// <arm>-<n>-<pid>.heap.pprof, next to its CPU profile.
func writeHeapProfile(dir string, c childConfig) {
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d-%d.heap.pprof", c.arm, c.n, os.Getpid())))
	if err != nil {
		return
	}
	defer f.Close()
	_ = pprof.Lookup("heap").WriteTo(f, 0)
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
