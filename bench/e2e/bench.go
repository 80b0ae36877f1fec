package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bench/internal/procstat"
	"github.com/bosunkit/bosun/children"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/internal/testapi"
)

// bench is one run of the bench on one control plane.
type bench struct {
	cfg        config
	cp         *controlplane.ControlPlane
	cl         client.Client
	kubeconfig string
	out        io.Writer
	// servers are the processes of kube-apiserver and etcd.
	servers []int
	seq     int
}

// report is everything a run of the bench measured.
type report struct {
	runs   []result
	fair   []fairnessResult
	heaps  []heapResult
	sets   []setsResult
	shards []shardResult
}

// all runs every row.
func (b *bench) all(ctx context.Context) (report, error) {
	arms := append(b.cfg.bosunArms(), armHand, armBare)
	var runs []result
	for round := range b.cfg.rounds {
		for _, n := range b.cfg.sizes {
			// The failing rows compare with the clean runs of the first
			// size, which they need even alone.
			all, fail := b.cfg.rows["converge"], b.cfg.rows["fail"] && n == b.cfg.sizes[0]
			if !all && !fail {
				break
			}
			for i := range arms {
				arm := arms[(i+round)%len(arms)]
				if !all && arm == armBare {
					continue
				}
				// The failing run goes next to the clean one of the same
				// arm, which the row compares it with, first in every
				// other round: the API server slows down over a long run.
				fails := []int{0}
				if fail && arm != armBare {
					fails = append(fails, b.cfg.failEvery)
					if round%2 == 1 {
						slices.Reverse(fails)
					}
				}
				for _, f := range fails {
					if b.cfg.fresh {
						if err := b.startControlPlane(ctx); err != nil {
							return report{}, err
						}
					}
					clean := f == 0
					r, err := b.converge(ctx, arm, n, f, round, clean && all && n == slices.Max(b.cfg.sizes) && arm != armBare, clean && all && round == 0 && n == b.cfg.sizes[0] && arm != armBare)
					if err != nil {
						return report{}, fmt.Errorf("%s, %d objects, 1 in %d failing: %w", arm, n, f, err)
					}
					runs = append(runs, r)
					r.print(b.out)
				}
			}
		}
	}
	var fair []fairnessResult
	var heaps []heapResult
	var err error
	if b.cfg.rows["fair"] {
		if fair, err = b.fairness(ctx); err != nil {
			return report{}, fmt.Errorf("fairness: %w", err)
		}
	}
	var sets []setsResult
	if b.cfg.rows["heap"] {
		if heaps, err = b.heap(ctx); err != nil {
			return report{}, fmt.Errorf("heap: %w", err)
		}
		if len(b.cfg.heapSizes) > 0 {
			r, err := b.setsHeap(ctx, b.cfg.heapSizes[0])
			if err != nil {
				return report{}, fmt.Errorf("heap of the children's cache: %w", err)
			}
			sets = append(sets, r)
		}
	}
	var shards []shardResult
	if b.cfg.rows["shard"] {
		if shards, err = b.sharding(ctx); err != nil {
			return report{}, fmt.Errorf("sharding: %w", err)
		}
	}
	summary(b.out, b.cfg, runs, fair, heaps, sets)
	shardSummary(b.out, shards)
	return report{runs: runs, fair: fair, heaps: heaps, sets: sets, shards: shards}, nil
}

// result is what one convergence run measured.
type result struct {
	arm   string
	n     int
	fail  int
	round int
	// all is the time from the controller's start to every healthy object
	// Ready; first to the first one.
	all, first time.Duration
	// healthyAt is when each healthy object became Ready, from the start.
	healthyAt map[string]time.Duration
	// reconciles and cpu are the controller's, apiCPU kube-apiserver's and
	// etcd's, from the start until the controller settled.
	reconciles int64
	cpu        time.Duration
	apiCPU     time.Duration
	// requests are the API server's requests over the same time, by verb
	// and resource (nil when its metrics could not be read).
	requests map[string]float64
	// latencies are the spec-change-to-Ready times of the churn.
	latencies []time.Duration
	// idleWrites are the writes to the objects while nothing changed;
	// restartWrites and resyncWrites after a restart and on resyncs
	// (-1: not measured).
	idleWrites, restartWrites, resyncWrites int
}

