package gone

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

// held is one object's value in a Memory, as the tests compare them.
type held struct {
	UID types.UID
	V   string
}

// contents returns what m holds, by name.
func contents(m *Memory[string]) map[string]held {
	out := map[string]held{}
	m.Range(func(key types.NamespacedName, uid types.UID, v string) bool {
		out[key.Name] = held{uid, v}
		return true
	})
	return out
}

// keeping is the fn of an Update that keeps v.
func keeping(v string) func(string, bool) (string, bool) {
	return func(string, bool) (string, bool) { return v, true }
}

// appending is the fn of an Update that appends v to the value held.
func appending(v string) func(string, bool) (string, bool) {
	return func(old string, _ bool) (string, bool) { return old + v, true }
}

// dropping is the fn of an Update that keeps nothing.
func dropping(string, bool) (string, bool) { return "", false }

func TestMemory(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }
	a, b := key("a"), key("b")
	tests := []struct {
		name string
		// ops run in order on a Memory whose clock reads t0 plus the
		// time they move it on.
		ops  []func(m *Memory[string], clock *time.Time)
		want map[string]held
	}{{
		name: "updates keep the value fn makes",
		ops: []func(*Memory[string], *time.Time){
			func(m *Memory[string], _ *time.Time) { m.Update(a, "uid-a", keeping("1")) },
			func(m *Memory[string], _ *time.Time) { m.Update(a, "uid-a", appending("2")) },
			func(m *Memory[string], _ *time.Time) { m.Update(b, "uid-b", keeping("x")) },
		},
		want: map[string]held{"a": {"uid-a", "12"}, "b": {"uid-b", "x"}},
	}, {
		name: "a value not kept is dropped",
		ops: []func(*Memory[string], *time.Time){
			func(m *Memory[string], _ *time.Time) { m.Update(a, "uid-a", keeping("1")) },
			func(m *Memory[string], _ *time.Time) { m.Update(a, "uid-a", dropping) },
			func(m *Memory[string], _ *time.Time) { m.Update(b, "uid-b", dropping) },
		},
		want: map[string]held{},
	}, {
		name: "an object made again under the name replaces its predecessor's value",
		ops: []func(*Memory[string], *time.Time){
			func(m *Memory[string], _ *time.Time) { m.Update(a, "uid-a", keeping("old")) },
			func(m *Memory[string], _ *time.Time) { m.Update(a, "uid-a2", appending("new")) },
		},
		want: map[string]held{"a": {"uid-a2", "new"}},
	}, {
		name: "an update that keeps nothing drops a predecessor's value too",
		ops: []func(*Memory[string], *time.Time){
			func(m *Memory[string], _ *time.Time) { m.Update(a, "uid-a", keeping("old")) },
			func(m *Memory[string], _ *time.Time) { m.Update(a, "uid-a2", dropping) },
		},
		want: map[string]held{},
	}, {
		name: "an empty UID updates whichever object holds the name",
		ops: []func(*Memory[string], *time.Time){
			func(m *Memory[string], _ *time.Time) { m.Update(a, "uid-a", keeping("1")) },
			func(m *Memory[string], _ *time.Time) { m.Update(a, "", appending("2")) },
			func(m *Memory[string], _ *time.Time) { m.Update(b, "", keeping("x")) },
		},
		want: map[string]held{"a": {"uid-a", "12"}, "b": {"", "x"}},
	}, {
		name: "forget drops the object's value",
		ops: []func(*Memory[string], *time.Time){
			func(m *Memory[string], _ *time.Time) { m.Update(a, "uid-a", keeping("1")) },
			func(m *Memory[string], _ *time.Time) { m.Update(b, "uid-b", keeping("x")) },
			func(m *Memory[string], _ *time.Time) { m.Forget(a, "uid-a") },
		},
		want: map[string]held{"b": {"uid-b", "x"}},
	}, {
		name: "forget of a predecessor keeps the value of the object made again",
		ops: []func(*Memory[string], *time.Time){
			func(m *Memory[string], _ *time.Time) { m.Update(a, "uid-a2", keeping("new")) },
			func(m *Memory[string], _ *time.Time) { m.Forget(a, "uid-a") },
		},
		want: map[string]held{"a": {"uid-a2", "new"}},
	}, {
		name: "forget with an empty UID drops whichever object holds the name",
		ops: []func(*Memory[string], *time.Time){
			func(m *Memory[string], _ *time.Time) { m.Update(a, "uid-a", keeping("1")) },
			func(m *Memory[string], _ *time.Time) { m.Forget(a, "") },
			func(m *Memory[string], _ *time.Time) { m.Update(a, "uid-a", keeping("2")) },
		},
		want: map[string]held{"a": {"uid-a", "2"}},
	}, {
		name: "a pass still running when its object went keeps nothing",
		ops: []func(*Memory[string], *time.Time){
			func(m *Memory[string], _ *time.Time) { m.Update(a, "uid-a", keeping("1")) },
			func(m *Memory[string], _ *time.Time) { m.Forget(a, "uid-a") },
			func(m *Memory[string], _ *time.Time) { m.Update(a, "uid-a", keeping("late")) },
			func(m *Memory[string], _ *time.Time) { m.Update(b, "uid-b", keeping("x")) },
		},
		want: map[string]held{"b": {"uid-b", "x"}},
	}, {
		name: "a pass that began before the object went keeps nothing",
		ops: []func(*Memory[string], *time.Time){
			func(m *Memory[string], clock *time.Time) { *clock = clock.Add(time.Second); m.Forget(a, "uid-a") },
			func(m *Memory[string], _ *time.Time) { m.Back("uid-a", t0) },
			func(m *Memory[string], _ *time.Time) { m.Update(a, "uid-a", keeping("late")) },
		},
		want: map[string]held{},
	}, {
		name: "a pass that began after the object went takes it back",
		ops: []func(*Memory[string], *time.Time){
			func(m *Memory[string], _ *time.Time) { m.Forget(a, "uid-a") },
			func(m *Memory[string], clock *time.Time) { *clock = clock.Add(time.Second); m.Back("uid-a", *clock) },
			func(m *Memory[string], _ *time.Time) { m.Update(a, "uid-a", keeping("back")) },
		},
		want: map[string]held{"a": {"uid-a", "back"}},
	}, {
		name: "an object gone for For is remembered again",
		ops: []func(*Memory[string], *time.Time){
			func(m *Memory[string], _ *time.Time) { m.Forget(a, "uid-a") },
			func(m *Memory[string], clock *time.Time) { *clock = clock.Add(For) },
			func(m *Memory[string], _ *time.Time) { m.Update(a, "uid-a", keeping("1")) },
		},
		want: map[string]held{"a": {"uid-a", "1"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := t0
			m := &Memory[string]{Now: func() time.Time { return clock }}
			for _, op := range tt.ops {
				op(m, &clock)
			}
			if diff := cmp.Diff(tt.want, contents(m)); diff != "" {
				t.Errorf("contents (-want +got):\n%s", diff)
			}
			if n := m.Len(); n != len(tt.want) {
				t.Errorf("Len() = %d, want %d", n, len(tt.want))
			}
			for name, h := range tt.want {
				if v, ok := m.Load(key(name), h.UID); !ok || v != h.V {
					t.Errorf("Load(%s, %s) = %q, %v; want %q, true", name, h.UID, v, ok, h.V)
				}
			}
		})
	}
}

