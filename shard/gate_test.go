package shard

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestGateBegin checks the gate's verdict on a pass about to start.
func TestGateBegin(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "w"}
	for _, tc := range []struct {
		name     string
		renewed  time.Duration // ago; negative: never
		stopping bool
		leaving  bool
		back     bool
		want     verdict
		// wantLeaving is whether the object is still marked as leaving.
		wantLeaving bool
	}{
		{name: "current Lease", renewed: 0, want: admit},
		{name: "no Lease yet", renewed: -1, want: hold},
		{name: "Lease past the renew deadline", renewed: 3 * time.Second, want: hold},
		{name: "stopping", renewed: 0, stopping: true, want: drop},
		{name: "leaving", renewed: 0, leaving: true, want: drop, wantLeaving: true},
		// The object left and came back; the cache's event reached the
		// controller before the drainer saw it back.
		{name: "leaving, back in the cache", renewed: 0, leaving: true, back: true, want: admit},
		{name: "back in the cache, Lease not current", renewed: 3 * time.Second, leaving: true, back: true, want: hold},
		{name: "back in the cache, stopping", renewed: 0, stopping: true, leaving: true, back: true, want: drop, wantLeaving: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGate(2 * time.Second)
			g.isBack = func(k types.NamespacedName) bool { return tc.back && k == key }
			if tc.renewed >= 0 {
				g.resume(time.Now().Add(-tc.renewed), nil, "")
			}
			if tc.leaving {
				g.drain(key)
			}
			if tc.stopping {
				g.stop()
			}
			if got, _ := g.begin(key); got != tc.want {
				t.Errorf("begin = %v, want %v", got, tc.want)
			}
			if _, leaving := g.draining[key]; leaving != tc.wantLeaving {
				t.Errorf("marked as leaving = %v, want %v", leaving, tc.wantLeaving)
			}
			if running := g.inflight[key] > 0; running != (tc.want == admit) {
				t.Errorf("pass counted as running = %v, want %v", running, tc.want == admit)
			}
		})
	}
}

// TestGatedQueueObjectBack checks that a request of an object that came
// back to its member is handed out, not dropped, even when the drainer has
// not yet seen it back.
func TestGatedQueueObjectBack(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "w"}
	g := newGate(2 * time.Second)
	g.resume(time.Now(), nil, "")
	back := false
	g.isBack = func(types.NamespacedName) bool { return back }
	q := g.newQueue(nil, func() bool { return false }, time.Second)("test", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()

	other := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "other"}}
	// Leaving: its request is dropped, and the next one is handed out.
	g.drain(key)
	q.Add(reconcile.Request{NamespacedName: key})
	q.Add(other)
	if got, _ := q.Get(); got != other {
		t.Fatalf("Get = %v, want %v (the leaving object's request dropped)", got, other)
	}
	q.Done(other)

	// Back in the cache before the drainer saw it: handed out.
	g.drain(key)
	back = true
	q.Add(reconcile.Request{NamespacedName: key})
	gotc := make(chan reconcile.Request, 1)
	go func() {
		r, _ := q.Get()
		gotc <- r
	}()
	var got reconcile.Request
	select {
	case got = <-gotc:
	case <-time.After(10 * time.Second):
		t.Fatal("the request of the object back was dropped: Get handed out nothing")
	}
	if got.NamespacedName != key {
		t.Fatalf("Get = %v, want %v", got, key)
	}
	if g.idle() {
		t.Error("the pass of the object back is not counted as running")
	}
	q.Done(got)
	if !g.idle() {
		t.Error("the pass is still counted after Done")
	}
}

