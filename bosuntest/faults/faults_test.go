package faults_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/faults"
	"github.com/bosunkit/bosun/internal/testapi"
)

func TestCrashAfterEveryWrite(t *testing.T) {
	for _, during := range []bool{false, true} {
		t.Run(fmt.Sprintf("during=%v", during), func(t *testing.T) {
			cp := shared.ControlPlane(t)
			st := &store{}
			report := faults.CrashEveryWrite(t, cp, scenario(st, 1), faults.CrashOptions{During: during})
			t.Logf("report: %+v", report)
			if report.Points < 5 {
				t.Errorf("the fault-free run made %d writes; want at least 5 (claim, child, pending mark, external create, outcome, status, ...)", report.Points)
			}
			if report.Crashed == 0 || report.Converged != report.Crashed {
				t.Errorf("crashed %d trials, %d converged; want every crashed trial to converge", report.Crashed, report.Converged)
			}
			if report.Duplicates != 0 || report.Leaks != 0 {
				t.Errorf("duplicates %d, leaks %d; want 0", report.Duplicates, report.Leaks)
			}
		})
	}
}

// TestCrashPointIsExact shows that a process dies right after the chosen
// write and that nothing it does afterwards reaches the API server or the
// external system.
func TestCrashPointIsExact(t *testing.T) {
	cp := shared.ControlPlane(t)
	st := &store{}
	ns := bosuntest.Namespace(t, cp.Client)
	isCreate := func(c faults.Call) bool { return c.External && c.Verb == "create" }
	p := faults.Start(t, cp, faults.Options{Namespace: ns, Plan: faults.Plan{Crash: faults.CrashPoint{After: 1, Match: isCreate}}}, setup(st))
	if _, err := createWidgets(1)(t.Context(), cp.Client, ns); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Crashed():
	case <-time.After(30 * time.Second):
		t.Fatal("the process did not crash at its first external create")
	}
	calls := p.Calls()
	last := calls[len(calls)-1]
	for _, c := range calls {
		if c.AfterCrash {
			continue
		}
		last = c
	}
	if !isCreate(last) {
		t.Errorf("last call before the crash: %s; want the external create", last)
	}
	if st.creates != 1 {
		t.Errorf("external creates: %d; want 1", st.creates)
	}
	// The dead process writes nothing: the Widget stays without its
	// outcome recorded, whatever the old manager's goroutines try.
	w := &testapi.Widget{}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		return cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "w0"}, w)
	})
	if _, ok := w.Annotations["bosun.dev/external-create-succeeded"]; ok {
		t.Errorf("the outcome of the create was recorded by a dead process: %v", w.Annotations)
	}
	if n := p.Points(); n != 1 {
		t.Errorf("points %d; want 1", n)
	}
}

func TestAPIFaults(t *testing.T) {
	cp := shared.ControlPlane(t)
	st := &store{}
	ns := bosuntest.Namespace(t, cp.Client)
	logs := &bosuntest.LogRecorder{}
	plan := faults.Plan{Seed: 7, Rules: []faults.Rule{
		{Fault: faults.Conflict, Rate: 0.3},
		{Fault: faults.InternalError, Rate: 0.05},
		{Fault: faults.ResponseLost, Rate: 0.05},
		{Fault: faults.TooManyRequests, Rate: 0.05},
		{Fault: faults.Timeout, Rate: 0.02},
	}, TimeoutDelay: 100 * time.Millisecond}
	p := faults.Start(t, cp, faults.Options{Namespace: ns, Plan: plan, Logs: logs}, setup(st))
	objs, err := createWidgets(8)(t.Context(), cp.Client, ns)
	if err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error { return converged(st)(ctx, cp.Client, ns, objs) }, bosuntest.Timeout(time.Minute))
	stats := p.Stats()
	t.Logf("stats: %+v", stats)
	for _, f := range []faults.Fault{faults.Conflict, faults.ResponseLost} {
		if stats.Faults[f] == 0 {
			t.Errorf("no %s injected", f)
		}
	}
	if n, _ := duplicates(st)(t.Context(), cp.Client, ns, objs); n != 0 {
		t.Errorf("%d Widgets with duplicate external resources", n)
	}
}

