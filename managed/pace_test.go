package managed

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	v1 "github.com/bosunkit/bosun/managed/internal/bucketapi"
)

func TestDecidePace(t *testing.T) {
	now := decideNow
	// steady is a settled object this process knows, with its poll due in
	// a minute and no batches.
	steady := paceFacts{now: now, settled: true, known: true, spread: true, due: now.Add(time.Minute), window: 6 * time.Second}
	with := func(fn func(*paceFacts)) paceFacts {
		f := steady
		fn(&f)
		return f
	}
	for _, tc := range []struct {
		name string
		f    paceFacts
		want paceAction
	}{
		{"known, settled, no batches", steady, paceObserve},
		{"not settled: observed at once", with(func(f *paceFacts) { f.settled, f.known = false, false }), paceObserve},
		{"first pass after a start: deferred", with(func(f *paceFacts) { f.known = false }), paceDefer},
		{"first pass, spreading off", with(func(f *paceFacts) { f.known, f.spread = false, false }), paceObserve},
		{"first pass, woken", with(func(f *paceFacts) { f.known, f.woken = false, true }), paceObserve},
		{"deferred, not due", with(func(f *paceFacts) { f.deferred, f.sameVersion = true, true }), paceWait},
		{"deferred, object changed", with(func(f *paceFacts) { f.deferred = true }), paceObserve},
		{"deferred, woken", with(func(f *paceFacts) { f.deferred, f.sameVersion, f.woken = true, true, true }), paceObserve},
		{"deferred, no longer settled", with(func(f *paceFacts) { f.deferred, f.sameVersion, f.settled = true, true, false }), paceObserve},
		{"deferred, due, no batches", with(func(f *paceFacts) { f.deferred, f.sameVersion, f.due = true, true, now }), paceObserve},
		{"deferred, due, batches", with(func(f *paceFacts) { f.deferred, f.sameVersion, f.due, f.batching = true, true, now, true }), paceBatch},
		{"poll due, batches", with(func(f *paceFacts) { f.due, f.batching = now, true }), paceBatch},
		{"poll due within the window", with(func(f *paceFacts) { f.due, f.batching = now.Add(5*time.Second), true }), paceBatch},
		{"poll not due, batches", with(func(f *paceFacts) { f.batching = true }), paceObserve},
		{"poll not known, batches", with(func(f *paceFacts) { f.due, f.batching = time.Time{}, true }), paceObserve},
		{"not due, batch observed lately", with(func(f *paceFacts) { f.batching, f.batched = true, true }), paceBatch},
		{"due, woken", with(func(f *paceFacts) { f.due, f.batching, f.batched, f.woken = now, true, true, true }), paceObserve},
		{"due, changed generation", with(func(f *paceFacts) { f.due, f.batching, f.settled = now, true, false }), paceObserve},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := decidePace(tc.f); got != tc.want {
				t.Errorf("decidePace(%+v) = %s, want %s", tc.f, got, tc.want)
			}
		})
	}
}

func TestSettled(t *testing.T) {
	cond := func(typ string, status metav1.ConditionStatus, reason conditions.Reason, gen int64) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: string(reason), ObservedGeneration: gen}
	}
	inLine := func(fn func(b *v1.Bucket)) *v1.Bucket {
		b := &v1.Bucket{ObjectMeta: metav1.ObjectMeta{Name: "b", Generation: 3, Annotations: map[string]string{AnnotationExternalName: "ns.b"}}}
		b.Status.ObservedGeneration = 3
		b.Status.Conditions = []metav1.Condition{
			cond(defaultConditionSynced, metav1.ConditionTrue, ReasonReconcileSuccess, 3),
			cond(defaultConditionAvailable, metav1.ConditionTrue, ReasonAvailable, 3),
		}
		if fn != nil {
			fn(b)
		}
		return b
	}
	deleting := metav1.Now()
	for _, tc := range []struct {
		name string
		b    *v1.Bucket
		want bool
	}{
		{"in line", inLine(nil), true},
		{"new generation", inLine(func(b *v1.Bucket) { b.Generation = 4 }), false},
		{"conditions of an older generation", inLine(func(b *v1.Bucket) { b.Status.Conditions[0].ObservedGeneration = 2 }), false},
		{"being deleted", inLine(func(b *v1.Bucket) { b.DeletionTimestamp = &deleting }), false},
		{"no conditions", inLine(func(b *v1.Bucket) { b.Status.Conditions = nil }), false},
		{"updating", inLine(func(b *v1.Bucket) {
			b.Status.Conditions[0] = cond(defaultConditionSynced, metav1.ConditionFalse, ReasonUpdating, 3)
		}), false},
		{"failing", inLine(func(b *v1.Bucket) {
			b.Status.Conditions[0] = cond(defaultConditionSynced, metav1.ConditionFalse, ReasonObserveFailed, 3)
		}), false},
		{"not available", inLine(func(b *v1.Bucket) {
			b.Status.Conditions[1] = cond(defaultConditionAvailable, metav1.ConditionFalse, ReasonUnavailable, 3)
		}), false},
		{"long operation", inLine(func(b *v1.Bucket) { b.Annotations[annotationOperation] = "update:op-1" }), false},
		{"create pending", inLine(func(b *v1.Bucket) { b.Annotations[AnnotationCreatePending] = decideAt(0) }), false},
		{"create recorded", inLine(func(b *v1.Bucket) {
			b.Annotations[AnnotationCreatePending] = decideAt(0)
			b.Annotations[annotationCreateSucceeded] = decideAt(time.Second)
		}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := settled(tc.b, recordKeys{}, defaultConditionSynced, defaultConditionAvailable); got != tc.want {
				t.Errorf("settled = %t, want %t", got, tc.want)
			}
		})
	}
}

