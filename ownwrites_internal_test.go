package bosun

import (
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// TestOwnWritesOrderOfWatches checks that the events of the engine's
// writes of two settled passes, with another's change between them, are
// found the engine's by every watch of the kind whatever its lag: the For
// watch drops them as it is handed them (event), and another watch, which
// is handed them later, after For has had the last version's event and
// the other's change and after the next pass began, finds each one the
// engine's (seen), the other's change excepted.
func TestOwnWritesOrderOfWatches(t *testing.T) {
	t.Parallel()
	o := &ownWrites[*testapi.Widget]{memory: &objectMemory{}, kind: testapi.GroupVersion.WithKind("Widget")}
	key := types.NamespacedName{Namespace: "ns", Name: "w"}
	version := func(rv string) *testapi.Widget {
		return &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, ResourceVersion: rv, Generation: 1}}
	}
	update := func(from, to string) event.UpdateEvent {
		return event.UpdateEvent{ObjectOld: version(from), ObjectNew: version(to)}
	}
	// before is the version a write that made rv replaced.
	before := func(rv string) string {
		n, _ := strconv.Atoi(rv)
		return strconv.Itoa(n - 1)
	}
	// pass runs a pass that writes the versions rvs and leaves the Widget
	// Ready for its generation.
	pass := func(rvs ...string) {
		obj := version(rvs[len(rvs)-1])
		conditions.Set(&obj.Status.Conditions, metav1.Condition{Type: conditions.TypeReady, Status: metav1.ConditionTrue, Reason: "Done", ObservedGeneration: 1}, metav1.Now())
		var done passWrites
		for _, rv := range rvs {
			done.own = o.begin(key, obj.GetUID(), done.own, before(rv))
			o.end(done.own, rv)
		}
		o.close(key, obj, done, ctrl.Result{}, nil)
	}
	pass("1", "2")
	for _, e := range []struct {
		from, to string
		own      bool
	}{{"0", "1", true}, {"1", "2", true}, {"2", "2", false}, {"2", "3", false}} {
		if got := o.event(update(e.from, e.to)); got != e.own {
			t.Errorf("For handed %s->%s: dropped %v, want %v", e.from, e.to, got, e.own)
		}
	}
	// The other's change brings a pass, which writes 4.
	pass("4")
	for _, e := range []struct {
		from, to string
		own      bool
	}{{"0", "1", true}, {"1", "2", true}, {"2", "3", false}, {"3", "4", true}, {"4", "4", false}} {
		if got := o.seen(update(e.from, e.to)); got != e.own {
			t.Errorf("another watch handed %s->%s late: the engine's %v, want %v", e.from, e.to, got, e.own)
		}
	}
	if !o.event(update("3", "4")) {
		t.Error("For handed 3->4: not dropped")
	}
}

// TestOwnWritesOutliveThePredecessorsDeleteEvent checks that the delete
// event of an object, handed to the For watch only after a pass of the
// object made again under its name wrote, forgets nothing of the new
// object (the cache holds the new object before the watch hands on the
// old one's deletion): the events of the new object's writes are still
// found the engine's, and start no pass. The delete event of the new
// object forgets them.
func TestOwnWritesOutliveThePredecessorsDeleteEvent(t *testing.T) {
	t.Parallel()
	o := &ownWrites[*testapi.Widget]{memory: &objectMemory{}, kind: testapi.GroupVersion.WithKind("Widget")}
	key := types.NamespacedName{Namespace: "ns", Name: "w"}
	widget := func(uid types.UID, rv string) *testapi.Widget {
		return &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, UID: uid, ResourceVersion: rv, Generation: 1}}
	}
	// The new Widget's pass writes version 5 and leaves it Ready.
	obj := widget("uid-new", "5")
	conditions.Set(&obj.Status.Conditions, metav1.Condition{Type: conditions.TypeReady, Status: metav1.ConditionTrue, Reason: "Done", ObservedGeneration: 1}, metav1.Now())
	var done passWrites
	done.own = o.begin(key, obj.GetUID(), nil, "4")
	o.end(done.own, "5")
	o.close(key, obj, done, ctrl.Result{}, nil)

	o.forgetGone(widget("uid-old", "3"))
	write := event.UpdateEvent{ObjectOld: widget("uid-new", "4"), ObjectNew: widget("uid-new", "5")}
	if !o.seen(write) {
		t.Error("after the old Widget's delete event, the new one's write is not found the engine's")
	}
	o.forgetGone(widget("uid-new", "5"))
	if o.seen(write) {
		t.Error("after the new Widget's delete event, its write is still found the engine's")
	}
}

// TestOwnWritesLaggingWatchOfTheVersionRead checks that another watch of
// the kind, handed late the event of another's change while the pass that
// change brought is writing over it, does not take that event for the
// write's own (ahead of its answer): the pass that settles is not
// requeued for it, and the watch maps the event as another's.
func TestOwnWritesLaggingWatchOfTheVersionRead(t *testing.T) {
	t.Parallel()
	o := &ownWrites[*testapi.Widget]{memory: &objectMemory{}, kind: testapi.GroupVersion.WithKind("Widget")}
	key := types.NamespacedName{Namespace: "ns", Name: "w"}
	widget := func(rv string) *testapi.Widget {
		w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, UID: "uid", ResourceVersion: rv, Generation: 1}}
		conditions.Set(&w.Status.Conditions, metav1.Condition{Type: conditions.TypeReady, Status: metav1.ConditionTrue, Reason: "Done", ObservedGeneration: 1}, metav1.Now())
		return w
	}
	// A settled pass wrote 1; the For watch had its event.
	var first passWrites
	first.own = o.begin(key, "uid", nil, "0")
	o.end(first.own, "1")
	o.close(key, widget("1"), first, ctrl.Result{}, nil)
	if !o.event(event.UpdateEvent{ObjectOld: widget("0"), ObjectNew: widget("1")}) {
		t.Fatal("For handed 0->1: not dropped")
	}
	// Another's change makes 2; For is handed it, and its pass writes
	// over 2. While that write is on its way, the lagging watch is handed
	// 1->2.
	other := event.UpdateEvent{ObjectOld: widget("1"), ObjectNew: widget("2")}
	if o.event(other) {
		t.Fatal("For handed the other's change 1->2: dropped")
	}
	var second passWrites
	second.own = o.begin(key, "uid", nil, "2")
	if o.seen(other) {
		t.Error("the lagging watch handed 1->2 during the write over 2: taken for the write's own")
	}
	o.end(second.own, "3")
	if res := o.close(key, widget("3"), second, ctrl.Result{}, nil); res.RequeueAfter != 0 {
		t.Errorf("the settled pass is requeued after %v, as if a change came during its write", res.RequeueAfter)
	}
}
