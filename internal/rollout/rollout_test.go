package rollout

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		want        Spec
		wantErr     bool
	}{
		{"percent", Spec{Version: "v2", Percent: 10}.Annotations(), Spec{Version: "v2", Percent: 10}, false},
		{"selector", Spec{Version: "v2", Selector: "tier in (a,b)"}.Annotations(), Spec{Version: "v2", Selector: "tier in (a,b)"}, false},
		{"no percent", map[string]string{AnnotationVersion: "v2"}, Spec{Version: "v2"}, false},
		{"no version", map[string]string{AnnotationPercent: "10"}, Spec{Percent: 10}, true},
		{"percent not a number", map[string]string{AnnotationVersion: "v2", AnnotationPercent: "ten"}, Spec{Version: "v2"}, true},
		{"percent too high", map[string]string{AnnotationVersion: "v2", AnnotationPercent: "101"}, Spec{Version: "v2", Percent: 101}, true},
		{"bad selector", map[string]string{AnnotationVersion: "v2", AnnotationSelector: "a in ("}, Spec{Version: "v2", Selector: "a in ("}, true},
		{"version not a label", map[string]string{AnnotationVersion: "v 2"}, Spec{Version: "v 2"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.annotations)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Parse() error = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestChooser checks that a percent takes about its share of the keys,
// that raising it only adds keys, and that the selector adds its own.
func TestChooser(t *testing.T) {
	const keys = 10000
	taken := map[string]bool{}
	for _, percent := range []int{0, 10, 50, 100} {
		c, err := NewChooser(Spec{Version: "v2", Percent: percent})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for i := range keys {
			key := fmt.Sprintf("ns/w%d", i)
			if c.Takes(key, nil) {
				n++
				taken[key] = true
			} else if taken[key] {
				t.Fatalf("%d%% does not take %s, which a lower percent took", percent, key)
			}
		}
		if share := 100 * n / keys; share < percent-2 || share > percent+2 {
			t.Errorf("%d%% takes %d%% of the keys", percent, share)
		}
	}
	c, err := NewChooser(Spec{Version: "v2", Selector: "track=canary"})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Takes("ns/a", map[string]string{"track": "canary"}) || c.Takes("ns/a", map[string]string{"track": "stable"}) || c.Takes("ns/a", nil) {
		t.Error("the selector chooses other objects than those it matches")
	}
}

func TestSummarize(t *testing.T) {
	now := time.Now()
	member := func(name, version string, renewed time.Time, st Stats) coordinationv1.Lease {
		rt := metav1.NewMicroTime(renewed)
		return coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: "widgets-" + name, Labels: map[string]string{LabelVersion: version}, Annotations: map[string]string{AnnotationPasses: st.Encode()}},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To[int32](15), RenewTime: &rt},
		}
	}
	leases := []coordinationv1.Lease{
		member("a", "v1", now, Stats{Passes: 10, Errors: 1, Seconds: 1}),
		member("b", "v1", now, Stats{Passes: 30, Seconds: 2}),
		member("c", "v2", now, Stats{Passes: 5, Errors: 5, Seconds: 3}),
		member("gone", "v2", now.Add(-time.Minute), Stats{Passes: 99}),
		{ObjectMeta: metav1.ObjectMeta{Name: "widgets.canary", Annotations: Spec{Version: "v2", Percent: 20}.Annotations()}},
	}
	want := Summary{
		Canary: &Spec{Version: "v2", Percent: 20},
		Versions: []Version{
			{Version: "v1", Members: []string{"a", "b"}, Stats: Stats{Passes: 40, Errors: 1, Seconds: 3}},
			{Version: "v2", Members: []string{"c"}, Stats: Stats{Passes: 5, Errors: 5, Seconds: 3}},
		},
	}
	if diff := cmp.Diff(want, Summarize("widgets", leases, now)); diff != "" {
		t.Errorf("Summarize() (-want +got):\n%s", diff)
	}
	leases[4].Annotations[AnnotationPercent] = "x"
	if got := Summarize("widgets", leases, now); got.Canary != nil || got.Invalid == nil {
		t.Errorf("an invalid record gives canary %v, invalid %v", got.Canary, got.Invalid)
	}
}
