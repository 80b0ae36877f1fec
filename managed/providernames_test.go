package managed

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

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
	e := start(t, cl, nil, WithProviderNames(), WithTiming(Timing{CreationGrace: grace}))
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

// failOutcomeOnly is a client wrapper that fails every write that records
// the outcome of a create, and lets every other write through.
func failOutcomeOnly(c client.Client) client.Client {
	return interceptor.NewClient(asWithWatch(c), interceptor.Funcs{
		Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			data, err := patch.Data(obj)
			if body := string(data); err == nil && (strings.Contains(body, annotationCreateSucceeded) || strings.Contains(body, annotationCreateFailed)) {
				return errors.New("injected: lost the create outcome")
			}
			return cl.Patch(ctx, obj, patch, opts...)
		},
	})
}

// TestLostOutcomeWithSavedProviderNameGoesOn makes every write of a create's
// outcome fail, for a bucket whose name the cloud assigns and shows only a
// second after its creation. The name is saved on its own, right after
// Create: the step, which cannot tell from the object whether the create
// took effect, looks for the resource under that name, finds it once the
// cloud shows it and goes on (Ready), rather than stopping with
// CreateIncomplete; and deletes it when the object is deleted.
func TestLostOutcomeWithSavedProviderNameGoesOn(t *testing.T) {
	cl := newCloud()
	cl.assignNames = true
	cl.lag = time.Second
	e := start(t, cl, failOutcomeOnly, WithProviderNames(), WithTiming(Timing{CreationGrace: time.Minute}))
	e.create("found", 1, "", nil)
	b := e.wait("found", converged)
	name := ExternalName(b)
	if got := cl.live(); len(got) != 1 || got[0] != name {
		t.Errorf("cloud buckets %v, want only the recorded %q", got, name)
	}
	if _, ok := b.Annotations[annotationCreateSucceeded]; ok {
		t.Errorf("annotations %v record the outcome the test kept from being written", b.Annotations)
	}
	e.delete("found")
	e.waitGone("found")
	if got := cl.live(); len(got) != 0 {
		t.Errorf("cloud buckets %v after the object is gone, want none", got)
	}
	if c, _, _ := cl.counts(); c != 1 {
		t.Errorf("%d creates, want 1", c)
	}
}
