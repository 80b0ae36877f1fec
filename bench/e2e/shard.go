package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/shard"
)

// The replica a sharded run kills.
const (
	killMember = "member"
	killLeader = "leader"
)

// shardLabel is the shard label of the ring "bench".
const shardLabel = shard.LabelPrefix + "bench"

// passLog records the passes of a replica.
type passLog struct {
	mu     sync.Mutex
	passes []passRecord
}

func (l *passLog) all() []passRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]passRecord(nil), l.passes...)
}

// newShardManager makes the manager of one replica of the ring "bench":
// the bosun arm's reconciler, restricted to the replica's share.
func newShardManager(cfg *rest.Config, c childConfig, log *passLog) (ctrl.Manager, error) {
	ns := c.namespaces[0]
	// Short leases, so that a killed replica's share moves within
	// seconds: the members' and the leader's the same.
	lease := c.lease
	if lease <= 0 {
		lease = 4 * time.Second
	}
	member, err := shard.New(shard.Options{
		Ring: "bench", Identity: c.identity, Namespace: ns, Object: &testapi.Widget{},
		LeaseDuration: lease, RenewPeriod: lease / 4, ObjectNamespaces: []string{ns}, Standby: c.standby,
	})
	if err != nil {
		return nil, err
	}
	opts := ctrl.Options{
		Scheme:                        scheme(),
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		Logger:                        ctrl.Log,
		LeaderElection:                true,
		LeaderElectionID:              "bench-sharder",
		LeaderElectionNamespace:       ns,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 ptr.To(lease),
		RenewDeadline:                 ptr.To(lease * 3 / 4),
		RetryPeriod:                   ptr.To(lease / 8),
		Cache:                         cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	}
	operatorCache(&opts, false)
	member.ConfigureCache(&opts.Cache)
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, err
	}
	if err := member.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	r := &bosun.Reconciler[*testapi.Widget]{
		Name: "widgets", Steps: []bosun.Step[*testapi.Widget]{divide{}},
		Options: bosun.Options{Observers: []bosun.PassObserver{bosun.PassObserverFunc(func(_ context.Context, rep bosun.PassReport) {
			log.mu.Lock()
			log.passes = append(log.passes, passRecord{Object: rep.Object.String(), Start: rep.Start.UnixNano(), End: rep.Start.Add(rep.Duration).UnixNano()})
			log.mu.Unlock()
		})}},
	}
	err = bosun.ControllerManagedBy[*testapi.Widget](mgr).
		For(nil, builder.WithPredicates(member.Predicate())).
		WatchesRawSource(member.Takeovers()).
		WithOptions(member.ControllerOptions(controller.Options{MaxConcurrentReconciles: c.workers})).
		Complete(r)
	return mgr, err
}

// shardResult is what a run of k replicas measured.
type shardResult struct {
	replicas int
	n        int
	// killed is the replica killed mid-change: killMember or killLeader
	// (none for one replica).
	killed string
	// all is the time from the start to every object Ready.
	all time.Duration
	// heaps and cached are each replica's live heap and cached objects
	// once converged.
	heaps  []uint64
	cached []int
	// relabelled is the time from the kill of a replica, while every
	// object was being changed, to none of its objects labelled for it;
	// expired the time from the kill to the end of its Lease, and
	// afterExpiry the time from there to the last relabel; handover the
	// time from the kill to every object Ready for its change.
	relabelled, expired, afterExpiry, handover time.Duration
	// taken is the time from the kill to a pass, by another replica, of
	// every object the killed replica held; takenFirst to the first such
	// pass.
	taken, takenFirst time.Duration
	// passes counts the passes of all replicas; overlaps the objects
	// whose passes by two replicas overlapped in time.
	passes, overlaps int
}

