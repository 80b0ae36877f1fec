package shard

import (
	"fmt"
	"testing"
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
