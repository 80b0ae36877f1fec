package shard_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/internal/rollout"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/shard"
)

// TestCanary runs a member of version v1 and one of v2 in a ring and rolls
// v2 out through a Canary: a share by percent, more objects by a label
// selector, a promotion to every object and a hand back of all of them.
// At each stage every object is labelled for the member its version
// chooses and has had a pass by it, and no object is ever reconciled by
// both versions at once. The members publish their passes on their
// Leases and in metrics labelled by version.
func TestCanary(t *testing.T) {
	r := newRing(t)
	r.createWidgets(objects)
	start := time.Now()
	version := func(v string) replicaOptions {
		return replicaOptions{shard: func(o *shard.Options) { o.Version = v }}
	}
	r.startWith("old", version("v1"))
	r.startWith("new", replicaOptions{shard: func(o *shard.Options) { o.Version = "v2" }, setup: r.setupEngine})
	// No canary yet: the members share the objects alike, whatever their
	// versions.
	r.converge([]string{"old", "new"}, start)

	write := func(c shard.Canary) time.Time {
		t.Helper()
		at := time.Now()
		if err := c.Write(t.Context(), r.cp.Client, r.ns, r.name); err != nil {
			t.Fatal(err)
		}
		return at
	}
	bucket := func(w *testapi.Widget) int { return rollout.Bucket(shard.ByName(w.Namespace, w.Name)) }

	since := write(shard.Canary{Version: "v2", Percent: 30})
	shares := r.settle(since, func(w *testapi.Widget) string {
		if bucket(w) < 30 {
			return "new"
		}
		return "old"
	})
	t.Logf("30%%: %v", shares)

	// Five more objects by a label.
	var picked []string
	widgets, _, err := r.labelled(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range widgets["old"] {
		if len(picked) == 5 {
			break
		}
		w.Labels["track"] = "canary"
		if err := r.cp.Client.Update(t.Context(), &w); err != nil {
			t.Fatal(err)
		}
		picked = append(picked, w.Name)
	}
	since = write(shard.Canary{Version: "v2", Percent: 30, Selector: "track=canary"})
	shares = r.settle(since, func(w *testapi.Widget) string {
		if bucket(w) < 30 || w.Labels["track"] == "canary" {
			return "new"
		}
		return "old"
	})
	t.Logf("30%% and %v: %v", picked, shares)

	// Promoted: every object.
	since = write(shard.Canary{Version: "v2", Percent: 100})
	r.settle(since, func(*testapi.Widget) string { return "new" })
	// Handed back: none.
	since = write(shard.Canary{Version: "v2"})
	r.settle(since, func(*testapi.Widget) string { return "old" })
	checkNoOverlap(t, r.j)

	// Each member counts its passes on its Lease, and in metrics by
	// version.
	for member, v := range map[string]string{"old": "v1", "new": "v2"} {
		var lease coordinationv1.Lease
		bosuntest.Eventually(t, func(ctx context.Context) error {
			if err := r.cp.Client.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: shard.LeaseName(r.name, member)}, &lease); err != nil {
				return err
			}
			if got := lease.Labels[rollout.LabelVersion]; got != v {
				return fmt.Errorf("lease of %s labelled version %q, want %q", member, got, v)
			}
			if st := rollout.DecodeStats(lease.Annotations[rollout.AnnotationPasses]); st.Passes == 0 || st.Seconds <= 0 {
				return fmt.Errorf("lease of %s counts %+v", member, st)
			}
			return nil
		})
		if got := counter(t, "bosun_shard_passes_total", map[string]string{"ring": r.name, "version": v, "result": "success"}); got == 0 {
			t.Errorf("no successful passes of version %s in bosun_shard_passes_total", v)
		}
	}
	sum := rollout.Summarize(r.name, r.leases(), time.Now())
	if sum.Canary == nil || *sum.Canary != (rollout.Spec{Version: "v2"}) || len(sum.Versions) != 2 {
		t.Errorf("summary of the ring: %+v", sum)
	}

	// The zero Canary ends the rollout: the members share alike again.
	since = write(shard.Canary{})
	r.converge([]string{"old", "new"}, since)
}

// settle waits until every Widget is labelled for the member want names,
// none is draining, and each has had a pass by that member since since;
// it returns how many each member holds.
func (r *ring) settle(since time.Time, want func(*testapi.Widget) string) map[string]int {
	r.t.Helper()
	shares := map[string]int{}
	bosuntest.Eventually(r.t, func(ctx context.Context) error {
		byMember, draining, err := r.labelled(ctx)
		if err != nil {
			return err
		}
		if draining > 0 {
			return fmt.Errorf("%d Widgets draining", draining)
		}
		clear(shares)
		for member, ws := range byMember {
			shares[member] = len(ws)
			for _, w := range ws {
				if m := want(&w); m != member {
					return fmt.Errorf("%s is labelled %q, want %q", w.Name, member, m)
				}
				if !r.j.reconciledBy(client.ObjectKeyFromObject(&w), member, since) {
					return fmt.Errorf("%s has had no pass by %s", w.Name, member)
				}
			}
		}
		return nil
	}, bosuntest.Timeout(time.Minute))
	return shares
}

// leases returns the Leases of the ring.
func (r *ring) leases() []coordinationv1.Lease {
	r.t.Helper()
	var list coordinationv1.LeaseList
	if err := r.cp.Client.List(r.t.Context(), &list, client.InNamespace(r.ns), client.MatchingLabels{rollout.LabelRing: r.name}); err != nil {
		r.t.Fatal(err)
	}
	return list.Items
}

// TestCanaryWriteErrors checks that a Canary that cannot work is refused
// with ErrInvalidOptions and writes nothing.
func TestCanaryWriteErrors(t *testing.T) {
	r := newRing(t)
	for _, c := range []shard.Canary{
		{Percent: 10},
		{Version: "v2", Percent: 101},
		{Version: "v2", Percent: -1},
		{Version: "not a label", Percent: 10},
		{Version: "v2", Selector: "a in ("},
	} {
		if err := c.Write(t.Context(), r.cp.Client, r.ns, r.name); !errors.Is(err, shard.ErrInvalidOptions) {
			t.Errorf("Write(%+v) = %v, want ErrInvalidOptions", c, err)
		}
	}
	if leases := r.leases(); len(leases) != 0 {
		t.Errorf("refused canaries wrote %d leases", len(leases))
	}
}
