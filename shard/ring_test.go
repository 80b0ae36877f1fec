package shard_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/shard"
)

// keys returns n keys as namespace/name, over 37 namespaces.
func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("ns-%d/object-%d", i%37, i)
	}
	return out
}

// shares counts the keys of each member.
func shares(r shard.Ring, ks []string) map[string]int {
	out := map[string]int{}
	for _, k := range ks {
		out[r.Owner(k)]++
	}
	return out
}

func TestRingBalance(t *testing.T) {
	ks := keys(10000)
	for _, tc := range []struct {
		members []string
		// tolerance is how far, in percent of a fair share, a member's
		// share may be from it.
		tolerance int
	}{
		{members: []string{"a"}, tolerance: 0},
		{members: []string{"a", "b"}, tolerance: 15},
		{members: []string{"a", "b", "c"}, tolerance: 20},
		{members: []string{"replica-0", "replica-1", "replica-2", "replica-3"}, tolerance: 20},
		{members: []string{"a", "b", "c", "d", "e", "f", "g", "h"}, tolerance: 25},
	} {
		t.Run(fmt.Sprint(len(tc.members)), func(t *testing.T) {
			got := shares(shard.NewRing(tc.members, 0), ks)
			var owners []string
			for m := range got {
				owners = append(owners, m)
			}
			slices.Sort(owners)
			if diff := cmp.Diff(tc.members, owners); diff != "" {
				t.Errorf("owners (-want +got):\n%s", diff)
			}
			fair := len(ks) / len(tc.members)
			for m, n := range got {
				if d := abs(n - fair); d*100 > fair*tc.tolerance {
					t.Errorf("member %s holds %d keys, %d from a fair share of %d (tolerance %d%%)", m, n, d, fair, tc.tolerance)
				}
			}
		})
	}
}

func abs(n int) int { return max(n, -n) }

// When a member joins or leaves, only the keys that must move do: those
// of the member that left, or those the member that joined takes; and
// about a fair share of them.
func TestRingMovesFewKeys(t *testing.T) {
	ks := keys(10000)
	for _, tc := range []struct {
		name          string
		before, after []string
		// mover is the member that left or joined.
		mover string
	}{
		{name: "leave", before: []string{"a", "b", "c", "d"}, after: []string{"a", "b", "d"}, mover: "c"},
		{name: "join", before: []string{"a", "b", "c", "d"}, after: []string{"a", "b", "c", "d", "e"}, mover: "e"},
		{name: "first leaves", before: []string{"a", "b"}, after: []string{"b"}, mover: "a"},
		{name: "second joins", before: []string{"a"}, after: []string{"a", "b"}, mover: "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, after := shard.NewRing(tc.before, 0), shard.NewRing(tc.after, 0)
			moved := 0
			var wrong []string
			for _, k := range ks {
				was, is := before.Owner(k), after.Owner(k)
				if was == is {
					continue
				}
				moved++
				if was != tc.mover && is != tc.mover {
					wrong = append(wrong, fmt.Sprintf("%s: %s -> %s", k, was, is))
				}
			}
			if diff := cmp.Diff([]string(nil), wrong); diff != "" {
				t.Errorf("keys that moved between members that stayed (-want +got):\n%s", diff)
			}
			fair := len(ks) / max(len(tc.before), len(tc.after))
			if abs(moved-fair)*100 > fair*30 {
				t.Errorf("%d keys moved, want about %d", moved, fair)
			}
		})
	}
}

func TestRingOwner(t *testing.T) {
	for _, tc := range []struct {
		name    string
		members []string
		tokens  int
		want    string
	}{
		{name: "no members", want: ""},
		{name: "one member", members: []string{"only"}, tokens: 4, want: "only"},
		{name: "one member, default tokens", members: []string{"only"}, want: "only"},
		{name: "duplicates count once", members: []string{"x", "x"}, tokens: 1, want: "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, shard.NewRing(tc.members, tc.tokens).Owner("ns/x")); diff != "" {
				t.Errorf("owner (-want +got):\n%s", diff)
			}
		})
	}
}

// The same members in any order give the same ring.
func TestRingIsDeterministic(t *testing.T) {
	a, b := shard.NewRing([]string{"x", "y", "z"}, 0), shard.NewRing([]string{"z", "x", "y"}, 0)
	for _, k := range keys(2000) {
		if a.Owner(k) != b.Owner(k) {
			t.Fatalf("key %s: %s and %s for the same members", k, a.Owner(k), b.Owner(k))
		}
	}
}

func TestKeyFuncs(t *testing.T) {
	got := []string{shard.ByName("ns", "a"), shard.ByNamespace("ns", "a")}
	if diff := cmp.Diff([]string{"ns/a", "ns"}, got); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	// With ByNamespace, the objects of a namespace share a member.
	r := shard.NewRing([]string{"a", "b", "c"}, 0)
	owner := r.Owner(shard.ByNamespace("team-1", "x"))
	for i := range 100 {
		if got := r.Owner(shard.ByNamespace("team-1", fmt.Sprint(i))); got != owner {
			t.Fatalf("object %d of team-1 on %s, want %s", i, got, owner)
		}
	}
}

func TestNewValidates(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts shard.Options
		ok   bool
	}{
		{name: "valid", opts: shard.Options{Ring: "w", Identity: "r-0", Namespace: "ns", Object: widget()}, ok: true},
		{name: "short lease", opts: shard.Options{Ring: "w", Identity: "r-0", Namespace: "ns", Object: widget(), LeaseDuration: 3e9, RenewDeadline: 2e9, RenewPeriod: 5e8}, ok: true},
		{name: "no ring", opts: shard.Options{Identity: "r-0", Namespace: "ns", Object: widget()}},
		{name: "bad identity", opts: shard.Options{Ring: "w", Identity: "R 0", Namespace: "ns", Object: widget()}},
		{name: "no namespace", opts: shard.Options{Ring: "w", Identity: "r-0", Object: widget()}},
		{name: "no object", opts: shard.Options{Ring: "w", Identity: "r-0", Namespace: "ns"}},
		{name: "deadline past lease", opts: shard.Options{Ring: "w", Identity: "r-0", Namespace: "ns", Object: widget(), LeaseDuration: 3e9, RenewDeadline: 4e9}},
		{name: "standby", opts: shard.Options{Ring: "w", Identity: "r-0", Namespace: "ns", Object: widget(), Standby: true}, ok: true},
		{name: "drain timeout", opts: shard.Options{Ring: "w", Identity: "r-0", Namespace: "ns", Object: widget(), DrainTimeout: 3e10}, ok: true},
		{name: "negative drain timeout", opts: shard.Options{Ring: "w", Identity: "r-0", Namespace: "ns", Object: widget(), DrainTimeout: -1}},
		{name: "period past deadline", opts: shard.Options{Ring: "w", Identity: "r-0", Namespace: "ns", Object: widget(), LeaseDuration: 3e9, RenewDeadline: 2e9, RenewPeriod: 2e9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := shard.New(tc.opts)
			if got := err == nil; got != tc.ok {
				t.Errorf("New: %v, want ok %v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, shard.ErrInvalidOptions) {
				t.Errorf("New: %v does not wrap ErrInvalidOptions", err)
			}
		})
	}
}

func widget() *testapi.Widget { return &testapi.Widget{} }
