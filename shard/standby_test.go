package shard_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/shard"
)

// seenPass is a pass of an object and the member its label named then.
type seenPass struct {
	member, labelled string
	start            time.Time
}

// ownerLog records, for each pass, the member the object's label named
// when the pass read it.
type ownerLog struct {
	mu     sync.Mutex
	passes map[types.NamespacedName][]seenPass
}

func (l *ownerLog) record(key types.NamespacedName, p seenPass) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.passes == nil {
		l.passes = map[types.NamespacedName][]seenPass{}
	}
	l.passes[key] = append(l.passes[key], p)
}

// saw reports whether member has run a pass of key since since that found
// it labelled for labelled.
func (l *ownerLog) saw(key types.NamespacedName, member, labelled string, since time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range l.passes[key] {
		if p.member == member && p.labelled == labelled && !p.start.Before(since) {
			return true
		}
	}
	return false
}

// ran returns the members that ran a pass of key since since.
func (l *ownerLog) ran(key types.NamespacedName, since time.Time) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, p := range l.passes[key] {
		if !p.start.Before(since) {
			out = append(out, p.member)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// setupStandby registers setupPlain's controller (setupEngine's, with
// engine) with the member's takeovers wired in, recording in seen the
// label each pass found.
func (r *ring) setupStandby(seen *ownerLog, engine bool) func(ctrl.Manager, *shard.Member, string) error {
	return func(mgr ctrl.Manager, m *shard.Member, name string) error {
		record := func(w *testapi.Widget, start time.Time) {
			seen.record(client.ObjectKeyFromObject(w), seenPass{member: name, labelled: w.Labels[m.ShardLabel()], start: start})
		}
		if engine {
			return bosun.ControllerManagedBy[*testapi.Widget](mgr).
				For(nil, builder.WithPredicates(m.Predicate())).
				WatchesRawSource(m.Takeovers()).
				WithOptions(m.ControllerOptions(controller.Options{MaxConcurrentReconciles: workers})).
				Complete(r.engine(name, record))
		}
		return ctrl.NewControllerManagedBy(mgr).Named("widgets-"+name).
			For(&testapi.Widget{}, builder.WithPredicates(m.Predicate())).
			WatchesRawSource(m.Takeovers()).
			WithOptions(controller.Options{NeedLeaderElection: ptr.To(false), MaxConcurrentReconciles: workers}).
			Complete(m.Wrap(r.plain(mgr, name, record)))
	}
}

// TestStandbyTakesOver runs a ring of three members with Options.Standby
// and crashes one while the sharder can write no label: each object of
// the crashed member gets a pass by its standby, which finds it still
// labelled for the crashed member, once its Lease has expired. The member
// comes back before the labels move and takes none of those objects; once
// the sharder can write again, they are labelled for their standbys, and
// the ring settles with the member back. No object is ever reconciled by
// two members at once. It runs with a controller-runtime reconciler
// behind Member.Wrap and with bosun's engine behind the queue of
// Member.ControllerOptions.
func TestStandbyTakesOver(t *testing.T) {
	t.Run("plain", func(t *testing.T) { testStandbyTakesOver(t, false) })
	t.Run("engine", func(t *testing.T) { testStandbyTakesOver(t, true) })
}

func testStandbyTakesOver(t *testing.T, engine bool) {
	r := newRing(t)
	r.createWidgets(objects)
	start := time.Now()
	seen := &ownerLog{}
	var frozen atomic.Bool
	opts := replicaOptions{shard: func(o *shard.Options) { o.Standby = true }, setup: r.setupStandby(seen, engine)}
	sharderOpts := opts
	sharderOpts.patch = func(obj client.Object, _ client.Patch) error {
		if _, ok := obj.(*metav1.PartialObjectMetadata); ok && frozen.Load() {
			return errors.New("the test keeps the sharder from writing labels")
		}
		return nil
	}
	s0 := r.startWith("s0", sharderOpts)
	waitElected(t, s0)
	r.startWith("s1", opts)
	s2 := r.startWith("s2", opts)
	members := []string{"s0", "s1", "s2"}
	shares := r.converge(members, start)
	t.Logf("3 members: %v", shares)

	// Every object has a standby, another member, and the labels that put
	// it in the caches of both.
	r.waitStandbys(members)
	standbyLabel := "standby.shard.bosun.dev/" + r.name

	frozen.Store(true)
	held, _ := r.crashAwaitStandbys(seen, s2)
	crashed := held["s2"]

	// s2 comes back while its objects are still labelled for it: they are
	// its standbys' now.
	back := time.Now()
	r.startWith("s2", opts)
	var lease coordinationv1.Lease
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := r.cp.Client.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: shard.LeaseName(r.name, "s2")}, &lease); err != nil {
			return err
		}
		if ptr.Deref(lease.Spec.HolderIdentity, "") != "s2" || !lease.Spec.RenewTime.After(back) {
			return errors.New("s2 has not renewed its Lease since it came back")
		}
		return nil
	})
	// A few of the standbys' own passes (every requeue) later, s2 has run
	// none of them.
	since := time.Now()
	bosuntest.Eventually(t, func(context.Context) error {
		for _, w := range crashed {
			if sb := w.Labels[standbyLabel]; !seen.saw(client.ObjectKeyFromObject(&w), sb, "s2", since) {
				return fmt.Errorf("%s has had no pass by its standby %s since s2 came back", w.Name, sb)
			}
		}
		return nil
	}, bosuntest.Timeout(time.Minute))
	for _, w := range crashed {
		if ran := seen.ran(client.ObjectKeyFromObject(&w), back); slices.Contains(ran, "s2") {
			t.Errorf("%s, taken over by %s, had a pass by s2 after it came back: %v", w.Name, w.Labels[standbyLabel], ran)
		}
	}
	now, _, err := r.labelled(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(now["s2"]) < len(crashed) {
		t.Errorf("the sharder, kept from writing labels, moved %d objects of s2", len(crashed)-len(now["s2"]))
	}

	// The sharder writes again: the labels follow the standbys, and the
	// ring settles with s2 back.
	frozen.Store(false)
	shares = r.converge(members, back)
	t.Logf("settled: %v", shares)
	checkNoOverlap(t, r.j)
}

