package shard_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/shard"
)

// waitElected waits until rep's manager won the leader election: its
// sharder runs.
func waitElected(t *testing.T, rep *replica) {
	t.Helper()
	select {
	case <-rep.mgr.Elected():
	case <-time.After(time.Minute):
		t.Fatalf("replica %s was not elected within a minute", rep.name)
	}
}

// setupBusy registers a controller, behind the member's Wrap, whose
// passes take 100ms and come back 200ms after they end, so that every
// object is being reconciled most of the time. It records the passes of
// the objects found in the replica's cache: the ones it works on.
func (r *ring) setupBusy(mgr ctrl.Manager, m *shard.Member, name string) error {
	c := mgr.GetClient()
	rec := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		start := time.Now()
		var w testapi.Widget
		if err := c.Get(ctx, req.NamespacedName, &w); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		time.Sleep(100 * time.Millisecond)
		r.j.record(req.NamespacedName, pass{member: name, start: start, end: time.Now()})
		return reconcile.Result{RequeueAfter: 200 * time.Millisecond}, nil
	})
	return ctrl.NewControllerManagedBy(mgr).Named("widgets-"+name).
		For(&testapi.Widget{}, builder.WithPredicates(m.Predicate())).
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false), MaxConcurrentReconciles: workers}).
		Complete(m.Wrap(rec))
}

// TestNoOverlapAfterPartitionHeals cuts a member off from the API server
// (its connections, watches included, closed; new ones refused) for
// longer than its Lease, so that the sharder gives its objects to the
// other member, and then lets it back. The member renews its Lease at
// once, while its cache, reconnecting on client-go's backoff, still shows
// it the objects it lost: no object may be reconciled by both members at
// once, then or when the objects are shared out again.
func TestNoOverlapAfterPartitionHeals(t *testing.T) {
	r := newRing(t)
	r.createWidgets(40)
	start := time.Now()
	r0 := r.startWith("r0", replicaOptions{setup: r.setupBusy})
	waitElected(t, r0)
	p := newPartition(t, r.cp.Config)
	r.startWith("r1", replicaOptions{config: p.config(r.cp.Config), setup: r.setupBusy})
	shares := r.converge([]string{"r0", "r1"}, start)
	t.Logf("2 replicas: %v", shares)

	cut := time.Now()
	p.cut(refuse)
	shares = r.converge([]string{"r0"}, cut)
	t.Logf("r1 cut off; its objects moved to r0 in %s: %v", time.Since(cut).Round(time.Millisecond), shares)
	// A longer partition: client-go's reflector of r1 backs off further,
	// and its cache stays behind for longer after the partition heals.
	bosuntest.Eventually(t, func(ctx context.Context) error {
		byMember, _, err := r.labelled(ctx)
		if err != nil {
			return err
		}
		for _, w := range byMember["r0"] {
			if n := r.j.count(client.ObjectKeyFromObject(&w), "r0", cut); n < 10 {
				return fmt.Errorf("%s has had %d passes by r0 since the cut, want 10", w.Name, n)
			}
		}
		return nil
	}, bosuntest.Timeout(time.Minute))

	healed := time.Now()
	p.cut(forward)
	shares = r.converge([]string{"r0", "r1"}, healed)
	t.Logf("r1 back; shared out again in %s: %v", time.Since(healed).Round(time.Millisecond), shares)
	checkNoOverlap(t, r.j)
}

// blocked records the passes that block until their context ends.
type blocked struct {
	mu     sync.Mutex
	passes map[string]*blockedPass
}

// blockedPass is one pass of an object by a member.
type blockedPass struct {
	member string
	start  time.Time
	// ended is when the pass's context was done, and why.
	ended time.Time
	cause error
}

