package faults

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

// TestShortMatrixCoversEveryRowAndColumn checks that the slice `make test`
// runs has every feature and every fault, on whatever operator, and that
// the full size has every cell.
func TestShortMatrixCoversEveryRowAndColumn(t *testing.T) {
	for _, name := range []string{"simple", "postgres", "hello", "x"} {
		rows, columns := map[int]bool{}, map[int]bool{}
		cells := shortMatrix.cells(name)
		for _, c := range cells {
			rows[c[0]], columns[c[1]] = true, true
		}
		if len(rows) != len(features) || len(columns) != len(matrixFaults) {
			t.Errorf("%s: the short matrix has %d features and %d faults, want %d and %d", name, len(rows), len(columns), len(features), len(matrixFaults))
		}
		if want := len(features) + len(matrixFaults) - 1 + len(features) - 1; len(cells) != want {
			t.Errorf("%s: the short matrix has %d cells, want %d (each feature without a fault, each fault on one replica, one more per other feature)", name, len(cells), want)
		}
		if n := len(fullMatrix.cells(name)); n != len(features)*len(matrixFaults) {
			t.Errorf("%s: the full matrix has %d cells, want %d", name, n, len(features)*len(matrixFaults))
		}
	}
}

// TestOverlaps checks the journal's oracle: two processes' passes of one
// object at once are reported, other pairs are not.
func TestOverlaps(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	obj := types.NamespacedName{Namespace: "ns", Name: "a"}
	other := types.NamespacedName{Namespace: "ns", Name: "b"}
	pass := func(o types.NamespacedName, from, to int) passRecord {
		return passRecord{controller: "c", object: o, start: at(from), end: at(to), acted: true}
	}
	proc := func(name string, died int, passes ...passRecord) *Process {
		p := &Process{name: name}
		p.journal.passes = passes
		if died > 0 {
			p.crashAt.Store(at(died).UnixNano())
		}
		return p
	}
	tests := []struct {
		name  string
		procs []*Process
		want  int
	}{
		{"one process overlapping itself (several workers, one object: the queue forbids it, not the journal's business)",
			[]*Process{proc("r0", 0, pass(obj, 0, 5), pass(obj, 1, 2))}, 0},
		{"two processes, one after the other", []*Process{proc("r0", 0, pass(obj, 0, 1)), proc("r1", 0, pass(obj, 2, 3))}, 0},
		{"two processes, two objects at once", []*Process{proc("r0", 0, pass(obj, 0, 5)), proc("r1", 0, pass(other, 1, 2))}, 0},
		{"two processes, one object at once", []*Process{proc("r0", 0, pass(obj, 0, 5)), proc("r1", 0, pass(obj, 1, 2))}, 1},
		{"a pass of a dead process ends when it died", []*Process{proc("r0", 1, pass(obj, 0, 5)), proc("r1", 0, pass(obj, 2, 3))}, 0},
		{"a pass that found nothing does not count", []*Process{proc("r0", 0, passRecord{controller: "c", object: obj, start: at(0), end: at(5)}), proc("r1", 0, pass(obj, 1, 2))}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := overlaps(tt.procs)
			if diff := cmp.Diff(tt.want, len(got)); diff != "" {
				t.Errorf("overlaps %q (-want +got count):\n%s", got, diff)
			}
		})
	}
}