// TestFaultsRepeatWithTheSeed shows that a seed decides which requests
// get a fault: two processes with the same plan fail the same requests.
func TestFaultsRepeatWithTheSeed(t *testing.T) {
	cp := shared.ControlPlane(t)
	plan := faults.Plan{Seed: 42, Rules: []faults.Rule{{Fault: faults.InternalError, Rate: 0.5, Verbs: []string{"create"}}}}
	run := func() []bool {
		ns := bosuntest.Namespace(t, cp.Client)
		p := faults.Start(t, cp, faults.Options{Namespace: ns, Plan: plan}, nil)
		defer p.Stop()
		c := p.Manager().GetClient()
		var got []bool
		for i := range 12 {
			err := c.Create(t.Context(), &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("s%d", i)}})
			got = append(got, apierrors.IsInternalError(err))
		}
		return got
	}
	first, second := run(), run()
	if fmt.Sprint(first) != fmt.Sprint(second) {
		t.Errorf("same seed, different faults:\n%v\n%v", first, second)
	}
	failed := 0
	for _, f := range first {
		if f {
			failed++
		}
	}
	if failed == 0 || failed == len(first) {
		t.Errorf("%d of %d creates failed at rate 0.5", failed, len(first))
	}
}

func TestWatchFaults(t *testing.T) {
	cp := shared.ControlPlane(t)
	st := &store{}
	ns := bosuntest.Namespace(t, cp.Client)
	plan := faults.Plan{Seed: 3, Watch: faults.WatchFaults{Drop: 0.3, Delay: 50 * time.Millisecond, Coalesce: 100 * time.Millisecond, Relist: 3 * time.Second}}
	p := faults.Start(t, cp, faults.Options{Namespace: ns, Plan: plan}, setup(st))
	objs, err := createWidgets(6)(t.Context(), cp.Client, ns)
	if err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error { return converged(st)(ctx, cp.Client, ns, objs) }, bosuntest.Timeout(time.Minute))
	// The objects may converge before a relist is due, or with every loss
	// made good by a later event: the kit ends a watch only Relist after a
	// loss that nothing made good. Label a Widget every few seconds until
	// one of those events is lost and a relist brings it.
	touches := 0
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if n := p.Stats().Relists; n > 0 {
			return nil
		}
		w := objs[touches%len(objs)].(*testapi.Widget)
		touches++
		if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			return err
		}
		if w.Labels == nil {
			w.Labels = map[string]string{}
		}
		w.Labels["touched"] = strconv.Itoa(touches)
		if err := cp.Client.Update(ctx, w); err != nil {
			return err
		}
		return fmt.Errorf("no relist forced yet")
	}, bosuntest.Interval(4*time.Second), bosuntest.Timeout(2*time.Minute))
	stats := p.Stats()
	t.Logf("stats: %+v", stats)
	if stats.Dropped == 0 {
		t.Errorf("dropped %d events; want some", stats.Dropped)
	}
	// After a relist the objects are still converged.
	if err := converged(st)(t.Context(), cp.Client, ns, objs); err != nil {
		t.Errorf("after relists: %v", err)
	}
}

// TestLostOwnWritesDoNotHoldObjects: a watch that loses every event of the
// Widgets and never relists leaves the cache at the versions it first
// listed. The engine, finding its own writes missing from the cache, waits
// StaleCacheLimit and then reads from the API server, so the Widgets still
// converge instead of waiting for a relist that never comes.
func TestLostOwnWritesDoNotHoldObjects(t *testing.T) {
	cp := shared.ControlPlane(t)
	st := &store{}
	ns := bosuntest.Namespace(t, cp.Client)
	// Made before the operator starts, so the cache learns them by its
	// first list, which no fault touches.
	objs, err := createWidgets(3)(t.Context(), cp.Client, ns)
	if err != nil {
		t.Fatal(err)
	}
	plan := faults.Plan{Seed: 4, Watch: faults.WatchFaults{Resources: []string{"widgets"}, Drop: 1}}
	p := faults.Start(t, cp, faults.Options{Namespace: ns, Plan: plan}, setup(st))
	bosuntest.Eventually(t, func(ctx context.Context) error { return converged(st)(ctx, cp.Client, ns, objs) }, bosuntest.Timeout(90*time.Second))
	if stats := p.Stats(); stats.Dropped == 0 || stats.Relists != 0 {
		t.Errorf("dropped %d events in %d relists; want some dropped and no relist", stats.Dropped, stats.Relists)
	}
	st.mu.Lock()
	n := st.creates
	st.mu.Unlock()
	if n != len(objs) {
		t.Errorf("%d creates in the store; want %d", n, len(objs))
	}
}