// waitStandbys waits until every object has a standby, another of
// members, and the presence labels that put it in the caches of both.
func (r *ring) waitStandbys(members []string) {
	r.t.Helper()
	standbyLabel := "standby.shard.bosun.dev/" + r.name
	presence := func(member string) string { return r.name + ".in.shard.bosun.dev/" + member }
	bosuntest.Eventually(r.t, func(ctx context.Context) error {
		byMember, _, err := r.labelled(ctx)
		if err != nil {
			return err
		}
		for owner, ws := range byMember {
			for _, w := range ws {
				sb := w.Labels[standbyLabel]
				if sb == owner || !slices.Contains(members, sb) {
					return fmt.Errorf("%s of %s has the standby %q", w.Name, owner, sb)
				}
				for _, m := range members {
					if _, ok := w.Labels[presence(m)]; ok != (m == owner || m == sb) {
						return fmt.Errorf("%s of %s, standby %s: presence label of %s %v", w.Name, owner, sb, m, ok)
					}
				}
			}
		}
		return nil
	})
}

// TestStandbyTakesOverFromDeadLeader crashes the member that runs the
// sharder, in a ring whose other members can never lead: no sharder is
// left to close its Lease, and its standbys close it themselves once it
// has expired, and take its objects over. No object is ever reconciled by
// two members at once.
func TestStandbyTakesOverFromDeadLeader(t *testing.T) {
	r, seen, opts, s0 := startStandbyRing(t)
	// The others' leader election reaches no API server: they never lead.
	noLeader := opts
	noLeader.manager = func(o *ctrl.Options) {
		cfg := rest.CopyConfig(r.cp.Config)
		cfg.Host = "https://127.0.0.1:1"
		o.LeaderElectionConfig = cfg
		// The manager adds the Lease's types to its scheme when given a
		// leader election config: a scheme of its own, not the one the
		// running replicas read.
		o.Scheme = controlplane.NewScheme()
		if err := testapi.AddToScheme(o.Scheme); err != nil {
			t.Fatal(err)
		}
	}
	r.startWith("s1", noLeader)
	r.startWith("s2", noLeader)
	members := []string{"s0", "s1", "s2"}
	shares := r.converge(members, time.Time{})
	t.Logf("3 members: %v", shares)
	r.waitStandbys(members)
	held, killed := r.crashAwaitStandbys(seen, s0)
	var lease coordinationv1.Lease
	if err := r.cp.Client.Get(t.Context(), client.ObjectKey{Namespace: r.ns, Name: shard.LeaseName(r.name, "s0")}, &lease); err != nil {
		t.Fatal(err)
	}
	if h := ptr.Deref(lease.Spec.HolderIdentity, ""); h != "" || lease.Annotations["shard.bosun.dev/closed"] == "" {
		t.Errorf("s0's Lease: holder %q, annotations %v; want it closed", h, lease.Annotations)
	}
	for _, rep := range []string{"s1", "s2"} {
		for _, w := range held[rep] {
			if ran := seen.ran(client.ObjectKeyFromObject(&w), killed); slices.Contains(ran, "s0") {
				t.Errorf("%s of %s had a pass by s0 after it crashed", w.Name, rep)
			}
		}
	}
	checkNoOverlap(t, r.j)
}