// setup registers a controller, behind the member's Wrap, whose passes
// wait for their context to end.
func (b *blocked) setup(mgr ctrl.Manager, m *shard.Member, name string) error {
	rec := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		return b.record(ctx, name, req)
	})
	return ctrl.NewControllerManagedBy(mgr).Named("widgets-"+name).
		For(&testapi.Widget{}, builder.WithPredicates(m.Predicate())).
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false), MaxConcurrentReconciles: workers}).
		Complete(m.Wrap(rec))
}

// blockStep is a step of bosun's engine whose Do waits, as the passes
// of blocked.setup do, for its context to end.
type blockStep struct{ b *blocked }

func (blockStep) Name() string { return "block" }

func (s blockStep) Do(ctx context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	_, err := s.b.record(ctx, req.Controller, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(req.Object)})
	return ctrl.Result{}, err
}

// setupEngine is setup with bosun's engine: the member's Wrap around it
// through the Builder's WrapReconciler.
func (b *blocked) setupEngine(mgr ctrl.Manager, m *shard.Member, name string) error {
	r := &bosun.Reconciler[*testapi.Widget]{Name: name, Steps: []bosun.Step[*testapi.Widget]{blockStep{b: b}}}
	return bosun.ControllerManagedBy[*testapi.Widget](mgr).Named("widgets-"+name).
		For(&testapi.Widget{}, builder.WithPredicates(m.Predicate())).
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false), MaxConcurrentReconciles: workers}).
		WrapReconciler(m.Wrap).
		Complete(r)
}

// record runs a pass of req on the member name that waits for its
// context to end, and records when it ended and why.
func (b *blocked) record(ctx context.Context, name string, req reconcile.Request) (reconcile.Result, error) {
	p := &blockedPass{member: name, start: time.Now()}
	b.mu.Lock()
	b.passes[name+"/"+req.Name] = p
	b.mu.Unlock()
	<-ctx.Done()
	b.mu.Lock()
	p.ended, p.cause = time.Now(), context.Cause(ctx)
	b.mu.Unlock()
	return reconcile.Result{}, nil
}

// of returns a copy of member's passes by object name.
func (b *blocked) of(member string) map[string]blockedPass {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]blockedPass{}
	for _, p := range b.passes {
		if p.member == member {
			out[fmt.Sprint(p.start.UnixNano())] = *p
		}
	}
	return out
}

// TestPassCancelledBeforeLeaseExpires runs passes that wait for their
// context, on a member that is then cut off from the API server: their
// context is cancelled, with shard.ErrLeaseLost, before the member's
// Lease expires and the sharder may give its objects away.
func TestPassCancelledBeforeLeaseExpires(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(*blocked) func(ctrl.Manager, *shard.Member, string) error
	}{
		{name: "Wrap", setup: func(b *blocked) func(ctrl.Manager, *shard.Member, string) error { return b.setup }},
		{name: "bosun engine", setup: func(b *blocked) func(ctrl.Manager, *shard.Member, string) error { return b.setupEngine }},
	} {
		t.Run(tc.name, func(t *testing.T) { testPassCancelledBeforeLeaseExpires(t, tc.setup) })
	}
}

