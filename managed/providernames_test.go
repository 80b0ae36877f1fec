package managed

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/bosunkit/bosun/bosuntest"
)

// TestVanishedProviderNamedResourceIsReplacedOnce deletes, twice, behind
// the operator's back, a bucket whose name the cloud assigned: each time the
// step creates exactly one replacement and records its name, and over
// several creation grace periods after that creates nothing more.
func TestVanishedProviderNamedResourceIsReplacedOnce(t *testing.T) {
	const grace = 300 * time.Millisecond
	cl := newCloud()
	cl.assignNames = true
	e := start(t, cl, nil, WithProviderNames(), WithCreationGracePeriod(grace))
	e.create("pn", 1, "pn-conn", nil)
	b := e.wait("pn", converged)
	uid := string(b.UID)
	names := []string{ExternalName(b)}

	for round := 1; round <= 2; round++ {
		gone := names[len(names)-1]
		cl.set(func(c *cloud) { delete(c.buckets, gone) })
		var next string
		bosuntest.Eventually(t, func(ctx context.Context) error {
			b := e.get("pn")
			next = ExternalName(b)
			switch next {
			case gone:
				return fmt.Errorf("external name still %q", gone)
			case "":
				// The vanished name is cleared with the pending mark;
				// the replacement's is recorded with the outcome.
				return fmt.Errorf("replacement of %q not recorded yet", gone)
			}
			return checkConditions(b, converged)
		})
		names = append(names, next)

		// Let several grace periods pass, counted in polls of the
		// replacement, then count the creates.
		o0 := cl.observed()
		bosuntest.Eventually(t, func(context.Context) error {
			if n := cl.observed() - o0; n < 8 {
				return fmt.Errorf("%d polls so far, want 8", n)
			}
			return nil
		})
		cl.set(func(c *cloud) {
			if c.creates[uid] != round+1 || c.made != round+1 {
				t.Errorf("round %d: %d creates made %d buckets, want %d: one replacement per vanished bucket", round, c.creates[uid], c.made, round+1)
			}
		})
		if got := cl.live(); len(got) != 1 || got[0] != next {
			t.Errorf("round %d: cloud buckets %v, want only the recorded %q", round, got, next)
		}
		if got := ExternalName(e.get("pn")); got != next {
			t.Errorf("round %d: external name %q, want the replacement %q", round, got, next)
		}
	}
	t.Logf("external names over the test: %v", names)
}
