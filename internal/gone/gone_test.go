package gone

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestSet(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var s set
	s.Add("a", t0)
	s.Add("", t0)
	tests := []struct {
		uid  types.UID
		now  time.Time
		want bool
	}{
		{"a", t0, true},
		{"a", t0.Add(For - time.Nanosecond), true},
		{"a", t0.Add(For), false},
		{"b", t0, false},
		{"", t0, false},
	}
	for _, tt := range tests {
		at, got := s.Went(tt.uid, tt.now)
		if got != tt.want || got && !at.Equal(t0) {
			t.Errorf("Went(%q, t0+%v) = %v, %v; want %v", tt.uid, tt.now.Sub(t0), at, got, tt.want)
		}
	}
	if n := s.Len(); n != 1 {
		t.Errorf("Len() = %d, want 1 (the empty UID is not kept)", n)
	}
}

func TestSetSweepsOldEntries(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var s set
	for i := range 100 {
		s.Add(types.UID(fmt.Sprint(i)), t0)
	}
	// Within half of For of the last sweep, nothing is swept.
	s.Add("late", t0.Add(For/4))
	if n := s.Len(); n != 101 {
		t.Fatalf("Len() = %d before any entry is old, want 101", n)
	}
	s.Add("later", t0.Add(For))
	if n := s.Len(); n != 2 {
		t.Errorf("Len() = %d after the first 100 are a For old, want 2 (late and later)", n)
	}
}

// BenchmarkSetAdd adds objects that go one after the other, as a mass
// deletion does: the cost of one Add must not grow with the objects that
// went before it.
func BenchmarkSetAdd(b *testing.B) {
	t0 := time.Now()
	var s set
	uids := make([]types.UID, 1<<16)
	for i := range uids {
		uids[i] = types.UID(fmt.Sprint(i))
	}
	b.ResetTimer()
	for i := range b.N {
		s.Add(uids[i%len(uids)], t0.Add(time.Duration(i)*time.Microsecond))
	}
}

func TestBack(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var s set
	s.Add("a", t0)
	s.Add("b", t0)
	s.Add("c", t0.Add(2*time.Second))
	began := t0.Add(time.Second)
	s.Back("a", began)
	s.Back("", began)
	s.Back("b", time.Time{})
	s.Back("c", began)
	if _, went := s.Went("a", t0); went {
		t.Error(`Went("a") after Back("a") = true, want false: the object is back`)
	}
	if _, went := s.Went("b", t0); !went {
		t.Error(`Went("b") = false, want true: only "a" came back (no pass began for "b")`)
	}
	if _, went := s.Went("c", began); !went {
		t.Error(`Went("c") = false, want true: "c" went after the pass began, and stays gone`)
	}
	if got := PassBegan(WithPass(t.Context(), began)); !got.Equal(began) {
		t.Errorf("PassBegan = %v, want %v", got, began)
	}
	if got := PassBegan(t.Context()); !got.IsZero() {
		t.Errorf("PassBegan of no pass = %v, want zero", got)
	}
}