// sharding runs the bosun arm as 1, 2 and 4 replicas of a ring on n
// objects, kills one replica mid-work, and checks that no object was
// reconciled by two at once.
func (b *bench) sharding(ctx context.Context) ([]shardResult, error) {
	n := b.cfg.sizes[0]
	var out []shardResult
	type run struct {
		k    int
		kill string
	}
	var runs []run
	for _, k := range b.cfg.replicas {
		if k == 1 {
			runs = append(runs, run{k: k})
		}
		for _, kill := range b.cfg.kills {
			if k > 1 {
				runs = append(runs, run{k: k, kill: kill})
			}
		}
	}
	for _, run := range runs {
		k := run.k
		r, err := b.shardRun(ctx, n, k, run.kill)
		if err != nil {
			return nil, fmt.Errorf("%d replicas: %w", k, err)
		}
		fmt.Fprintf(b.out, "shard standby=%v idle=%v replicas=%d kill=%s n=%d all=%s cached=%v heaps=%v relabelled=%s expired=%s after-expiry=%s taken-first=%s taken=%s handover=%s passes/object=%.2f overlaps=%d\n",
			b.cfg.shardStandby, b.cfg.shardIdle, k, run.kill, n, r.all.Round(time.Millisecond), r.cached, mibs(r.heaps), r.relabelled.Round(time.Millisecond), r.expired.Round(time.Millisecond),
			r.afterExpiry.Round(time.Millisecond), r.takenFirst.Round(time.Millisecond), r.taken.Round(time.Millisecond), r.handover.Round(time.Millisecond),
			float64(r.passes)/float64(n), r.overlaps)
		out = append(out, r)
	}
	return out, nil
}

func mibs(v []uint64) []string {
	out := make([]string, len(v))
	for i, h := range v {
		out[i] = mib(h)
	}
	return out
}

