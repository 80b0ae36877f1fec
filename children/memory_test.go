package children

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/gone"
	"github.com/bosunkit/bosun/internal/testapi"
)

// remembered counts what s remembers of its parents.
func (s *Step[T]) remembered() int { return s.mem.size() }

// TestMemoryIsReleasedWithTheParent makes a step remember a parent (the
// ConfigMap it pruned lately, the object that blocks a child), then takes
// the parent away: deleted, or gone from this replica's cache (a label
// selector on the parents' kind, as with sharding). The step forgets
// everything it remembered of it, without any other pass.
func TestMemoryIsReleasedWithTheParent(t *testing.T) {
	tests := []struct {
		name string
		// blocked puts a ConfigMap the set did not create on the name of
		// a desired child.
		blocked bool
		// leave takes the parent away.
		leave func(e *env, w *testapi.Widget)
	}{
		{"deleted", false, func(e *env, w *testapi.Widget) { e.deleteAndWaitGone(w) }},
		{"deleted while blocked", true, func(e *env, w *testapi.Widget) { e.deleteAndWaitGone(w) }},
		{"gone from the cache", false, moveAway},
		{"gone from the cache while blocked", true, moveAway},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step := NewStep("web", webApp, webKinds())
			// The step's clock stops: the writes it remembers do not
			// expire while the test runs, however slow the machine, and
			// only the parent's going can release them. It stops ahead
			// of the real clock, which times the passes: a parent that
			// goes while a pass runs is noted gone after the pass began,
			// as it is with a running clock (stopped at the start, the
			// note came before the pass, which then took the parent for
			// back and kept what it found).
			stopped := time.Now().Add(time.Hour)
			step.mem.parents.Now = func() time.Time { return stopped }
			// This replica caches only the Widgets labelled shard=here.
			here := labels.SelectorFromSet(labels.Set{"shard": "here"})
			e := startWith(t, reconciler(step), func(o *ctrl.Options) {
				o.Cache.ByObject = map[client.Object]cache.ByObject{&testapi.Widget{}: {Label: here}}
			})
			w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "mine", Labels: map[string]string{"shard": "here"}},
				Spec: testapi.WidgetSpec{Value: 2}}
			if err := e.c.Create(t.Context(), w); err != nil {
				t.Fatal(err)
			}
			e.waitConditions("mine", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
			// One ConfigMap fewer: the step prunes cm-1 and remembers it.
			e.setSpec("mine", 1, 0)
			e.waitConfigMaps(e.ns, map[string]string{"cm-0": "1"})
			if tt.blocked {
				e.createConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "cm-1"}})
				e.setSpec("mine", 2, 0)
				e.waitConditions("mine", map[string]cond{conditions.TypeReady: {metav1.ConditionFalse, ReasonChildExists}})
			}
			if step.remembered() == 0 {
				t.Fatal("the step remembers nothing of the parent: the test checks nothing")
			}
			tt.leave(e, w)
			bosuntest.Eventually(t, func(context.Context) error {
				if n := step.remembered(); n != 0 {
					return fmt.Errorf("the step still remembers %d things of a parent that is gone", n)
				}
				return nil
			})
		})
	}
}

// moveAway relabels the Widget w out of the replica's cache.
func moveAway(e *env, w *testapi.Widget) {
	e.t.Helper()
	if err := e.c.Get(e.t.Context(), client.ObjectKeyFromObject(w), w); err != nil {
		e.t.Fatal(err)
	}
	base := w.DeepCopy()
	w.Labels["shard"] = "elsewhere"
	if err := e.c.Patch(e.t.Context(), w, client.MergeFrom(base)); err != nil {
		e.t.Fatal(err)
	}
}