// calls are the cloud's counts of calls for some buckets.
type calls struct {
	observes, batched map[string]int
	batches           int
}

// callsOf returns the cloud's counts of calls for the buckets uids.
func (c *cloud) callsOf(uids []string) calls {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := calls{observes: map[string]int{}, batched: map[string]int{}, batches: c.batches}
	for _, u := range uids {
		out.observes[u], out.batched[u] = c.observesOf[u], c.batchedOf[u]
	}
	return out
}

// converge creates the buckets names and waits until they are converged;
// it returns their UIDs.
func (e *env) converge(names ...string) []string {
	e.t.Helper()
	var uids []string
	for _, n := range names {
		e.create(n, 1, n+"-conn", nil)
	}
	for _, n := range names {
		uids = append(uids, string(e.wait(n, converged).UID))
	}
	return uids
}

// firstPasses waits until the controller has run a pass of each of names.
func (e *env) firstPasses(names ...string) {
	e.t.Helper()
	bosuntest.Eventually(e.t, func(context.Context) error {
		for _, n := range names {
			if e.passes.Count(e.key(n)) == 0 {
				return fmt.Errorf("no pass of %s yet", n)
			}
		}
		return nil
	})
}

// TestRestartSpreadsFirstObservations checks that a process started over
// buckets whose resources are in line observes none of them on its first
// pass (their polls, an hour away, are where the observations go), while
// a changed bucket is handled at once; that with spreading off it
// observes every one on its first pass; and that the put-off observations
// do come, finding drift, within the poll interval.
func TestRestartSpreadsFirstObservations(t *testing.T) {
	cl := newCloud()
	ns := bosuntest.Namespace(t, shared.ControlPlane(t).Client)
	names := []string{"s0", "s1", "s2", "s3", "s4", "s5"}
	var uids []string
	t.Run("first process", func(t *testing.T) {
		uids = startRig(t, cl, rig{ns: ns}).converge(names...)
	})
	hour := []Option{WithTiming(Timing{Poll: time.Hour})}

	t.Run("spread", func(t *testing.T) {
		before := cl.callsOf(uids)
		e := startRig(t, cl, rig{ns: ns, opts: hour})
		e.firstPasses(names...)
		if n := sum(cl.callsOf(uids).observes) - sum(before.observes); n != 0 {
			t.Fatalf("%d observes on the first passes, want none: every bucket is in line, its observation is put off", n)
		}
		e.change("s3", func(b *v1.Bucket) { b.Spec.Size = 7 })
		bosuntest.Eventually(t, func(context.Context) error {
			if got, _ := cl.bucket(ns + ".s3"); got.size != 7 {
				return fmt.Errorf("cloud size %d, want 7", got.size)
			}
			return nil
		})
		got := cl.callsOf(uids)
		for i, uid := range uids {
			if n := got.observes[uid] - before.observes[uid]; names[i] != "s3" && n != 0 {
				t.Errorf("%s observed %d times, want none: only s3 changed", names[i], n)
			}
		}
	})

	t.Run("spreading off", func(t *testing.T) {
		before := cl.callsOf(uids)
		e := startRig(t, cl, rig{ns: ns, opts: append(hour, WithTiming(Timing{Spread: -1}))})
		e.firstPasses(names...)
		bosuntest.Eventually(t, func(context.Context) error {
			got := cl.callsOf(uids)
			for i, uid := range uids {
				if got.observes[uid] == before.observes[uid] {
					return fmt.Errorf("%s not observed yet", names[i])
				}
			}
			return nil
		})
	})

	t.Run("put-off observations come", func(t *testing.T) {
		cl.set(func(c *cloud) { c.buckets[ns+".s1"].size = 99 })
		e := startRig(t, cl, rig{ns: ns, opts: []Option{WithTiming(Timing{Poll: 2 * time.Second})}})
		bosuntest.Eventually(t, func(context.Context) error {
			if got, _ := cl.bucket(ns + ".s1"); got.size != 1 {
				return fmt.Errorf("cloud size of s1 %d, want 1: the drift is not repaired yet", got.size)
			}
			return nil
		})
		e.wait("s1", converged)
	})
}

