package bosun

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
)

// TestBreakerTrips judges the breaker's verdict on one object being
// deleted from what its kind's informer saw: deletions counted by
// namespace within the window, gone ones included, the share of the
// namespace's objects, a deletion older than the window, and a negative
// count that holds every cleanup.
func TestBreakerTrips(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	type objs struct {
		ns             string
		live, deleting int
		gone           int
		deletedMinsAgo int
	}
	tests := []struct {
		name string
		md   MassDeletion
		seen []objs
		// judged is deleted this long ago, in the namespace "a".
		judgedMinsAgo int
		want          string // a part of the reason, "" for not held
	}{
		{name: "a few", seen: []objs{{ns: "a", live: 50, deleting: 3}}},
		{name: "the count", seen: []objs{{ns: "a", deleting: 20}}},
		{name: "past the count", seen: []objs{{ns: "a", deleting: 21}}, want: "21 objects of the kind in namespace a entered deletion within 10m0s, more than 20"},
		{name: "gone ones count", seen: []objs{{ns: "a", deleting: 10, gone: 11}}, want: "21 objects"},
		{name: "other namespaces do not count", seen: []objs{{ns: "a", deleting: 5}, {ns: "b", deleting: 100}}},
		{name: "seen after the window", seen: []objs{{ns: "a", deleting: 30, deletedMinsAgo: 60}}, want: "30 objects"},
		{name: "deletions a window apart", seen: []objs{{ns: "a", deleting: 15, deletedMinsAgo: 30}, {ns: "a", deleting: 15}}},
		{name: "judged object a window before the others", seen: []objs{{ns: "a", deleting: 30}}, judgedMinsAgo: 11},
		{name: "a count of its own", md: MassDeletion{Count: 4}, seen: []objs{{ns: "a", deleting: 5}}, want: "more than 4"},
		{name: "a window of its own", md: MassDeletion{Window: time.Hour}, seen: []objs{{ns: "a", deleting: 30, deletedMinsAgo: 30}}, want: "within 1h0m0s"},
		{name: "share", md: MassDeletion{Share: 0.5}, seen: []objs{{ns: "a", live: 3, deleting: 4}}, want: "4 of the kind's 7 objects in namespace a"},
		{name: "share not passed", md: MassDeletion{Share: 0.5}, seen: []objs{{ns: "a", live: 4, deleting: 4}}},
		{name: "share of one", md: MassDeletion{Share: 0.5}, seen: []objs{{ns: "a", deleting: 1}}},
		{name: "every cleanup", md: MassDeletion{Count: -1}, seen: []objs{{ns: "a", deleting: 1}}, want: "every cleanup"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			count := newDeletionCount()
			h := count.handler()
			var judged *metav1.PartialObjectMetadata
			i := 0
			for _, o := range tt.seen {
				at := metav1.NewTime(now.Add(-time.Duration(o.deletedMinsAgo) * time.Minute))
				for k := range o.live + o.deleting + o.gone {
					i++
					obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: o.ns, Name: fmt.Sprint(i), UID: types.UID(fmt.Sprint(i))}}
					h.OnAdd(obj, false)
					if k < o.live {
						continue
					}
					del := obj.DeepCopy()
					del.DeletionTimestamp = &at
					h.OnUpdate(obj, del)
					if k >= o.live+o.deleting {
						h.OnDelete(toolscache.DeletedFinalStateUnknown{Obj: del})
						continue
					}
					if o.ns == "a" && judged == nil {
						judged = del
					}
				}
			}
			if judged == nil {
				judged = &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "judged", UID: "judged"}}
				at := metav1.NewTime(now)
				judged.DeletionTimestamp = &at
			}
			if tt.judgedMinsAgo > 0 {
				at := metav1.NewTime(now.Add(-time.Duration(tt.judgedMinsAgo) * time.Minute))
				judged.DeletionTimestamp = &at
			}
			got := (&breaker{count: count}).tripped(tt.md, judged, now)
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("tripped = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDeletionCountForgets checks that the count keeps nothing of a
// namespace whose objects are gone two windows after their deletion, and
// keeps a gone object within them.
func TestDeletionCountForgets(t *testing.T) {
	count := newDeletionCount()
	h := count.handler()
	now := time.Now()
	gone := func(ns, name string, ago time.Duration) {
		at := metav1.NewTime(now.Add(-ago))
		obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + name), DeletionTimestamp: &at}}
		h.OnAdd(obj, false)
		h.OnDelete(obj)
	}
	gone("a", "x", time.Hour)
	gone("b", "x", 50*time.Second)
	at := metav1.NewTime(now)
	judged := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "y", UID: "y", DeletionTimestamp: &at}}
	n, all := count.within(judged, time.Minute, now)
	if diff := cmp.Diff([2]int{2, 1}, [2]int{n, all}); diff != "" {
		t.Errorf("within (-want +got):\n%s", diff)
	}
	if _, ok := count.ns["a"]; ok || len(count.ns) != 1 {
		t.Errorf("count keeps namespaces %v, want b alone", count.ns)
	}
}