// TestMemoryRemembersAParentThatCameBack checks that a parent forgotten
// when it left the cache is remembered again once a pass of it starts (the
// step's Do calls Back), as a shard's object handed away and back within
// gone.For is.
func TestMemoryRemembersAParentThatCameBack(t *testing.T) {
	a := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", UID: "uid-a"}}
	var m memory
	m.rememberApply(a, "cm-0", write{hash: "h", at: time.Now()})
	m.forgetOnDelete().Delete(t.Context(), event.DeleteEvent{Object: a}, nil)
	m.rememberApply(a, "cm-0", write{hash: "h", at: time.Now()})
	if _, _, ok := m.lastApply(a, "cm-0", "h"); ok {
		t.Fatal("an apply recorded by a pass that ran as the parent went was kept")
	}
	m.parents.Back(a.UID, time.Now())
	m.rememberApply(a, "cm-0", write{hash: "h", at: time.Now()})
	if _, _, ok := m.lastApply(a, "cm-0", "h"); !ok {
		t.Error("the apply of a parent that came back was not remembered")
	}
}

// TestMemoryForgetsParents fills the memory of a step for two parents,
// then sends the delete events of the parents' watch (forgetOnDelete) and
// of a parent made again under the same name: each event releases all
// that was remembered of its parent (writes, blockers, and the index from
// blockers to parents), and nothing of another parent or of a newer one of
// the same name.
func TestMemoryForgetsParents(t *testing.T) {
	parent := func(name, uid string) *testapi.Widget {
		return &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(uid)}}
	}
	a, b, aAgain := parent("a", "uid-a"), parent("b", "uid-b"), parent("a", "uid-a2")
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	shared := blocker{gvk: gvk, key: types.NamespacedName{Namespace: "ns", Name: "theirs"}}
	fill := func(m *memory, p *testapi.Widget) {
		m.rememberApply(p, "cm-0", write{hash: "h", at: time.Now()})
		m.rememberDelete(p, "child-uid")
		m.setBlockers(p, map[blocker]blockState{shared: {resourceVersion: "1", unseen: true}})
	}
	// requests returns the parents the shared blocker wakes.
	requests := func(m *memory) []string {
		var out []string
		for _, r := range m.blocked(shared) {
			out = append(out, r.Name)
		}
		sort.Strings(out)
		return out
	}
	deleted := func(m *memory, obj client.Object) {
		m.forgetOnDelete().Delete(t.Context(), event.DeleteEvent{Object: obj}, nil)
	}
	tests := []struct {
		name string
		// events are the delete events sent, in order.
		events []client.Object
		// want is the parents the shared blocker still wakes.
		want []string
		// size is what is left.
		size int
	}{
		{"nothing deleted", nil, []string{"a", "b"}, 3},
		{"one parent deleted", []client.Object{a}, []string{"b"}, 2},
		{"both deleted", []client.Object{a, b}, nil, 0},
		{"another parent of the same name deleted", []client.Object{aAgain}, []string{"a", "b"}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m memory
			fill(&m, a)
			fill(&m, b)
			for _, obj := range tt.events {
				deleted(&m, obj)
			}
			if diff := cmp.Diff(tt.want, requests(&m)); diff != "" {
				t.Errorf("parents the blocker wakes (-want +got):\n%s", diff)
			}
			if got := m.size(); got != tt.size {
				t.Errorf("memory holds %d parents and blockers, want %d", got, tt.size)
			}
			_, _, gotA := m.lastApply(a, "cm-0", "h")
			if wantA := slices.Contains(tt.want, "a"); gotA != wantA {
				t.Errorf("the apply of a is remembered: %t, want %t", gotA, wantA)
			}
			if got, want := m.recentDelete(b, "child-uid"), slices.Contains(tt.want, "b"); got != want {
				t.Errorf("the delete of b is remembered: %t, want %t", got, want)
			}
		})
	}

	// A pass that finds no blocker any more drops the parent's, and a
	// parent made again under a name starts afresh.
	var m memory
	fill(&m, a)
	m.setBlockers(a, nil)
	if got := requests(&m); len(got) != 0 {
		t.Errorf("the blocker still wakes %v after a pass found none", got)
	}
	if _, _, ok := m.lastApply(aAgain, "cm-0", "h"); ok {
		t.Error("a parent made again under the name of another has its writes")
	}
	fill(&m, aAgain)
	if got := m.size(); got != 2 {
		t.Errorf("memory holds %d parents and blockers after the parent was made again, want 2 (one parent, one blocker)", got)
	}
}

