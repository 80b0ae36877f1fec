package shard

import (
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/bosunkit/bosun/internal/testapi"
)

// TestOwnerExcept checks that a key's standby is the member it would
// belong to if its member left the ring: for every key and member.
func TestOwnerExcept(t *testing.T) {
	members := []string{"a", "b", "c", "d"}
	full := NewRing(members, 16)
	for i := range 500 {
		key := fmt.Sprintf("ns/obj-%d", i)
		for _, gone := range members {
			var rest []string
			for _, m := range members {
				if m != gone {
					rest = append(rest, m)
				}
			}
			if got, want := full.ownerExcept(key, gone), NewRing(rest, 16).Owner(key); got != want {
				t.Fatalf("ownerExcept(%q, %q) = %q, want %q, the owner once %s left", key, gone, got, want, gone)
			}
		}
	}
	if got := NewRing([]string{"a"}, 16).ownerExcept("k", "a"); got != "" {
		t.Errorf("the standby on a ring of one member = %q, want none", got)
	}
	if got := (Ring{}).ownerExcept("k", "a"); got != "" {
		t.Errorf("the standby on an empty ring = %q, want none", got)
	}
}

// TestTenureEnded checks which tenures a closed tenure ends: itself and
// the earlier ones, and an object that names none.
func TestTenureEnded(t *testing.T) {
	const closed = "2026-11-26T10:00:00.5Z"
	for _, tc := range []struct {
		tenure, closed string
		want           bool
	}{
		{"2026-11-26T10:00:00.5Z", closed, true},
		{"2026-11-26T09:59:59Z", closed, true},
		{"2026-11-26T10:00:00.6Z", closed, false},
		{"", closed, true},
		{"not a time", closed, true},
		{"2026-11-26T09:59:59Z", "", false},
		{"2026-11-26T09:59:59Z", "not a time", false},
	} {
		if got := tenureEnded(tc.tenure, tc.closed); got != tc.want {
			t.Errorf("tenureEnded(%q, %q) = %v, want %v", tc.tenure, tc.closed, got, tc.want)
		}
	}
}

// TestStandbyPredicate checks which updates of an object the member of a
// ring with standbys reconciles: not those that only move the ring's own
// labels of an object it keeps, every other.
func TestStandbyPredicate(t *testing.T) {
	m, err := New(Options{Ring: "w", Identity: "a", Namespace: "ns", Object: &testapi.Widget{}, Standby: true})
	if err != nil {
		t.Fatal(err)
	}
	base := func() *testapi.Widget {
		return &testapi.Widget{ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: "x", Generation: 1, ResourceVersion: "1",
			Labels:      map[string]string{"shard.bosun.dev/w": "a", "standby.shard.bosun.dev/w": "b", "w.in.shard.bosun.dev/a": "true", "w.in.shard.bosun.dev/b": "true", "app": "x"},
			Annotations: map[string]string{"tenure.shard.bosun.dev/w": "t1"},
		}}
	}
	for _, tc := range []struct {
		name   string
		change func(before, after *testapi.Widget)
		want   bool
	}{
		{"a new standby", func(_, a *testapi.Widget) {
			a.Labels["standby.shard.bosun.dev/w"] = "c"
			delete(a.Labels, "w.in.shard.bosun.dev/b")
			a.Labels["w.in.shard.bosun.dev/c"] = "true"
		}, false},
		{"assigned to the member", func(b, _ *testapi.Widget) { b.Labels["shard.bosun.dev/w"] = "b" }, true},
		{"a drain ends", func(b, _ *testapi.Widget) { b.Labels["drain.shard.bosun.dev/w"] = "1700000000" }, true},
		{"a drain begins", func(_, a *testapi.Widget) { a.Labels["drain.shard.bosun.dev/w"] = "1700000000" }, false},
		{"a new spec", func(_, a *testapi.Widget) { a.Generation, a.Spec.Value = 2, 3 }, true},
		{"a new status", func(_, a *testapi.Widget) { a.Status.Result = 3 }, true},
		{"a label of the user with a new standby", func(_, a *testapi.Widget) {
			a.Labels["standby.shard.bosun.dev/w"] = "c"
			a.Labels["app"] = "y"
		}, true},
		{"a new standby with a new status", func(_, a *testapi.Widget) {
			a.Labels["standby.shard.bosun.dev/w"] = "c"
			a.Status.Result = 3
		}, true},
		{"a new tenure", func(_, a *testapi.Widget) { a.Annotations["tenure.shard.bosun.dev/w"] = "t2" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, after := base(), base()
			after.ResourceVersion = "2"
			tc.change(before, after)
			if got := m.Predicate().Update(event.UpdateEvent{ObjectOld: before, ObjectNew: after}); got != tc.want {
				t.Errorf("Update = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestTakeoverFrom checks when the standbys may list the objects of a
// closed Lease: a fence after the last renewal of a member that stopped,
// at once for one closed after it expired, a fence after the return of a
// member that came back.
func TestTakeoverFrom(t *testing.T) {
	at := func(s string) *metav1.MicroTime {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return ptr.To(metav1.NewMicroTime(tm))
	}
	const fence = time.Second
	for _, tc := range []struct {
		name   string
		holder string
		renew  *metav1.MicroTime
		acq    *metav1.MicroTime
		want   string
	}{
		{name: "closed as it stopped", renew: at("2026-11-26T10:00:30Z"), acq: at("2026-11-26T10:00:00Z"), want: "2026-11-26T10:00:31Z"},
		{name: "closed once expired", renew: at("2026-11-26T09:00:00Z"), acq: at("2026-11-26T08:00:00Z"), want: "2026-11-26T09:00:01Z"},
		{name: "back since", holder: "a", renew: at("2026-11-26T10:05:00Z"), acq: at("2026-11-26T10:01:00Z"), want: "2026-11-26T10:01:01Z"},
		{name: "no times", want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lease := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{RenewTime: tc.renew, AcquireTime: tc.acq}}
			if tc.holder != "" {
				lease.Spec.HolderIdentity = ptr.To(tc.holder)
			}
			got := takeoverFrom(lease, fence)
			var want time.Time
			if tc.want != "" {
				want = at(tc.want).Time
			}
			if !got.Equal(want) {
				t.Errorf("takeoverFrom = %s, want %s", got, want)
			}
		})
	}
}