func testPassCancelledBeforeLeaseExpires(t *testing.T, setup func(*blocked) func(ctrl.Manager, *shard.Member, string) error) {
	r := newRing(t)
	b := &blocked{passes: map[string]*blockedPass{}}
	r0 := r.startWith("r0", replicaOptions{setup: setup(b)})
	waitElected(t, r0)
	p := newPartition(t, r.cp.Config)
	r.startWith("r1", replicaOptions{config: p.config(r.cp.Config), setup: setup(b)})
	bosuntest.Eventually(t, func(context.Context) error {
		if n := gauge(t, "bosun_shard_members", map[string]string{"ring": r.name}); n != 2 {
			return fmt.Errorf("the sharder sees %v members, want 2", n)
		}
		return nil
	}, bosuntest.Timeout(time.Minute))
	// Made once both members are alive, the objects are shared out at
	// once, without a drain, which the blocked passes would hold up. The
	// last is named to hash onto r1, which would otherwise get none of
	// them in one run of 256.
	r.createWidgets(workers - 1)
	onR1 := shard.NewRing([]string{"r0", "r1"}, 0)
	for i := 0; ; i++ {
		name := fmt.Sprintf("r1-%d", i)
		if onR1.Owner(shard.ByName(r.ns, name)) != "r1" {
			continue
		}
		w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: name}, Spec: testapi.WidgetSpec{Value: 1, Divisor: 1}}
		if err := r.cp.Client.Create(t.Context(), w); err != nil {
			t.Fatal(err)
		}
		break
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		byMember, _, err := r.labelled(ctx)
		if err != nil {
			return err
		}
		if len(byMember["r1"]) == 0 {
			return fmt.Errorf("no Widget labelled for r1: %v", byMember)
		}
		if got, want := len(b.of("r1")), len(byMember["r1"]); got != want {
			return fmt.Errorf("r1 runs %d passes, holds %d Widgets", got, want)
		}
		return nil
	}, bosuntest.Timeout(time.Minute))

	p.cut(refuse)
	var lease coordinationv1.Lease
	if err := r.cp.Client.Get(t.Context(), client.ObjectKey{Namespace: r.ns, Name: shard.LeaseName(r.name, "r1")}, &lease); err != nil {
		t.Fatal(err)
	}
	expires := lease.Spec.RenewTime.Add(time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second)
	var passes map[string]blockedPass
	bosuntest.Eventually(t, func(context.Context) error {
		passes = b.of("r1")
		for _, p := range passes {
			if p.ended.IsZero() {
				return errors.New("a pass of r1 still runs")
			}
		}
		return nil
	}, bosuntest.Timeout(time.Minute))
	for _, p := range passes {
		if !errors.Is(p.cause, shard.ErrLeaseLost) {
			t.Errorf("a pass of r1 ended with %v, want %v", p.cause, shard.ErrLeaseLost)
		}
		if !p.ended.Before(expires) {
			t.Errorf("a pass of r1 was cancelled at %s, after its Lease expired at %s", p.ended.Format(time.StampMilli), expires.Format(time.StampMilli))
		}
	}
	var last time.Time
	for _, p := range passes {
		if p.ended.After(last) {
			last = p.ended
		}
	}
	t.Logf("%d passes of r1 cancelled, the last %s before its Lease expired", len(passes), expires.Sub(last).Round(time.Millisecond))
}

// TestUnacknowledgedDrainHandsOver runs a member that never lets go of
// the objects it is asked to (its label patches are refused) and makes
// another join: after the drain timeout the sharder evicts the first
// member, which stops renewing its Lease; once the Lease has expired its
// objects move, and it comes back for a share of its own. No object is
// reconciled by two members at once.
func TestUnacknowledgedDrainHandsOver(t *testing.T) {
	r := newRing(t)
	r.createWidgets(objects / 4)
	drainTimeout := func(o *shard.Options) { o.DrainTimeout = 4 * time.Second }
	letGo := []byte(`"` + shard.LabelPrefix + r.name + `":null`)
	refused := &atomic.Int64{}
	start := time.Now()
	r0 := r.startWith("r0", replicaOptions{shard: drainTimeout, patch: func(obj client.Object, p client.Patch) error {
		if data, err := p.Data(obj); err == nil && bytes.Contains(data, letGo) {
			refused.Add(1)
			return errors.New("refused: the member cannot let objects go")
		}
		return nil
	}})
	waitElected(t, r0)
	r.converge([]string{"r0"}, start)
	timeouts := counter(t, "bosun_shard_drain_timeouts_total", map[string]string{"ring": r.name, "member": "r0"})

	joined := time.Now()
	r.startWith("r1", replicaOptions{shard: drainTimeout})
	shares := r.converge([]string{"r0", "r1"}, joined, bosuntest.Timeout(2*time.Minute))
	t.Logf("r1 joined; the objects were shared out in %s: %v", time.Since(joined).Round(time.Millisecond), shares)
	if refused.Load() == 0 {
		t.Error("r0 was never asked to let an object go: the test tested nothing")
	}
	if got := counter(t, "bosun_shard_drain_timeouts_total", map[string]string{"ring": r.name, "member": "r0"}) - timeouts; got == 0 {
		t.Errorf("%s of r0 did not grow", "bosun_shard_drain_timeouts_total")
	}
	checkNoOverlap(t, r.j)
}