// TestStandbyCleanStopBesideAJoin stops a member with standbys cleanly
// while another joins, so that the sharder changes the standbys of the
// stopping member's objects as it closes its Lease: the standbys take its
// objects over and the ring settles on the members left, and no object is
// ever reconciled by two members at once.
func TestStandbyCleanStopBesideAJoin(t *testing.T) {
	r, seen, opts, _ := startStandbyRing(t)
	r.startWith("s1", opts)
	s2 := r.startWith("s2", opts)
	members := []string{"s0", "s1", "s2"}
	r.converge(members, time.Time{})
	r.waitStandbys(members)
	held, _, err := r.labelled(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	r.startWith("s3", opts)
	s2.stop()
	members = []string{"s0", "s1", "s3"}
	shares := r.converge(members, stopped)
	r.waitStandbys(members)
	t.Logf("s2 stopped as s3 joined: %v; s2 held %d", shares, len(held["s2"]))
	for _, w := range held["s2"] {
		if ran := seen.ran(client.ObjectKeyFromObject(&w), stopped); len(ran) == 0 {
			t.Errorf("%s, of s2, had no pass after s2 stopped", w.Name)
		}
	}
	checkNoOverlap(t, r.j)
}

// crashAwaitStandbys crashes rep and waits until each object it held has
// had a pass by its standby that found it still labelled for rep. It
// returns the objects each member held before, and when rep crashed.
func (r *ring) crashAwaitStandbys(seen *ownerLog, rep *replica) (map[string][]testapi.Widget, time.Time) {
	t := r.t
	t.Helper()
	standbyLabel := "standby.shard.bosun.dev/" + r.name
	held, _, err := r.labelled(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	crashed := held[rep.name]
	killed := time.Now()
	rep.kill()
	bosuntest.Eventually(t, func(context.Context) error {
		for _, w := range crashed {
			if sb := w.Labels[standbyLabel]; !seen.saw(client.ObjectKeyFromObject(&w), sb, rep.name, killed) {
				return fmt.Errorf("%s, of %s, has had no pass by its standby %s", w.Name, rep.name, sb)
			}
		}
		return nil
	}, bosuntest.Timeout(time.Minute), bosuntest.Interval(20*time.Millisecond))
	t.Logf("%s crashed; its %d objects were taken over by their standbys in %s (Lease duration %s)",
		rep.name, len(crashed), time.Since(killed).Round(time.Millisecond), leaseDuration)
	return held, killed
}

// startStandbyRing makes a ring of objects Widgets whose members have
// standbys and run setupStandby's controller-runtime reconciler, recording
// in seen, and starts its first member, s0, once it leads.
func startStandbyRing(t *testing.T) (r *ring, seen *ownerLog, opts replicaOptions, s0 *replica) {
	r = newRing(t)
	r.createWidgets(objects)
	seen = &ownerLog{}
	opts = replicaOptions{shard: func(o *shard.Options) { o.Standby = true }, setup: r.setupStandby(seen, false)}
	s0 = r.startWith("s0", opts)
	waitElected(t, s0)
	return r, seen, opts, s0
}