func (r result) print(w io.Writer) {
	fmt.Fprintf(w, "run arm=%s n=%d fail=%d round=%d all=%s first=%s reconciles/object=%.2f cpu/object=%s api-cpu/object=%s idle-writes=%d",
		r.arm, r.n, r.fail, r.round, r.all.Round(time.Millisecond), r.first.Round(time.Millisecond),
		float64(r.reconciles)/float64(r.n), perObject(r.cpu, r.n), perObject(r.apiCPU, r.n), r.idleWrites)
	if len(r.latencies) > 0 {
		fmt.Fprintf(w, " changes=%d p50=%s p99=%s", len(r.latencies), quantile(r.latencies, 0.5), quantile(r.latencies, 0.99))
	}
	if r.restartWrites >= 0 {
		fmt.Fprintf(w, " restart-writes=%d resync-writes=%d", r.restartWrites, r.resyncWrites)
	}
	if r.requests != nil {
		fmt.Fprintf(w, " requests/object=%s", perObjectRequests(r.requests, r.n))
	}
	fmt.Fprintln(w)
}

func perObject(d time.Duration, n int) time.Duration {
	if n == 0 {
		return 0
	}
	return (d / time.Duration(n)).Round(time.Microsecond)
}

// converge creates n objects in a new namespace (every fail-th failing),
// runs arm on them until every healthy one is Ready and the controller
// settles, then, when churn is set, changes specs at the configured rate,
// and counts the writes while nothing changes; restart adds a restart
// with resyncs.
func (b *bench) converge(ctx context.Context, arm string, n, fail, round int, churn, restart bool) (result, error) {
	r := result{arm: arm, n: n, fail: fail, round: round, restartWrites: -1, resyncWrites: -1}
	ns, w, done, err := b.watchedNamespace(ctx, n, fail)
	if err != nil {
		return r, err
	}
	defer done()
	healthy := make([]string, 0, n)
	for i := range n {
		if !failing(i, fail) {
			healthy = append(healthy, objectName(i))
		}
	}
	api0, req0 := b.serverCPU(), b.serverRequests(ctx)
	c, err := b.startChild(ctx, childConfig{arm: arm, namespaces: []string{ns}, workers: b.cfg.workers, n: n})
	if err != nil {
		return r, err
	}
	defer c.stop()
	s0, err := c.stats("stats")
	if err != nil {
		return r, err
	}
	start := time.Unix(0, s0.Start)
	if err := w.waitReady(ctx, healthy, 1, c); err != nil {
		return r, err
	}
	r.healthyAt = map[string]time.Duration{}
	for _, name := range healthy {
		at := w.readyAt(name, 1).Sub(start)
		r.healthyAt[name] = at
		r.all = max(r.all, at)
		if r.first == 0 || at < r.first {
			r.first = at
		}
	}
	s, err := c.settle(arm, n)
	if err != nil {
		return r, err
	}
	r.reconciles, r.cpu, r.apiCPU = s.Reconciles, s.CPU, b.serverCPU()-api0
	r.requests = procstat.RequestsSince(req0, b.serverRequests(ctx))
	if fail > 0 {
		return r, nil
	}
	if r.idleWrites, err = w.writesDuring(ctx, b.cfg.idleFor, nil); err != nil {
		return r, err
	}
	if churn {
		if r.latencies, err = b.churn(ctx, ns, n, w, c); err != nil {
			return r, err
		}
	}
	if restart {
		if err := b.restart(ctx, &r, ns, n, w, c); err != nil {
			return r, err
		}
	}
	return r, nil
}