// TestReturnLeavesOutClosedTenure cuts a member off for longer than its
// Lease and holds back one of the sharder's patches that move its objects
// to the other member; the member comes back while that patch is on its
// way. The object is still labelled for the member on the API server, but
// in the tenure the sharder closed: the member must not reconcile it,
// since the sharder has already given it away. Once the patch lands, the
// objects are shared out again with no object reconciled by both.
func TestReturnLeavesOutClosedTenure(t *testing.T) {
	r := newRing(t)
	r.createWidgets(40)
	toR0 := []byte(`"` + shard.LabelPrefix + r.name + `":"r0"`)
	var (
		holding atomic.Bool
		held    atomic.Pointer[string] // the object whose move is held back
		release = make(chan struct{})
	)
	start := time.Now()
	r0 := r.startWith("r0", replicaOptions{patch: func(obj client.Object, p client.Patch) error {
		data, err := p.Data(obj)
		if err != nil || !holding.Load() || !bytes.Contains(data, toR0) {
			return nil
		}
		if name := obj.GetName(); held.CompareAndSwap(nil, &name) {
			select {
			case <-release:
			case <-t.Context().Done():
			}
		}
		return nil
	}})
	waitElected(t, r0)
	// The member's reads of the held object from the API server, after
	// it came back: how it checks an object its list left out.
	var healed, readBack atomic.Bool
	p := newPartition(t, r.cp.Config)
	cfg := p.config(r.cp.Config)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if name := held.Load(); name != nil && healed.Load() && req.Method == http.MethodGet &&
				strings.HasSuffix(req.URL.Path, "/widgets/"+*name) {
				readBack.Store(true)
			}
			return rt.RoundTrip(req)
		})
	}
	r.startWith("r1", replicaOptions{config: cfg})
	r.converge([]string{"r0", "r1"}, start)

	holding.Store(true)
	p.cut(refuse)
	bosuntest.Eventually(t, func(context.Context) error {
		if held.Load() == nil {
			return errors.New("the sharder has not moved an object of r1 yet")
		}
		return nil
	}, bosuntest.Timeout(time.Minute))
	name := *held.Load()
	key := client.ObjectKey{Namespace: r.ns, Name: name}
	// Every other object of r1 has moved: the held one is all r1 has on
	// the API server, labelled in the tenure the sharder closed.
	bosuntest.Eventually(t, func(ctx context.Context) error {
		byMember, _, err := r.labelled(ctx)
		if err != nil {
			return err
		}
		if ws := byMember["r1"]; len(ws) != 1 || ws[0].Name != name {
			return fmt.Errorf("%d Widgets labelled r1, want only %s", len(ws), name)
		}
		return nil
	})

	now := time.Now()
	healed.Store(true)
	p.cut(forward)
	// r1 renews its Lease and decides on the object: it either reads it
	// from the API server (and leaves it), or reconciles it.
	bosuntest.Eventually(t, func(context.Context) error {
		if readBack.Load() || r.j.reconciledBy(key, "r1", now) {
			return nil
		}
		return fmt.Errorf("r1 has neither read nor reconciled %s since it came back", name)
	}, bosuntest.Timeout(time.Minute))
	if n := r.j.count(key, "r1", now); n > 0 {
		t.Errorf("r1, back, reconciled %s %d times while the sharder's move of it to r0 was on its way", name, n)
	}
	close(release)

	shares := r.converge([]string{"r0", "r1"}, time.Now(), bosuntest.Timeout(2*time.Minute))
	t.Logf("r1 back; shared out again: %v", shares)
	checkNoOverlap(t, r.j)
}

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