// TestGateConfirmsAfterALapse checks the first pass of an object under a
// new right of the member: admitted at once when the object was in the
// list taken at the renewal, is not in the cache, or was assigned in the
// member's current tenure; otherwise only once the API server says the
// object is the member's.
func TestGateConfirmsAfterALapse(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "w"}
	errDown := errors.New("the API server cannot be reached")
	for _, tc := range []struct {
		name   string
		owned  bool // in the list taken at the renewal
		cached bool
		tenure string // assigned in; the member's is t2
		server error  // nil: labelled for the member; errGone: not
		want   []string
	}{
		{name: "in the list", owned: true, cached: true, want: []string{"admit", "admit"}},
		{name: "not in the cache", cached: false, want: []string{"admit", "admit"}},
		{name: "assigned in the current tenure", cached: true, tenure: "t2", server: errGone, want: []string{"admit", "admit"}},
		{name: "assigned in an earlier tenure", cached: true, tenure: "t1", server: errGone, want: []string{"read", "drop", "read", "drop"}},
		{name: "the member's on the server", cached: true, want: []string{"read", "admit", "admit"}},
		{name: "another member's on the server", cached: true, server: errGone, want: []string{"read", "drop", "read", "drop"}},
		{name: "server down", cached: true, server: errDown, want: []string{"read", "hold", "read", "hold"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			g := newGate(2 * time.Second)
			g.cached = func(types.NamespacedName) (bool, string) { return tc.cached, tc.tenure }
			g.confirm = func(types.NamespacedName) (bool, error) {
				got = append(got, "read")
				if errors.Is(tc.server, errGone) {
					return false, nil
				}
				return tc.server == nil, tc.server
			}
			var owned map[types.NamespacedName]bool
			if tc.owned {
				owned = map[types.NamespacedName]bool{key: true}
			}
			g.resume(time.Now(), owned, "t2")
			for range 2 {
				v, _ := g.begin(key)
				got = append(got, v.String())
				if v == admit {
					g.end(key)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("reads and verdicts of two passes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGateStandby checks the requests of an object this member caches as
// the standby of another (Options.Standby): dropped, unless the member
// took the object over under its right in force; and dropped again once
// a new right begins, until it takes the object over anew.
func TestGateStandby(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "w"}
	g := newGate(2 * time.Second)
	g.cached = func(types.NamespacedName) (bool, string) { return false, "" }
	g.confirm = func(types.NamespacedName) (bool, error) { return false, nil }
	g.foreign = func(types.NamespacedName) bool { return true }
	var got []string
	pass := func() {
		v, _ := g.begin(key)
		got = append(got, v.String())
		if v == admit {
			g.end(key)
		}
	}
	g.resume(time.Now(), nil, "t1")
	pass()
	if len(g.takeOver(g.currentRight(), []types.NamespacedName{key}, time.Now())) != 1 || !g.takenOver(key) {
		t.Fatal("the object was not taken over under the right in force")
	}
	pass()
	old := g.currentRight()
	g.resume(time.Now(), nil, "t1")
	if g.takenOver(key) || g.takeOver(old, []types.NamespacedName{key}, time.Now()) != nil {
		t.Error("a takeover under an ended right still counts")
	}
	pass()
	if diff := cmp.Diff([]string{"drop", "admit", "drop"}, got); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
}

// TestGateStandbyAfterDrain checks an object this member let go and then
// took over as its standby, before the mark of its drain aged: the
// takeover's request is admitted when the list it came from began after
// the drain. Dropping it, as a request queued before the drain, would
// leave the object with no pass until its next event, since the standby's
// request is the only one the takeover makes. A list that began before
// the drain saw the object before this member let it go: that takeover
// takes nothing, and the object's requests are still dropped.
func TestGateStandbyAfterDrain(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "w"}
	for _, tt := range []struct {
		name      string
		listFirst bool
		want      string
	}{
		{name: "listed after the drain", want: "admit"},
		{name: "listed before the drain", listFirst: true, want: "drop"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := newGate(2 * time.Second)
			g.cached = func(types.NamespacedName) (bool, string) { return false, "" }
			g.confirm = func(types.NamespacedName) (bool, error) { return false, nil }
			g.foreign = func(types.NamespacedName) bool { return true }
			g.isBack = func(types.NamespacedName) bool { return false }
			g.resume(time.Now(), nil, "t1")
			var listed time.Time
			if tt.listFirst {
				listed = time.Now()
			}
			if !g.drain(key) {
				t.Fatal("drain: a pass runs")
			}
			if v, _ := g.begin(key); v != drop {
				t.Errorf("begin of a request queued before the drain = %v, want drop", v)
			}
			if !tt.listFirst {
				listed = time.Now()
			}
			taken := g.takeOver(g.currentRight(), []types.NamespacedName{key}, listed)
			if tt.listFirst != (len(taken) == 0) {
				t.Errorf("took over %v", taken)
			}
			v, _ := g.begin(key)
			if v == admit {
				g.end(key)
			}
			if v.String() != tt.want {
				t.Errorf("begin after the takeover = %v, want %s", v, tt.want)
			}
		})
	}
}

// errGone stands for an object labelled for another member on the server.
var errGone = errors.New("gone")

// TestGateRightLapses checks that the right a pass runs under is
// cancelled with ErrLeaseLost RenewDeadline after the last renewal, that
// a renewal in time extends it, and that one after the lapse does not.
func TestGateRightLapses(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "w"}
	g := newGate(time.Second)
	g.resume(time.Now(), nil, "")
	v, right := g.begin(key)
	if v != admit {
		t.Fatalf("begin = %v, want admit", v)
	}
	if !g.extend(time.Now(), "") {
		t.Fatal("a renewal in time did not extend the right")
	}
	select {
	case <-right.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the right was not cancelled after the renew deadline")
	}
	if err := context.Cause(right); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("cause = %v, want ErrLeaseLost", err)
	}
	if g.extend(time.Now(), "") {
		t.Error("a renewal after the lapse extended the right; want a new one (resume)")
	}
	if v, _ := g.begin(key); v != hold {
		t.Errorf("begin after the lapse = %v, want wait", v)
	}
}