// TestBatchObserverReplacesObserves checks that, with a client that
// observes in batches, converged buckets are polled by batch rounds, one
// call for several buckets, with no Observe of their own; that drift a
// round finds is observed once more on its own before the Update; and
// that when rounds fail, the buckets are observed one by one.
func TestBatchObserverReplacesObserves(t *testing.T) {
	cl := newCloud()
	cl.batch = true
	e := startRig(t, cl, rig{workers: 2, opts: []Option{WithTiming(Timing{Poll: time.Second, Batch: time.Second})}})
	names := []string{"b0", "b1", "b2", "b3", "b4", "b5"}
	uids := e.converge(names...)
	// batchedAll waits until every bucket was observed in n more batches
	// than in from.
	batchedAll := func(from calls, n int) calls {
		var got calls
		bosuntest.Eventually(t, func(context.Context) error {
			got = cl.callsOf(uids)
			for i, uid := range uids {
				if got.batched[uid] < from.batched[uid]+n {
					return fmt.Errorf("%s observed in %d batches, want %d", names[i], got.batched[uid]-from.batched[uid], n)
				}
			}
			return nil
		})
		return got
	}
	mark := batchedAll(cl.callsOf(uids), 1)
	end := batchedAll(mark, 2)
	total := 0
	for i, uid := range uids {
		if n := end.observes[uid] - mark.observes[uid]; n != 0 {
			t.Errorf("%s observed on its own %d times while batches polled it, want none", names[i], n)
		}
		total += end.batched[uid] - mark.batched[uid]
	}
	if rounds := end.batches - mark.batches; rounds >= total {
		t.Errorf("%d batch calls for %d observations, want several buckets per call", rounds, total)
	}

	// Drift: a round finds it, the pass observes on its own, then updates.
	drifted := cl.callsOf(uids)
	cl.set(func(c *cloud) { c.buckets[e.ns+".b2"].size = 42 })
	bosuntest.Eventually(t, func(context.Context) error {
		if got, _ := cl.bucket(e.ns + ".b2"); got.size != 1 {
			return fmt.Errorf("cloud size of b2 %d, want 1", got.size)
		}
		return nil
	})
	if got := cl.callsOf(uids); got.observes[uids[2]] == drifted.observes[uids[2]] {
		t.Errorf("b2 updated without an Observe of its own")
	}

	// Failing rounds: the buckets are observed one by one.
	failing := cl.callsOf(uids)
	cl.set(func(c *cloud) { c.failBatch = errors.New("the catalog is locked") })
	bosuntest.Eventually(t, func(context.Context) error {
		got := cl.callsOf(uids)
		for i, uid := range uids {
			if got.observes[uid] == failing.observes[uid] {
				return fmt.Errorf("%s not observed on its own yet", names[i])
			}
		}
		return nil
	})
	for _, n := range names {
		e.wait(n, converged)
	}
}

// TestWakeObservesOneObject checks that Wake brings a pass of exactly the
// object woken, one that observes it on its own and repairs its drift,
// while the others, whose observations a start put off for an hour and
// which batches would observe, see no call.
func TestWakeObservesOneObject(t *testing.T) {
	cl := newCloud()
	cl.batch = true
	ns := bosuntest.Namespace(t, shared.ControlPlane(t).Client)
	names := []string{"w0", "w1", "w2"}
	var uids []string
	t.Run("first process", func(t *testing.T) {
		uids = startRig(t, cl, rig{ns: ns}).converge(names...)
	})
	var step *Step[*v1.Bucket]
	e := startRig(t, cl, rig{ns: ns, opts: []Option{WithTiming(Timing{Poll: time.Hour})}, step: func(s *Step[*v1.Bucket]) bosun.Step[*v1.Bucket] {
		step = s
		return s
	}})
	e.firstPasses(names...)
	before := cl.callsOf(uids)
	cl.set(func(c *cloud) { c.buckets[ns+".w1"].size = 42 })
	step.Wake(client.ObjectKey{Namespace: ns, Name: "w1"})
	bosuntest.Eventually(t, func(context.Context) error {
		if got, _ := cl.bucket(ns + ".w1"); got.size != 1 {
			return fmt.Errorf("cloud size of w1 %d, want 1", got.size)
		}
		return nil
	})
	e.wait("w1", converged)
	got := cl.callsOf(uids)
	if got.batches != before.batches {
		t.Errorf("%d batch calls, want none: a woken pass observes on its own", got.batches-before.batches)
	}
	for i, uid := range uids {
		n := got.observes[uid] - before.observes[uid]
		switch {
		case names[i] == "w1" && n == 0:
			t.Errorf("w1 woken and not observed")
		case names[i] != "w1" && n != 0:
			t.Errorf("%s observed %d times, want none: only w1 was woken", names[i], n)
		}
	}
}
