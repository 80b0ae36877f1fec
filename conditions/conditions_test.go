package conditions_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/conditions"
)

var (
	t0 = metav1.NewTime(time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC))
	t1 = metav1.NewTime(time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC))
	// t1Nanos is t1 with a fraction of a second, which Set drops.
	t1Nanos = metav1.NewTime(t1.Add(750 * time.Millisecond))
)

// cond builds a condition with a transition time.
func cond(typ string, status metav1.ConditionStatus, reason conditions.Reason, message string, gen int64, ltt metav1.Time) metav1.Condition {
	return metav1.Condition{
		Type: typ, Status: status, Reason: string(reason), Message: message,
		ObservedGeneration: gen, LastTransitionTime: ltt,
	}
}

const (
	cTrue    = metav1.ConditionTrue
	cFalse   = metav1.ConditionFalse
	cUnknown = metav1.ConditionUnknown
)

func TestSet(t *testing.T) {
	synced := cond("Synced", cTrue, "Done", "all good", 3, t0)
	tests := []struct {
		name        string
		conds       []metav1.Condition
		c           metav1.Condition
		now         metav1.Time
		wantConds   []metav1.Condition
		wantChanged bool
	}{
		{
			name:        "new condition into nil slice gets now",
			c:           cond("Synced", cTrue, "Done", "all good", 3, metav1.Time{}),
			now:         t1,
			wantConds:   []metav1.Condition{cond("Synced", cTrue, "Done", "all good", 3, t1)},
			wantChanged: true,
		},
		{
			name:        "new condition appended after others, its own time ignored, now cut to seconds",
			conds:       []metav1.Condition{synced},
			c:           cond("Ready", cFalse, "Broken", "no", 3, t0),
			now:         t1Nanos,
			wantConds:   []metav1.Condition{synced, cond("Ready", cFalse, "Broken", "no", 3, t1)},
			wantChanged: true,
		},
		{
			name:      "identical condition changes nothing",
			conds:     []metav1.Condition{synced},
			c:         cond("Synced", cTrue, "Done", "all good", 3, metav1.Time{}),
			now:       t1,
			wantConds: []metav1.Condition{synced},
		},
		{
			name:        "status change moves the transition time",
			conds:       []metav1.Condition{synced},
			c:           cond("Synced", cFalse, "Done", "all good", 3, metav1.Time{}),
			now:         t1Nanos,
			wantConds:   []metav1.Condition{cond("Synced", cFalse, "Done", "all good", 3, t1)},
			wantChanged: true,
		},
		{
			name:        "reason change keeps the transition time",
			conds:       []metav1.Condition{synced},
			c:           cond("Synced", cTrue, "Other", "all good", 3, metav1.Time{}),
			now:         t1,
			wantConds:   []metav1.Condition{cond("Synced", cTrue, "Other", "all good", 3, t0)},
			wantChanged: true,
		},
		{
			name:        "message change keeps the transition time",
			conds:       []metav1.Condition{synced},
			c:           cond("Synced", cTrue, "Done", "still good", 3, metav1.Time{}),
			now:         t1,
			wantConds:   []metav1.Condition{cond("Synced", cTrue, "Done", "still good", 3, t0)},
			wantChanged: true,
		},
		{
			name:        "observed generation change keeps the transition time",
			conds:       []metav1.Condition{synced},
			c:           cond("Synced", cTrue, "Done", "all good", 4, metav1.Time{}),
			now:         t1,
			wantConds:   []metav1.Condition{cond("Synced", cTrue, "Done", "all good", 4, t0)},
			wantChanged: true,
		},
		{
			name:        "only the condition of the same type is updated",
			conds:       []metav1.Condition{cond("A", cTrue, "R", "", 1, t0), cond("B", cTrue, "R", "", 1, t0)},
			c:           cond("B", cUnknown, "S", "m", 1, metav1.Time{}),
			now:         t1,
			wantConds:   []metav1.Condition{cond("A", cTrue, "R", "", 1, t0), cond("B", cUnknown, "S", "m", 1, t1)},
			wantChanged: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.conds
			if tt.conds != nil {
				got = append([]metav1.Condition(nil), tt.conds...)
			}
			changed := conditions.Set(&got, tt.c, tt.now)
			if changed != tt.wantChanged {
				t.Errorf("Set() changed = %v, want %v", changed, tt.wantChanged)
			}
			if diff := cmp.Diff(tt.wantConds, got); diff != "" {
				t.Errorf("conditions mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetEdgeCases(t *testing.T) {
	if conditions.Set(nil, cond("Ready", cTrue, "R", "", 1, t0), t1) {
		t.Error("Set(nil, ...) = true, want false")
	}

	var conds []metav1.Condition
	before := time.Now().Add(-time.Second)
	if !conditions.Set(&conds, cond("Ready", cTrue, "R", "", 1, metav1.Time{}), metav1.Time{}) {
		t.Fatal("Set() with a zero clock = false, want true")
	}
	got := conds[0].LastTransitionTime
	if got.Before(&metav1.Time{Time: before}) || got.Nanosecond() != 0 {
		t.Errorf("LastTransitionTime with a zero clock = %v, want the current time in whole seconds", got)
	}
}

func TestInit(t *testing.T) {
	initializing := func(typ string, gen int64, ltt metav1.Time) metav1.Condition {
		return cond(typ, cUnknown, conditions.ReasonInitializing, conditions.MessageInitializing, gen, ltt)
	}
	synced := cond("Synced", cTrue, "Done", "", 1, t0)
	tests := []struct {
		name      string
		conds     []metav1.Condition
		types     []string
		wantConds []metav1.Condition
		wantAdded bool
	}{
		{
			name:      "no types adds nothing",
			wantConds: nil,
		},
		{
			name:      "missing types added in order",
			types:     []string{"Ready", "Synced"},
			wantConds: []metav1.Condition{initializing("Ready", 2, t1), initializing("Synced", 2, t1)},
			wantAdded: true,
		},
		{
			name:      "existing conditions kept as they are",
			conds:     []metav1.Condition{synced},
			types:     []string{"Synced", "Ready"},
			wantConds: []metav1.Condition{synced, initializing("Ready", 2, t1)},
			wantAdded: true,
		},
		{
			name:      "all present adds nothing",
			conds:     []metav1.Condition{synced},
			types:     []string{"Synced"},
			wantConds: []metav1.Condition{synced},
		},
		{
			name:      "empty and repeated types skipped",
			types:     []string{"", "Ready", "Ready"},
			wantConds: []metav1.Condition{initializing("Ready", 2, t1)},
			wantAdded: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := append([]metav1.Condition(nil), tt.conds...)
			added := conditions.Init(&got, 2, t1Nanos, tt.types...)
			if added != tt.wantAdded {
				t.Errorf("Init() = %v, want %v", added, tt.wantAdded)
			}
			if diff := cmp.Diff(tt.wantConds, got); diff != "" {
				t.Errorf("conditions mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if conditions.Init(nil, 1, t0, "Ready") {
		t.Error("Init(nil, ...) = true, want false")
	}
}

func TestStampGeneration(t *testing.T) {
	got := []metav1.Condition{cond("A", cTrue, "R", "", 1, t0), cond("B", cFalse, "S", "m", 0, t1)}
	conditions.StampGeneration(got, 7)
	want := []metav1.Condition{cond("A", cTrue, "R", "", 7, t0), cond("B", cFalse, "S", "m", 7, t1)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("conditions mismatch (-want +got):\n%s", diff)
	}
	conditions.StampGeneration(nil, 7) // must not panic
}

func TestFind(t *testing.T) {
	conds := []metav1.Condition{cond("A", cTrue, "R", "", 1, t0), cond("B", cFalse, "S", "m", 1, t0)}
	if c := conditions.Find(conds, "B"); c == nil || c.Reason != "S" {
		t.Fatalf("Find(B) = %v, want the condition B", c)
	}
	conditions.Find(conds, "B").Message = "changed"
	if conds[1].Message != "changed" {
		t.Error("Find returned a copy, want a pointer into the slice")
	}
	if c := conditions.Find(conds, "C"); c != nil {
		t.Errorf("Find(C) = %v, want nil", c)
	}
}

func TestSummarize(t *testing.T) {
	readyTrue := metav1.Condition{
		Type: conditions.TypeReady, Status: cTrue, Reason: string(conditions.ReasonSucceeded), ObservedGeneration: 5,
	}
	ready := func(status metav1.ConditionStatus, reason conditions.Reason, message string) metav1.Condition {
		return metav1.Condition{
			Type: conditions.TypeReady, Status: status, Reason: string(reason), Message: message, ObservedGeneration: 5,
		}
	}
	tests := []struct {
		name  string
		conds []metav1.Condition
		order []string
		want  metav1.Condition
	}{
		{
			name: "no conditions is ready",
			want: readyTrue,
		},
		{
			name:  "all true is ready",
			conds: []metav1.Condition{cond("A", cTrue, "Fine", "a", 1, t0), cond("B", cTrue, "Fine", "b", 1, t0)},
			order: []string{"A", "B"},
			want:  readyTrue,
		},
		{
			name:  "false beats unknown even when later in order",
			conds: []metav1.Condition{cond("A", cUnknown, "Waiting", "a", 1, t0), cond("B", cFalse, "Broken", "b", 1, t0)},
			order: []string{"A", "B"},
			want:  ready(cFalse, "Broken", "b"),
		},
		{
			name: "first false in order wins a tie",
			conds: []metav1.Condition{
				cond("A", cFalse, "FirstInSlice", "a", 1, t0),
				cond("B", cFalse, "FirstInOrder", "b", 1, t0),
			},
			order: []string{"B", "A"},
			want:  ready(cFalse, "FirstInOrder", "b"),
		},
		{
			name: "first unknown in order wins among unknowns",
			conds: []metav1.Condition{
				cond("A", cTrue, "Fine", "", 1, t0),
				cond("B", cUnknown, "Pending", "b", 1, t0),
				cond("C", cUnknown, "Later", "c", 1, t0),
			},
			order: []string{"A", "B", "C"},
			want:  ready(cUnknown, "Pending", "b"),
		},
		{
			name: "ready itself is ignored",
			conds: []metav1.Condition{
				cond(conditions.TypeReady, cFalse, "Stale", "old", 1, t0),
				cond("A", cTrue, "Fine", "", 1, t0),
			},
			order: []string{conditions.TypeReady, "A"},
			want:  readyTrue,
		},
		{
			name:  "conditions not in order are ignored",
			conds: []metav1.Condition{cond("A", cTrue, "Fine", "", 1, t0), cond("Other", cFalse, "Broken", "x", 1, t0)},
			order: []string{"A"},
			want:  readyTrue,
		},
		{
			name:  "missing listed condition counts as initializing",
			conds: []metav1.Condition{cond("A", cTrue, "Fine", "", 1, t0)},
			order: []string{"A", "B"},
			want:  ready(cUnknown, conditions.ReasonInitializing, conditions.MessageInitializing),
		},
		{
			name:  "odd status counts as unknown",
			conds: []metav1.Condition{cond("A", "Maybe", "Odd", "a", 1, t0)},
			order: []string{"A"},
			want:  ready(cUnknown, "Odd", "a"),
		},
		{
			name:  "empty reason and message filled in",
			conds: []metav1.Condition{cond("A", cFalse, "", "", 1, t0)},
			order: []string{"A"},
			want:  ready(cFalse, "NotReady", "condition A is False"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := conditions.Summarize(tt.conds, tt.order, 5)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Summarize() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