func TestMemoryLoad(t *testing.T) {
	var m Memory[string]
	a := types.NamespacedName{Namespace: "ns", Name: "a"}
	m.Update(a, "uid-a", keeping("1"))
	tests := []struct {
		uid    types.UID
		want   string
		wantOK bool
	}{
		{"uid-a", "1", true},
		{"", "1", true},
		{"uid-a2", "", false},
	}
	for _, tt := range tests {
		if v, ok := m.Load(a, tt.uid); v != tt.want || ok != tt.wantOK {
			t.Errorf("Load(a, %q) = %q, %v; want %q, %v", tt.uid, v, ok, tt.want, tt.wantOK)
		}
	}
	if v, ok := m.Load(types.NamespacedName{Namespace: "ns", Name: "b"}, ""); ok {
		t.Errorf("Load(b) = %q, true; want nothing", v)
	}
	if v, ok := m.Forget(a, "uid-a"); !ok || v != "1" {
		t.Errorf("Forget(a) = %q, %v; want the value dropped, \"1\"", v, ok)
	}
	if !m.Went("uid-a") || m.Went("uid-b") {
		t.Errorf("Went(uid-a), Went(uid-b) = %v, %v; want true, false", m.Went("uid-a"), m.Went("uid-b"))
	}
}

// TestMemoryUpdatesRace runs many Updates of one object at once: each
// one's change is kept, none is lost to another's.
func TestMemoryUpdatesRace(t *testing.T) {
	var m Memory[int]
	a := types.NamespacedName{Namespace: "ns", Name: "a"}
	const n = 200
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			m.Update(a, "uid-a", func(v int, _ bool) (int, bool) { return v + 1, true })
		})
	}
	wg.Wait()
	if v, _ := m.Load(a, "uid-a"); v != n {
		t.Errorf("value after %d increments = %d", n, v)
	}
}

// TestMemoryForgetRacesUpdates forgets objects while passes of them
// record something, at the same moment, in rounds: whichever comes first,
// nothing is left of the objects that went, and the others keep their
// values.
func TestMemoryForgetRacesUpdates(t *testing.T) {
	const rounds, n = 10, 1000
	key := func(i int) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: fmt.Sprint(i)} }
	uid := func(i int) types.UID { return types.UID(fmt.Sprint("uid-", i)) }
	for r := range rounds {
		var m Memory[string]
		// A third of the objects hold nothing yet: their pass records the
		// first value.
		for i := range n {
			if i%3 != 0 {
				m.Update(key(i), uid(i), keeping("before"))
			}
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				<-start
				m.Update(key(i), uid(i), appending("+pass"))
			})
			if i%2 == 0 {
				wg.Go(func() {
					<-start
					m.Forget(key(i), uid(i))
				})
			}
		}
		close(start)
		wg.Wait()
		for i := range n {
			v, ok := m.Load(key(i), uid(i))
			if gone := i%2 == 0; gone && ok {
				t.Errorf("round %d: object %d went, yet the memory holds %q of it", r, i, v)
			} else if want := map[bool]string{true: "+pass", false: "before+pass"}[i%3 == 0]; !gone && v != want {
				t.Errorf("round %d: object %d holds %q, want %q", r, i, v, want)
			}
		}
		if got := m.Len(); got != n/2 {
			t.Errorf("round %d: Len() = %d, want %d", r, got, n/2)
		}
	}
}