// failing reports whether the i-th object fails when every fail-th does.
func failing(i, fail int) bool { return fail > 0 && i%fail == fail-1 }

// restart stops the controller c, starts it again with a short resync
// period, and counts the writes of its first passes and of its resyncs.
func (b *bench) restart(ctx context.Context, r *result, ns string, n int, w *watcher, c *child) error {
	c.stop()
	const period = 3 * time.Second
	before := w.writes.Load()
	c2, err := b.startChild(ctx, childConfig{arm: r.arm, namespaces: []string{ns}, workers: b.cfg.workers, n: n, syncPeriod: period})
	if err != nil {
		return err
	}
	defer c2.stop()
	// Its first passes: one per object.
	if err := c2.waitReconciles(ctx, int64(n)); err != nil {
		return err
	}
	if _, err := c2.settle(r.arm, n); err != nil {
		return err
	}
	r.restartWrites = int(w.writes.Load() - before)
	// Two resyncs at least: every object reconciled three times in all.
	before = w.writes.Load()
	if err := c2.waitReconciles(ctx, int64(3*n)); err != nil {
		return err
	}
	r.resyncWrites = int(w.writes.Load() - before)
	return nil
}

// churn changes the spec of distinct objects at the configured rate and
// returns the time from each change to the object's Ready for it.
func (b *bench) churn(ctx context.Context, ns string, n int, w *watcher, c *child) ([]time.Duration, error) {
	total := min(n, int(b.cfg.churnRate*b.cfg.churnFor.Seconds()))
	order := rand.Perm(n)[:total]
	type change struct {
		name string
		gen  int64
		at   time.Time
	}
	changes := make([]change, 0, total)
	tick := time.NewTicker(time.Duration(float64(time.Second) / b.cfg.churnRate))
	defer tick.Stop()
	for _, i := range order {
		<-tick.C
		obj := &testapi.Widget{}
		obj.Namespace, obj.Name = ns, objectName(i)
		at := time.Now()
		patch := fmt.Sprintf(`{"spec":{"value":%d}}`, 1000+i)
		if err := b.cl.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			return nil, fmt.Errorf("changing %s: %w", obj.Name, err)
		}
		changes = append(changes, change{name: obj.Name, gen: obj.Generation, at: at})
	}
	out := make([]time.Duration, 0, len(changes))
	for _, ch := range changes {
		if err := w.waitReady(ctx, []string{ch.name}, ch.gen, c); err != nil {
			return nil, err
		}
		out = append(out, w.readyAt(ch.name, ch.gen).Sub(ch.at))
	}
	if _, err := c.settle(armBosun, n); err != nil {
		return nil, err
	}
	return out, nil
}

// fairnessResult is the p99 time to Ready of the small namespace's
// objects, next to the busy one and alone, per arm.
type fairnessResult struct {
	arm           string
	beside, alone time.Duration
	// burstBeside and burstAlone are the p99 times from a spec change of
	// the small namespace's objects to Ready, with the controller running,
	// during a burst of changes of the busy namespace and without.
	burstBeside, burstAlone time.Duration
}