// TestPollBlockersWakesOncePerChange polls, on an in-memory API server,
// the blockers the cache does not hold: an unchanged one wakes nobody, a
// changed or deleted one wakes its parent once, not at every poll.
func TestPollBlockersWakesOncePerChange(t *testing.T) {
	scheme := testScheme(t)
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "theirs"}}
	server := fake.NewClientBuilder().WithScheme(scheme).WithObjects(theirs).Build()
	if err := server.Get(t.Context(), client.ObjectKeyFromObject(theirs), theirs); err != nil {
		t.Fatal(err)
	}
	step := NewStep[*testapi.Widget]("web", nil, []Kind{Of(&corev1.ConfigMap{})})
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", UID: "uid-w"}}
	b := blocker{gvk: corev1.SchemeGroupVersion.WithKind("ConfigMap"), key: client.ObjectKeyFromObject(theirs)}
	step.mem.setBlockers(w, map[blocker]blockState{b: {resourceVersion: theirs.ResourceVersion, unseen: true}})
	poll := func() []string {
		var out []string
		for _, r := range pollBlockers(t.Context(), step, server) {
			out = append(out, r.Name)
		}
		return out
	}
	steps := []struct {
		name   string
		change func()
		want   []string
	}{
		{"unchanged", func() {}, nil},
		{"labelled", func() {
			theirs.Labels = map[string]string{"team": "blue"}
			if err := server.Update(t.Context(), theirs); err != nil {
				t.Fatal(err)
			}
		}, []string{"w"}},
		{"polled again", func() {}, nil},
		{"deleted", func() {
			if err := server.Delete(t.Context(), theirs); err != nil {
				t.Fatal(err)
			}
		}, []string{"w"}},
		{"polled again after the deletion", func() {}, nil},
	}
	for _, st := range steps {
		st.change()
		if diff := cmp.Diff(st.want, poll()); diff != "" {
			t.Errorf("%s: parents woken (-want +got):\n%s", st.name, diff)
		}
	}
	if n := step.mem.size(); n != 0 {
		t.Errorf("memory holds %d parents and blockers after the blocker went, want 0", n)
	}
}

// TestMemoryIgnoresLatePassesOfForgottenParents checks that a pass of a
// parent still running when the parent went (its delete event came first)
// leaves nothing in memory: what it found is not remembered once the
// parent is forgotten, until gone.For has passed.
func TestMemoryIgnoresLatePassesOfForgottenParents(t *testing.T) {
	now := time.Now()
	m := &memory{}
	m.parents.Now = func() time.Time { return now }
	p := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid-p"}}
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	m.rememberApply(p, "cm-0", write{hash: "h", at: now})
	m.forget(p)
	// The pass that was running ends now.
	m.rememberApply(p, "cm-1", write{hash: "h", at: now})
	m.rememberDelete(p, "child-uid")
	m.setBlockers(p, map[blocker]blockState{{gvk: gvk, key: types.NamespacedName{Namespace: "ns", Name: "theirs"}}: {resourceVersion: "1"}})
	if n := m.size(); n != 0 {
		t.Fatalf("memory holds %d things of a parent it forgot", n)
	}
	now = now.Add(gone.For)
	m.expire()
	m.rememberDelete(p, "child-uid")
	if n := m.size(); n != 1 {
		t.Errorf("memory holds %d things of the parent %s after it was forgotten, want 1", n, gone.For)
	}
}
