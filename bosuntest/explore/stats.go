package explore

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/internal/figures"
)

// Stats counts what explorations reached, for a test to report: the
// sequences run, the steps applied and the distinct spec shapes reached.
// Run adds to the Stats of its Options; one Stats may be shared by several
// Run calls, of one target or of several, at once. The runs of the shorter
// sequences that shrinking a failure makes are not counted. The zero value
// is ready to use.
type Stats struct {
	mu        sync.Mutex
	sequences int
	steps     int
	shapes    map[string]struct{}
}

// Sequences returns the number of sequences run: one for each Run.
func (s *Stats) Sequences() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sequences
}

// Steps returns the number of changes applied, of the sequences run:
// those the API server admitted that changed the spec.
func (s *Stats) Steps() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.steps
}

// Shapes returns the number of distinct spec shapes reached, the base
// specs' among them. The shape of a spec is, for each field the changes of
// its schema reach, whether it is absent ("removed") or holds a value of
// the generator's, and then the class of that value, or another value (as
// a base spec may hold). Objects of different kinds have different
// shapes.
func (s *Stats) Shapes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.shapes)
}

// sequence counts a sequence run.
func (s *Stats) sequence() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sequences++
}

// reached counts a spec reached: by a step applied when step is true, or
// by a create.
func (s *Stats) reached(step bool, shape string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if step {
		s.steps++
	}
	if s.shapes == nil {
		s.shapes = map[string]struct{}{}
	}
	s.shapes[shape] = struct{}{}
}

// otherValue is the shape's word for a field that holds a value the
// generator does not make.
const otherValue = "base"

// shapeOf returns the shape of spec, among the changes of one schema (see
// Stats.Shapes), prefixed by kind: "Kind: spec.a=valid, spec.b=removed".
// The fields are those the changes reach, in their order.
func shapeOf(kind string, changes []Change, spec map[string]any) string {
	var b strings.Builder
	b.WriteString(kind + ":")
	for i := 0; i < len(changes); {
		// The changes of one field are next to each other.
		j := i + 1
		for j < len(changes) && slices.Equal(changes[j].Path, changes[i].Path) {
			j++
		}
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(" spec." + strings.Join(changes[i].Path, ".") + "=" + classAt(changes[i:j], spec))
		i = j
	}
	return b.String()
}

// classAt returns the word of the shape for the field that changes, all
// at one path, change in spec: "removed" when absent, the class of the
// first of changes that sets its value, or otherValue.
func classAt(changes []Change, spec map[string]any) string {
	v, ok := lookup(spec, changes[0].Path)
	if !ok {
		return Removed.String()
	}
	got, err := json.Marshal(v)
	if err != nil {
		return otherValue
	}
	for _, c := range changes {
		if c.Class == Removed {
			continue
		}
		if want, err := json.Marshal(c.Value); err == nil && string(want) == string(got) {
			return c.Class.String()
		}
	}
	return otherValue
}

// lookup returns the value at path in spec, and whether it is there.
func lookup(spec map[string]any, path []string) (any, bool) {
	var v any = spec
	for _, name := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[name]; !ok {
			return nil, false
		}
	}
	return v, true
}

// rowExplore is the figures' name of an exploration's row.
const rowExplore = "exploration from the CRD schema"

// Record records what s counted, with the number of sequences that
// failed, as the figures of the example's exploration (package
// internal/figures).
func (s *Stats) Record(t bosuntest.TB, example string, failures int) {
	t.Helper()
	fig := func(name string, n int, goal string) figures.Figure {
		return figures.Figure{Test: rowExplore, Example: example, Name: name, Value: strconv.Itoa(n), Goal: goal}
	}
	figures.Record(t, fig("sequences", s.Sequences(), ""), fig("steps", s.Steps(), ""),
		fig("distinct spec shapes", s.Shapes(), ""), fig("failures", failures, "0"))
}
