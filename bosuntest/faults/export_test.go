package faults

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/bosunkit/bosun/controlplane"
)

// Names the external tests of the package read.
var (
	ErrPartitioned       = errPartitioned
	DefaultLeaseDuration = defaultLeaseDuration
)

// JournalPass is a pass of a process's journal, as the external tests
// read it.
type JournalPass struct {
	Controller string
	Object     types.NamespacedName
	// Acted and Plain are the record's: the pass found its object, and it
	// was a plain controller-runtime reconciler's (Process.Journal).
	Acted, Plain bool
}

// Passes returns the passes p's journal holds.
func Passes(p *Process) []JournalPass {
	var out []JournalPass
	for _, r := range p.journal.list() {
		out = append(out, JournalPass{Controller: r.controller, Object: r.object, Acted: r.acted, Plain: r.plain})
	}
	return out
}

// Overlaps is the matrix's oracle "no object reconciled by two processes
// at once" on procs.
func Overlaps(procs ...*Process) []string { return overlaps(procs) }

// RunCell runs the matrix's cell of feature f and fault x on op, at the
// size `make test` runs, as RunBattery's Matrix does.
func RunCell(t *testing.T, cp *controlplane.ControlPlane, op Operator, f, x string) {
	t.Helper()
	if !slices.Contains(features, feature(f)) || !slices.Contains(matrixFaults, matrixFault(x)) {
		t.Fatalf("no cell %q x %q in the matrix", f, x)
	}
	b := newBattery(t, cp, op, shortSizes)
	b.runCell(t, shortMatrix, feature(f), matrixFault(x))
}