func (b *bench) shardRun(ctx context.Context, n, k int, kill string) (shardResult, error) {
	r := shardResult{replicas: k, n: n, killed: kill}
	ns, w, done, err := b.watchedNamespace(ctx, n, 0)
	if err != nil {
		return r, err
	}
	defer done()
	children := make([]*child, k)
	start := time.Now()
	for i := range k {
		c, err := b.startChild(ctx, childConfig{arm: armShard, namespaces: []string{ns}, workers: b.cfg.workers, identity: fmt.Sprintf("r%d", i), lease: b.cfg.shardLease, standby: b.cfg.shardStandby})
		if err != nil {
			return r, err
		}
		defer c.stop()
		children[i] = c
	}
	names := make([]string, n)
	for i := range names {
		names[i] = objectName(i)
	}
	if err := w.waitReady(ctx, names, 1, children[0]); err != nil {
		return r, err
	}
	for _, name := range names {
		r.all = max(r.all, w.readyAt(name, 1).Sub(start))
	}
	for _, c := range children {
		if _, err := c.settle(armShard, n); err != nil {
			return r, err
		}
	}
	// The replicas' shares are labelled: wait until their caches hold
	// nothing else.
	for _, c := range children {
		s, err := c.stats("heap")
		if err != nil {
			return r, err
		}
		r.heaps, r.cached = append(r.heaps, s.Heap), append(r.cached, s.Cached)
	}
	var passes [][]passRecord
	var killed time.Time
	if k > 1 {
		// Change every object, and kill a replica while the changes go
		// in: the leader, or the last replica that does not lead.
		v, err := pickVictim(children, kill == killLeader)
		if err != nil {
			return r, err
		}
		victim := children[v]
		children = append(children[:v:v], children[v+1:]...)
		changed := make(chan error, 1)
		var sent atomic.Int64
		if b.cfg.shardIdle {
			changed <- nil
		} else {
			go func() {
				changed <- parallel(ctx, n, func(i int) error {
					obj := &testapi.Widget{}
					obj.Namespace, obj.Name = ns, objectName(i)
					sent.Add(1)
					// A value no object has: every object gets a new generation.
					return b.cl.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"value":-1}}`)))
				})
			}()
			for sent.Load() < int64(n/4) {
				time.Sleep(5 * time.Millisecond)
			}
		}
		s, err := victim.stats("passes")
		if err != nil {
			return r, err
		}
		passes = append(passes, s.Passes)
		killed = time.Now()
		if err := victim.cmd.Process.Kill(); err != nil {
			return r, err
		}
		// The victim's objects are relabelled for a live member once its
		// Lease has expired (and a new sharder is elected, when the victim
		// led).
		victimID := fmt.Sprintf("r%d", v)
		for {
			left, last := w.labelled(victimID, names)
			if left == 0 {
				r.relabelled = last.Sub(killed)
				break
			}
			select {
			case <-ctx.Done():
				return r, ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
		// The victim renews no more: its Lease holds the end of its term.
		var lease coordinationv1.Lease
		if err := b.cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: shard.LeaseName("bench", victimID)}, &lease); err != nil {
			return r, fmt.Errorf("reading the killed replica's lease: %w", err)
		}
		if s := lease.Spec; s.RenewTime != nil && s.LeaseDurationSeconds != nil {
			expiry := s.RenewTime.Add(time.Duration(*s.LeaseDurationSeconds) * time.Second)
			r.expired = expiry.Sub(killed)
			r.afterExpiry = r.relabelled - r.expired
		}
		if err := <-changed; err != nil {
			return r, err
		}
		if b.cfg.shardIdle {
			// Every object of the killed replica has had a pass by another
			// once the pass logs say so.
			if err := waitTaken(ctx, children, passes[0], killed); err != nil {
				return r, err
			}
		} else {
			if err := w.waitReady(ctx, names, 2, children[0]); err != nil {
				return r, err
			}
			for _, name := range names {
				r.handover = max(r.handover, w.readyAt(name, 2).Sub(killed))
			}
		}
	}
	for _, c := range children {
		s, err := c.stats("passes")
		if err != nil {
			return r, err
		}
		passes = append(passes, s.Passes)
	}
	r.passes, r.overlaps = overlaps(passes)
	if k > 1 {
		r.takenFirst, r.taken = takenAfter(passes, killed)
	}
	return r, nil
}

// waitTaken waits until every object whose last pass before killed was in
// victim, the killed replica's passes, has had a pass by one of children.
func waitTaken(ctx context.Context, children []*child, victim []passRecord, killed time.Time) error {
	for {
		logs := [][]passRecord{victim}
		for _, c := range children {
			s, err := c.stats("passes")
			if err != nil {
				return err
			}
			logs = append(logs, s.Passes)
		}
		if _, all := takenAfter(logs, killed); all > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// takenAfter returns the times from killed to the first pass by another
// replica of an object whose last pass before killed was by the killed
// replica, whose passes come first in byReplica, and to such a pass of
// every one of them (-1 when one had none).
func takenAfter(byReplica [][]passRecord, killed time.Time) (first, all time.Duration) {
	at := killed.UnixNano()
	type last struct {
		replica int
		start   int64
	}
	before := map[string]last{}
	for i, ps := range byReplica {
		for _, p := range ps {
			if l, ok := before[p.Object]; p.Start < at && (!ok || p.Start > l.start) {
				before[p.Object] = last{i, p.Start}
			}
		}
	}
	firstOf := map[string]int64{}
	for _, ps := range byReplica[1:] {
		for _, p := range ps {
			if l, ok := before[p.Object]; ok && l.replica == 0 && p.Start >= at {
				if f, ok := firstOf[p.Object]; !ok || p.Start < f {
					firstOf[p.Object] = p.Start
				}
			}
		}
	}
	earliest, worst := int64(-1), int64(0)
	for obj, l := range before {
		if l.replica != 0 {
			continue
		}
		f, ok := firstOf[obj]
		if !ok {
			return -1, -1
		}
		if earliest < 0 || f-at < earliest {
			earliest = f - at
		}
		worst = max(worst, f-at)
	}
	return time.Duration(earliest), time.Duration(worst)
}

// pickVictim returns the index of the replica to kill: the leader when
// leader is set, else the last replica that does not lead. It waits for a
// replica to lead, as one does once the objects are labelled.
func pickVictim(children []*child, leader bool) (int, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		lead := -1
		for i, c := range children {
			s, err := c.stats("stats")
			if err != nil {
				return 0, err
			}
			if s.Leader {
				lead = i
			}
		}
		switch {
		case lead >= 0 && leader:
			return lead, nil
		case lead >= 0:
			for i := len(children) - 1; i >= 0; i-- {
				if i != lead {
					return i, nil
				}
			}
		case time.Now().After(deadline):
			return 0, errors.New("no replica leads")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// overlaps counts the passes of the replicas (one list each) and the
// objects whose passes by two replicas overlapped in time.
func overlaps(byReplica [][]passRecord) (passes, objects int) {
	type span struct {
		replica    int
		start, end int64
	}
	spans := map[string][]span{}
	for i, ps := range byReplica {
		for _, p := range ps {
			spans[p.Object] = append(spans[p.Object], span{i, p.Start, p.End})
			passes++
		}
	}
	for _, ss := range spans {
	found:
		for i := range ss {
			for k := i + 1; k < len(ss); k++ {
				if ss[i].replica != ss[k].replica && ss[i].start < ss[k].end && ss[k].start < ss[i].end {
					objects++
					break found
				}
			}
		}
	}
	return passes, objects
}
