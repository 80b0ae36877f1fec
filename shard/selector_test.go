package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/shard"
)

// TestObjectSelectorLimitsTheRing runs two members of a ring whose
// ObjectSelector selects the Widgets labelled part=in, beside as many
// Widgets labelled part=out: every selected Widget is labelled for a
// member and has a pass by it, each member caches only its share of the
// selected ones, and no other Widget is ever labelled or cached.
func TestObjectSelectorLimitsTheRing(t *testing.T) {
	r := newRing(t)
	for i := range 6 {
		part := "in"
		if i%2 == 1 {
			part = "out"
		}
		w := &testapi.Widget{
			ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: fmt.Sprintf("w%03d", i), Labels: map[string]string{"part": part}},
			Spec:       testapi.WidgetSpec{Value: 1, Divisor: 1},
		}
		if err := r.cp.Client.Create(t.Context(), w); err != nil {
			t.Fatal(err)
		}
	}
	in := labels.SelectorFromSet(labels.Set{"part": "in"})
	selected := replicaOptions{shard: func(o *shard.Options) { o.ObjectSelector = in }}
	start := time.Now()
	reps := []*replica{r.startWith("r0", selected), r.startWith("r1", selected)}
	shares := map[string]int{}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		byMember, draining, err := r.labelled(ctx)
		if err != nil {
			return err
		}
		clear(shares)
		for member, ws := range byMember {
			for _, w := range ws {
				switch {
				case w.Labels["part"] == "out" && member != "":
					return fmt.Errorf("%s, not selected, is labelled for %q", w.Name, member)
				case w.Labels["part"] == "in" && member == "":
					return fmt.Errorf("%s, selected, is labelled for no member", w.Name)
				case member != "" && !r.j.reconciledBy(client.ObjectKeyFromObject(&w), member, start):
					return fmt.Errorf("%s has had no pass by its member %s", w.Name, member)
				}
			}
			if member != "" {
				shares[member] = len(ws)
			}
		}
		if draining > 0 {
			return fmt.Errorf("%d Widgets draining", draining)
		}
		if shares["r0"]+shares["r1"] != 3 {
			return fmt.Errorf("the members hold %v, want the 3 selected Widgets", shares)
		}
		return nil
	}, bosuntest.Timeout(time.Minute))
	r.checkCaches(shares, reps...)
	checkNoOverlap(t, r.j)
}
