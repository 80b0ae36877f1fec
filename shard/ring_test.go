package shard_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bosunkit/bosun/shard"
)

func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("ns-%d/object-%d", i%37, i)
	}
	return out
}

func shares(r shard.Ring, ks []string) map[string]int {
	out := map[string]int{}
	for _, k := range ks {
		out[r.Owner(k)]++
	}
	return out
}

func TestRingBalance(t *testing.T) {
	ks := keys(10000)
	for _, members := range [][]string{{"a"}, {"a", "b"}, {"a", "b", "c", "d"}} {
		got := shares(shard.NewRing(members, 0), ks)
		if len(got) != len(members) {
			t.Errorf("%v: shares %v, want one per member", members, got)
		}
		fair := len(ks) / len(members)
		for m, n := range got {
			if n < fair*75/100 || n > fair*125/100 {
				t.Errorf("%v: member %s holds %d keys, want %d within 25%%", members, m, n, fair)
			}
		}
	}
}

func TestRingMovesOnlyTheLeaversKeys(t *testing.T) {
	ks := keys(10000)
	before := shard.NewRing([]string{"a", "b", "c", "d"}, 0)
	after := shard.NewRing([]string{"a", "b", "d"}, 0)
	moved := 0
	for _, k := range ks {
		was, is := before.Owner(k), after.Owner(k)
		if was != "c" && was != is {
			t.Fatalf("key %s moved from %s to %s though %s stayed", k, was, is, was)
		}
		if was != is {
			moved++
		}
	}
	if moved == 0 {
		t.Error("no key of the member that left moved")
	}
	joined := shard.NewRing([]string{"a", "b", "c", "d", "e"}, 0)
	for _, k := range ks {
		if was, is := before.Owner(k), joined.Owner(k); was != is && is != "e" {
			t.Fatalf("key %s moved from %s to %s, not to the member that joined", k, was, is)
		}
	}
}

func TestRingOwner(t *testing.T) {
	for _, tc := range []struct {
		name    string
		members []string
		want    string
	}{
		{name: "no members", want: ""},
		{name: "one member", members: []string{"only"}, want: "only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, shard.NewRing(tc.members, 4).Owner("ns/x")); diff != "" {
				t.Errorf("owner (-want +got):\n%s", diff)
			}
		})
	}
	// The same members in any order give the same ring.
	a, b := shard.NewRing([]string{"x", "y", "z"}, 0), shard.NewRing([]string{"z", "x", "y"}, 0)
	for _, k := range keys(1000) {
		if a.Owner(k) != b.Owner(k) {
			t.Fatalf("key %s: %s and %s for the same members", k, a.Owner(k), b.Owner(k))
		}
	}
}