// fairness measures, for bosun (and bosun tuned) and the hand-written
// controller, how long
// the objects of a small namespace take to be Ready when a busy namespace
// is reconciled at the same time, and alone.
func (b *bench) fairness(ctx context.Context) ([]fairnessResult, error) {
	big, err := b.namespace(ctx, b.cfg.fairBig, 0)
	if err != nil {
		return nil, err
	}
	defer b.clear(ctx, big)
	var out []fairnessResult
	for _, arm := range append(b.cfg.bosunArms(), armHand) {
		fr := fairnessResult{arm: arm}
		for _, beside := range []bool{true, false} {
			small, err := b.namespace(ctx, b.cfg.fairSmall, 0)
			if err != nil {
				return nil, err
			}
			namespaces := []string{small}
			if beside {
				namespaces = append(namespaces, big)
			}
			p99, err := b.smallReady(ctx, arm, small, namespaces)
			b.clear(ctx, small)
			if err != nil {
				return nil, err
			}
			if beside {
				fr.beside = p99
			} else {
				fr.alone = p99
			}
		}
		if fr.burstBeside, fr.burstAlone, err = b.burst(ctx, arm, big); err != nil {
			return nil, err
		}
		// The busy namespace's objects are Ready now: make them all
		// need a pass again for the next arm.
		if err := b.resetStatus(ctx, big, b.cfg.fairBig); err != nil {
			return nil, err
		}
		fmt.Fprintf(b.out, "fairness arm=%s small=%d big=%d p99-beside=%s p99-alone=%s burst-beside=%s burst-alone=%s\n", arm, b.cfg.fairSmall, b.cfg.fairBig,
			fr.beside.Round(time.Millisecond), fr.alone.Round(time.Millisecond), fr.burstBeside.Round(time.Millisecond), fr.burstAlone.Round(time.Millisecond))
		out = append(out, fr)
	}
	return out, nil
}

// smallReady runs arm on namespaces and returns the p99 time from its start
// to Ready of the objects of small.
func (b *bench) smallReady(ctx context.Context, arm, small string, namespaces []string) (time.Duration, error) {
	w, err := b.watch(ctx, small)
	if err != nil {
		return 0, err
	}
	defer w.stop()
	c, err := b.startChild(ctx, childConfig{arm: arm, namespaces: namespaces, workers: b.cfg.workers})
	if err != nil {
		return 0, err
	}
	defer c.stop()
	s0, err := c.stats("stats")
	if err != nil {
		return 0, err
	}
	names := make([]string, b.cfg.fairSmall)
	for i := range names {
		names[i] = objectName(i)
	}
	if err := w.waitReady(ctx, names, 1, c); err != nil {
		return 0, err
	}
	var at []time.Duration
	for _, name := range names {
		at = append(at, w.readyAt(name, 1).Sub(time.Unix(0, s0.Start)))
	}
	return quantile(at, 0.99), nil
}