// TestWatchFaultsRelistOnlyWhatIsLost: a Lease renewed every 250ms,
// watched through a process whose Lease events are dropped (20%), late
// (200ms) and relisted (1s): the renewal that follows a lost one makes it
// good, so the kit ends no watch for it, and the process's cache is never
// behind a renewal the API server acknowledged for as long as a Lease
// lasts (4s, the matrix's). A relist is not free: client-go's reflector
// waits a backoff before each one, doubling from 0.8s to 30s (jittered up
// to twice that) while it relists within two minutes, and a watch ended
// every second leaves the cache blind for longer than that by the third
// relist, the members of a shard ring dead to its sharder.
func TestWatchFaultsRelistOnlyWhatIsLost(t *testing.T) {
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	plan := faults.Plan{Seed: 3, Watch: faults.WatchFaults{Resources: []string{"leases"}, Drop: 0.2, Delay: 200 * time.Millisecond, Relist: time.Second}}
	p := faults.Start(t, cp, faults.Options{Namespace: ns, Plan: plan}, func(ctrl.Manager, *faults.Process) error { return nil })
	ctx := t.Context()
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "renewed"},
		Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: time.Now()}}}
	if err := cp.Client.Create(ctx, lease); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(lease)
	inf, err := p.Manager().GetCache().GetInformer(ctx, &coordinationv1.Lease{})
	if err != nil {
		t.Fatal(err)
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the cache of Leases did not sync")
	}

	// acked holds, in order, each renewal the API server acknowledged and
	// when it did.
	type renewal struct{ renewTime, acked time.Time }
	var (
		mu    sync.Mutex
		acked []renewal
	)
	const (
		run      = 30 * time.Second
		lasts    = 4 * time.Second
		interval = 250 * time.Millisecond
	)
	done := make(chan struct{})
	renewed := make(chan struct{})
	defer func() { close(done); <-renewed }()
	go func() {
		defer close(renewed)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
			if err := cp.Client.Update(ctx, lease); err != nil {
				t.Errorf("renewing the Lease: %v", err)
				return
			}
			mu.Lock()
			acked = append(acked, renewal{renewTime: lease.Spec.RenewTime.Time, acked: time.Now()})
			mu.Unlock()
		}
	}()

	// behind is how long the cache has lacked the first acknowledged
	// renewal newer than the one it shows; zero when it is current.
	behind := func() (time.Duration, error) {
		var cached coordinationv1.Lease
		if err := p.Manager().GetCache().Get(ctx, key, &cached); err != nil {
			return 0, err
		}
		mu.Lock()
		defer mu.Unlock()
		for _, r := range acked {
			if r.renewTime.After(cached.Spec.RenewTime.Time) {
				return time.Since(r.acked), nil
			}
		}
		return 0, nil
	}
	var worst time.Duration
	for start := time.Now(); time.Since(start) < run; {
		d, err := behind()
		if err != nil {
			t.Fatal(err)
		}
		worst = max(worst, d)
		if d > lasts {
			t.Fatalf("the cache has been behind the Lease's renewals for %s, longer than a Lease lasts (%s); stats: %+v", d.Round(time.Millisecond), lasts, p.Stats())
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("the cache was at most %s behind; stats: %+v", worst.Round(time.Millisecond), p.Stats())
	if p.Stats().Dropped == 0 {
		t.Error("no Lease event was dropped")
	}
}

// TestWatchFaultsKeepMetadataWatches: a watch of objects' metadata only
// (PartialObjectMetadata, as controller-runtime's metadata caches and the
// shard sharder's cache make) through a process with watch faults receives
// the changes as metadata. The kit reads watch events in JSON, and must
// keep the JSON form the watch asked for: a watch that received whole
// objects could decode none of them, and ended at every event, its cache
// learning of changes only when client-go listed again, after a backoff
// that doubles with each relist.
func TestWatchFaultsKeepMetadataWatches(t *testing.T) {
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	plan := faults.Plan{Watch: faults.WatchFaults{Resources: []string{"widgets"}, Delay: 100 * time.Millisecond}}
	p := faults.Start(t, cp, faults.Options{Namespace: ns, Plan: plan}, func(ctrl.Manager, *faults.Process) error { return nil })
	ctx := t.Context()
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Spec: testapi.WidgetSpec{Value: 1, Divisor: 1}}
	if err := cp.Client.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	mc, err := metadata.NewForConfig(p.Manager().GetConfig())
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "test.bosun.dev", Version: "v1", Resource: "widgets"}
	watcher, err := mc.Resource(gvr).Namespace(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: w.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Stop()
	w.Labels = map[string]string{"changed": "yes"}
	if err := cp.Client.Update(ctx, w); err != nil {
		t.Fatal(err)
	}
	select {
	case ev, ok := <-watcher.ResultChan():
		if !ok {
			t.Fatal("the watch ended before its first event")
		}
		m, isMeta := ev.Object.(*metav1.PartialObjectMetadata)
		if ev.Type != watch.Modified || !isMeta || m.Labels["changed"] != "yes" {
			t.Fatalf("first event: %s %T %v; want the Widget's metadata, modified, labelled changed=yes", ev.Type, ev.Object, ev.Object)
		}
	case <-time.After(time.Minute):
		t.Fatal("no event within a minute")
	}
}