// burst runs arm on a new small namespace and big until every object is
// Ready, then changes the spec of the small namespace's objects, alone and
// then while a burst of changes (every status of big cleared) floods the
// controller's queue, and returns the p99 times from those changes to
// Ready.
func (b *bench) burst(ctx context.Context, arm, big string) (beside, alone time.Duration, err error) {
	small, err := b.namespace(ctx, b.cfg.fairSmall, 0)
	if err != nil {
		return 0, 0, err
	}
	defer b.clear(ctx, small)
	ws, err := b.watch(ctx, small)
	if err != nil {
		return 0, 0, err
	}
	defer ws.stop()
	wb, err := b.watch(ctx, big)
	if err != nil {
		return 0, 0, err
	}
	defer wb.stop()
	c, err := b.startChild(ctx, childConfig{arm: arm, namespaces: []string{small, big}, workers: b.cfg.workers})
	if err != nil {
		return 0, 0, err
	}
	defer c.stop()
	names := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = objectName(i)
		}
		return out
	}
	if err := ws.waitReady(ctx, names(b.cfg.fairSmall), 1, c); err != nil {
		return 0, 0, err
	}
	if err := wb.waitReady(ctx, names(b.cfg.fairBig), 1, c); err != nil {
		return 0, 0, err
	}
	// change sets the spec of the small objects to value, which makes
	// generation gen, and returns the p99 time to Ready.
	change := func(value, gen int64) (time.Duration, error) {
		at := make([]time.Time, b.cfg.fairSmall)
		for i := range at {
			obj := &testapi.Widget{}
			obj.Namespace, obj.Name = small, objectName(i)
			at[i] = time.Now()
			if err := b.cl.Patch(ctx, obj, client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"value":%d}}`, value))); err != nil {
				return 0, err
			}
		}
		if err := ws.waitReady(ctx, names(b.cfg.fairSmall), gen, c); err != nil {
			return 0, err
		}
		var d []time.Duration
		for i, t := range at {
			d = append(d, ws.readyAt(objectName(i), gen).Sub(t))
		}
		return quantile(d, 0.99), nil
	}
	if alone, err = change(-1, 2); err != nil {
		return 0, 0, err
	}
	// The burst: clear the statuses of big; once a fifth of them are
	// cleared, change the small objects.
	var cleared atomic.Int64
	done := make(chan error, 1)
	go func() {
		done <- parallel(ctx, b.cfg.fairBig, func(i int) error {
			obj := &testapi.Widget{}
			obj.Namespace, obj.Name = big, objectName(i)
			err := b.cl.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(`{"status":null}`)))
			cleared.Add(1)
			return err
		})
	}()
	for cleared.Load() < int64(b.cfg.fairBig/5) {
		time.Sleep(5 * time.Millisecond)
	}
	beside, err = change(-2, 3)
	if berr := <-done; err == nil {
		err = berr
	}
	return beside, alone, err
}

// watchedNamespace makes a namespace of n objects (every fail-th one
// failing, as namespace does) and a watcher of them; done stops the
// watcher and deletes the namespace.
func (b *bench) watchedNamespace(ctx context.Context, n, fail int) (ns string, w *watcher, done func(), err error) {
	if ns, err = b.namespace(ctx, n, fail); err != nil {
		return "", nil, nil, err
	}
	if w, err = b.watch(ctx, ns); err != nil {
		b.clear(ctx, ns)
		return "", nil, nil, err
	}
	return ns, w, func() {
		w.stop()
		b.clear(ctx, ns)
	}, nil
}

// resetStatus clears the status of the n objects of ns.
func (b *bench) resetStatus(ctx context.Context, ns string, n int) error {
	return parallel(ctx, n, func(i int) error {
		obj := &testapi.Widget{}
		obj.Namespace, obj.Name = ns, objectName(i)
		return b.cl.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(`{"status":null}`)))
	})
}

// heapResult is the heap a cache of n Widgets takes, with bosun's default
// cache options, with tuning on (0 when not measured) and with
// controller-runtime's.
type heapResult struct {
	n                int
	bosun, tuned, cr uint64
}

func (b *bench) heap(ctx context.Context) ([]heapResult, error) {
	var out []heapResult
	for _, n := range b.cfg.heapSizes {
		ns, err := b.namespace(ctx, n, 0)
		if err != nil {
			return nil, err
		}
		// Objects as controllers leave them: with a status.
		if err := parallel(ctx, n, func(i int) error {
			obj := &testapi.Widget{}
			obj.Namespace, obj.Name = ns, objectName(i)
			now := time.Now().UTC().Format(time.RFC3339)
			body := fmt.Sprintf(`{"status":{"observedGeneration":1,"result":%d,"conditions":[`+
				`{"type":"Computed","status":"True","reason":"Divided","message":"","observedGeneration":1,"lastTransitionTime":%q},`+
				`{"type":"Ready","status":"True","reason":"Succeeded","message":"","observedGeneration":1,"lastTransitionTime":%q}]}}`, i, now, now)
			return b.cl.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(body)))
		}); err != nil {
			return nil, err
		}
		hr := heapResult{n: n}
		hr.bosun, err = b.cacheHeap(ctx, ns, armCacheBosun)
		if err == nil && b.cfg.tuned {
			hr.tuned, err = b.cacheHeap(ctx, ns, armCacheBosunTuned)
		}
		if err == nil {
			hr.cr, err = b.cacheHeap(ctx, ns, armCacheCR)
		}
		b.clear(ctx, ns)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(b.out, "heap n=%d bosun=%s controller-runtime=%s ratio=%.2f", n, mib(hr.bosun), mib(hr.cr), float64(hr.bosun)/float64(hr.cr))
		if b.cfg.tuned {
			fmt.Fprintf(b.out, " bosun-tuned=%s tuned-ratio=%.2f", mib(hr.tuned), float64(hr.tuned)/float64(hr.cr))
		}
		fmt.Fprintln(b.out)
		out = append(out, hr)
	}
	return out, nil
}

// setsResult is the heap of a cache of ConfigMaps of which one in ten is
// the child of a set, with bosun's default cache options and with
// children.CacheSetsOnly as well.
type setsResult struct {
	n, children int
	all, sets   uint64
}

// setsHeap measures the cache of n ConfigMaps, one in ten of them a child
// of a set.
func (b *bench) setsHeap(ctx context.Context, n int) (setsResult, error) {
	r := setsResult{n: n}
	ns, err := b.namespace(ctx, 0, 0)
	if err != nil {
		return r, err
	}
	defer func() {
		if err := b.cl.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(ns)); err != nil {
			fmt.Fprintf(os.Stderr, "bench: deleting the ConfigMaps of %s: %v\n", ns, err)
		}
	}()
	r.children = (n + 9) / 10
	if err := parallel(ctx, n, func(i int) error {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm-%06d", i)},
			Data:       map[string]string{"app.properties": fmt.Sprintf("name=cm-%06d\nreplicas=3\nlog.level=info\n", i), "owner": "someone else"},
		}
		if i%10 == 0 {
			cm.Labels = map[string]string{children.LabelSet: "config"}
		}
		return b.cl.Create(ctx, cm)
	}); err != nil {
		return r, err
	}
	if r.all, err = b.cacheHeap(ctx, ns, armCacheConfigMaps); err != nil {
		return r, err
	}
	if r.sets, err = b.cacheHeap(ctx, ns, armCacheSets); err != nil {
		return r, err
	}
	fmt.Fprintf(b.out, "heap configmaps n=%d children=%d lean=%s sets-only=%s ratio=%.2f\n", n, r.children, mib(r.all), mib(r.sets), float64(r.sets)/float64(r.all))
	return r, nil
}

// cacheHeap starts a cache arm on ns, waits for its cache to fill, and
// returns the live heap the cache added.
func (b *bench) cacheHeap(ctx context.Context, ns, arm string) (uint64, error) {
	c, err := b.startChild(ctx, childConfig{arm: arm, namespaces: []string{ns}})
	if err != nil {
		return 0, err
	}
	defer c.stop()
	var s stats
	for {
		if s, err = c.stats("stats"); err != nil {
			return 0, err
		}
		if s.Synced {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if s, err = c.stats("heap"); err != nil {
		return 0, err
	}
	return s.Heap - min(s.Heap, s.HeapBefore), nil
}

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// namespace makes a namespace with n Widgets, every fail-th with a zero
// divisor.
func (b *bench) namespace(ctx context.Context, n, fail int) (string, error) {
	b.seq++
	// Names sort in the order of creation, as the API server lists
	// them: the small namespace of the fairness rows comes after the
	// busy one, the order a FIFO queue serves worst.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-%04d", b.seq)}}
	if err := b.cl.Create(ctx, ns); err != nil {
		return "", err
	}
	err := parallel(ctx, n, func(i int) error {
		divisor := int64(1)
		if failing(i, fail) {
			divisor = 0
		}
		return b.cl.Create(ctx, &testapi.Widget{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: objectName(i)},
			Spec:       testapi.WidgetSpec{Value: int64(i), Divisor: divisor},
		})
	})
	return ns.Name, err
}

// clear deletes the Widgets of ns (nothing deletes namespaces here).
func (b *bench) clear(ctx context.Context, ns string) {
	if err := b.cl.DeleteAllOf(ctx, &testapi.Widget{}, client.InNamespace(ns)); err != nil {
		fmt.Fprintf(os.Stderr, "bench: deleting the objects of %s: %v\n", ns, err)
	}
}

// parallel runs fn for 0..n-1 on 8 goroutines and returns the first error.
func parallel(ctx context.Context, n int, fn func(i int) error) error {
	next := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					once.Do(func() { first = err; cancel() })
				}
			}
		}()
	}
loop:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break loop
		}
	}
	close(next)
	wg.Wait()
	return first
}

// watcher follows the Widgets of a namespace: when each became Ready for
// each generation, and how many writes changed them.
type watcher struct {
	cancel context.CancelFunc
	mu     sync.Mutex
	ready  map[string]map[int64]time.Time
	// shard is each object's shard label (of the ring "bench"), moved
	// when it last changed.
	shard  map[string]string
	moved  map[string]time.Time
	writes atomic.Int64
}

func (b *bench) watch(ctx context.Context, ns string) (*watcher, error) {
	c, err := cache.New(b.cp.Config, cache.Options{Scheme: b.cp.Scheme, DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		return nil, err
	}
	w := &watcher{ready: map[string]map[int64]time.Time{}, shard: map[string]string{}, moved: map[string]time.Time{}}
	inf, err := c.GetInformer(ctx, &testapi.Widget{})
	if err != nil {
		return nil, err
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { w.see(obj) },
		UpdateFunc: func(old, obj any) {
			if old.(client.Object).GetResourceVersion() != obj.(client.Object).GetResourceVersion() {
				w.writes.Add(1)
			}
			w.see(obj)
		},
	}); err != nil {
		return nil, err
	}
	cctx, cancel := context.WithCancel(ctx)
	w.cancel = cancel
	go func() { _ = c.Start(cctx) }()
	if !c.WaitForCacheSync(cctx) {
		cancel()
		return nil, errors.New("the watcher's cache did not sync")
	}
	return w, nil
}

func (w *watcher) stop() { w.cancel() }

func (w *watcher) see(obj any) {
	now := time.Now()
	wd, ok := obj.(*testapi.Widget)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if label := wd.Labels[shardLabel]; label != w.shard[wd.Name] {
		w.shard[wd.Name], w.moved[wd.Name] = label, now
	}
	c := conditions.Find(wd.Status.Conditions, conditions.TypeReady)
	if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != wd.Generation {
		return
	}
	m := w.ready[wd.Name]
	if m == nil {
		m = map[int64]time.Time{}
		w.ready[wd.Name] = m
	}
	if _, ok := m[wd.Generation]; !ok {
		m[wd.Generation] = now
	}
}

// labelled returns how many objects are labelled for member, and when
// the last of the objects of names was relabelled.
func (w *watcher) labelled(member string, names []string) (n int, last time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, name := range names {
		if w.shard[name] == member {
			n++
		}
		if t := w.moved[name]; t.After(last) {
			last = t
		}
	}
	return n, last
}

func (w *watcher) readyAt(name string, gen int64) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ready[name][gen]
}

// waitReady waits until every object of names has been Ready for
// generation gen, or the child c has died, or ten minutes have passed.
func (w *watcher) waitReady(ctx context.Context, names []string, gen int64, c *child) error {
	deadline := time.Now().Add(10 * time.Minute)
	i := 0
	for {
		for i < len(names) && !w.readyAt(names[i], gen).IsZero() {
			i++
		}
		if i == len(names) {
			return nil
		}
		if err := c.alive(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not Ready for generation %d after ten minutes", names[i], gen)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// writesDuring counts the writes to the objects over d.
func (w *watcher) writesDuring(ctx context.Context, d time.Duration, _ *child) (int, error) {
	before := w.writes.Load()
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(d):
	}
	return int(w.writes.Load() - before), nil
}

// child is a running arm.
type child struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *json.Decoder
	done chan error
	mu   sync.Mutex
}

func (b *bench) startChild(ctx context.Context, c childConfig) (*child, error) {
	args := []string{
		"-arm", c.arm, "-kubeconfig", b.kubeconfig, "-namespaces", strings.Join(c.namespaces, ","),
		"-workers", strconv.Itoa(max(c.workers, 1)), "-n", strconv.Itoa(c.n), "-sync-period", c.syncPeriod.String(),
		"-identity", c.identity, "-lease", c.lease.String(), "-standby=" + strconv.FormatBool(c.standby),
	}
	cmd := exec.CommandContext(ctx, b.cfg.exe, args...)
	cmd.Env = append(os.Environ(), childEnv+"=1", "GOMAXPROCS="+os.Getenv("GOMAXPROCS"))
	if os.Getenv("GOMAXPROCS") == "" {
		cmd.Env = append(os.Environ(), childEnv+"=1")
	}
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", filepath.Base(b.cfg.exe), err)
	}
	ch := &child{cmd: cmd, in: in, out: json.NewDecoder(bufio.NewReader(out)), done: make(chan error, 1)}
	go func() { ch.done <- cmd.Wait() }()
	return ch, nil
}

// stats asks the child for its stats ("stats", or "heap" for the heap
// too).
func (c *child) stats(what string) (stats, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var s stats
	if _, err := fmt.Fprintln(c.in, what); err != nil {
		return s, fmt.Errorf("asking the child: %w", err)
	}
	if err := c.out.Decode(&s); err != nil {
		return s, fmt.Errorf("reading the child's answer: %w", err)
	}
	return s, nil
}

// alive returns the child's error if it has ended.
func (c *child) alive() error {
	select {
	case err := <-c.done:
		c.done <- err
		return fmt.Errorf("the child ended: %w", err)
	default:
		return nil
	}
}

// settle waits until the child's reconciles stop growing (for bare: until
// it patched every object) and returns its stats then.
func (c *child) settle(arm string, n int) (stats, error) {
	last, err := c.stats("stats")
	if err != nil {
		return last, err
	}
	for {
		time.Sleep(500 * time.Millisecond)
		s, err := c.stats("stats")
		if err != nil {
			return s, err
		}
		if s.Reconciles == last.Reconciles && (arm != armBare || s.Reconciles >= int64(n)) {
			_, err := c.stats("settled")
			return s, err
		}
		last = s
	}
}

// waitReconciles waits until the child has made at least n reconciles.
func (c *child) waitReconciles(ctx context.Context, n int64) error {
	for {
		s, err := c.stats("stats")
		if err != nil || s.Reconciles >= n {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stop ends the child and waits for it.
func (c *child) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.in != nil {
		c.in.Close()
		c.in = nil
		select {
		case err := <-c.done:
			c.done <- err
		case <-time.After(30 * time.Second):
			_ = c.cmd.Process.Kill()
		}
	}
}

// serverCPU is the user and system time of kube-apiserver and etcd so far.
func (b *bench) serverCPU() time.Duration { return procstat.CPU(b.servers...) }

// quantile is the q-quantile of ds (nearest rank).
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)].Round(time.Millisecond)
}

// serverRequests returns the requests the API server has served so far,
// by verb and resource (see procstat.ServerRequests).
func (b *bench) serverRequests(ctx context.Context) map[string]float64 {
	return procstat.ServerRequests(ctx, b.cp.Config)
}

// perObjectRequests formats reqs, divided by n, the busiest first, those
// under 0.01 per object left out.
func perObjectRequests(reqs map[string]float64, n int) string {
	type kv struct {
		k string
		v float64
	}
	var all []kv
	for k, v := range reqs {
		if v/float64(n) >= 0.01 {
			all = append(all, kv{k, v / float64(n)})
		}
	}
	slices.SortFunc(all, func(a, b kv) int { return cmp.Compare(b.v, a.v) })
	parts := make([]string, len(all))
	for i, e := range all {
		parts[i] = fmt.Sprintf("%s:%.2f", strings.ReplaceAll(e.k, " ", "_"), e.v)
	}
	return strings.Join(parts, ",")
}
