package bosun

import (
	"reflect"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/internal/drawing"
)

// Graph is a plain description of a Reconciler, for reading and drawing:
// its name, its finalizer and its steps, in order, with the phases each
// has and the conditions each owns.
// Reconciler.Graph makes it; Mermaid and DOT draw it.
type Graph struct {
	// Name is the reconciler's Name.
	Name string
	// Finalizer is the reconciler's Finalizer; "" for none.
	Finalizer string
	// Steps are the reconciler's Steps, in order.
	Steps []GraphStep
}

// GraphStep describes one step of a Graph.
type GraphStep struct {
	// Name is the step's name (see StepName).
	Name string
	// Kind is, for a composite, how it arranges its steps: "Sequence",
	// "Join", "OrderedJoin", "ParallelJoin", "If", "Timeout", "Retry",
	// "WithConditions" or "WithSetup" for the composites of this package,
	// "Composite" for any other. It is "" for a step that is not a
	// composite.
	Kind string
	// Phases are the phases the step has, in the order of a pass: claim,
	// do, observe, cleanup, post. Every step has phaseDo.
	Phases []string
	// Conditions are the condition types the step owns (ConditionOwner),
	// in its order.
	Conditions []string
	// Steps are a composite's steps, in order.
	Steps []GraphStep
}

// graphOf describes the reconciler named name with finalizer and steps (see
// Reconciler.Graph).
func graphOf[T client.Object](name, finalizer string, steps []Step[T]) Graph {
	return Graph{Name: name, Finalizer: finalizer, Steps: graphSteps(steps, 0)}
}

// graphSteps describes steps, depth levels down the step tree.
func graphSteps[T client.Object](steps []Step[T], depth int) []GraphStep {
	if depth > maxDepth {
		return nil
	}
	out := make([]GraphStep, 0, len(steps))
	for _, s := range steps {
		out = append(out, graphStep(s, depth))
	}
	return out
}

// graphStep describes s, found depth levels down the step tree.
func graphStep[T client.Object](s Step[T], depth int) GraphStep {
	if s == nil || reflect.ValueOf(s).Kind() == reflect.Pointer && reflect.ValueOf(s).IsNil() {
		// Validate refuses it; its methods may not bear a nil receiver.
		return GraphStep{Name: "<nil>", Phases: []phase{phaseDo}}
	}
	gs := GraphStep{Name: StepName(s)}
	if _, ok := s.(Claimer[T]); ok {
		gs.Phases = append(gs.Phases, phaseClaim)
	}
	gs.Phases = append(gs.Phases, phaseDo)
	if _, ok := s.(Observer[T]); ok {
		gs.Phases = append(gs.Phases, phaseObserve)
	}
	if _, ok := s.(Cleaner[T]); ok {
		gs.Phases = append(gs.Phases, phaseCleanup)
	}
	if _, ok := s.(Poster[T]); ok {
		gs.Phases = append(gs.Phases, phasePost)
	}
	if co, ok := s.(ConditionOwner); ok {
		gs.Conditions = slices.Clone(co.Conditions())
	}
	switch c := s.(type) {
	case *Group[T]:
		gs.Kind, gs.Steps = c.kind, graphSteps(c.steps, depth+1)
	case Composite[T]:
		gs.Kind, gs.Steps = "Composite", graphSteps(c.Steps(), depth+1)
	}
	if len(gs.Conditions) == 0 {
		gs.Conditions = nil
	}
	return gs
}

// Title returns the title of the drawings of g: "reconciler NAME", with
// ", finalizer FINALIZER" when it has one.
func (g Graph) Title() string {
	t := "reconciler " + g.Name
	if g.Finalizer != "" {
		t += ", finalizer " + g.Finalizer
	}
	return t
}

// Mermaid draws g as a Mermaid flowchart (top to bottom), titled with
// Title. A subgraph "do, in step order" chains the steps as their Do runs;
// a subgraph "cleanup, on deletion, in reverse order" chains the steps
// that clean up, the other way round. In the first:
//
//   - a step is a box labelled "NAME: PHASES", with "; conditions A, B"
//     when it owns conditions;
//   - a composite is a subgraph with that label around its steps: a
//     Sequence chains them; a Join, OrderedJoin, ParallelJoin or other
//     composite forks to each and merges after them (an OrderedJoin's
//     edges numbered); If, Timeout, Retry,
//     WithConditions and WithSetup hold their one step.
//
// Node and subgraph ids follow the order of a depth-first walk, so the
// output is deterministic.
func (g Graph) Mermaid() string { return g.drawing().Mermaid() }

// DOT draws g as a Graphviz digraph with the same structure as Mermaid,
// clusters for subgraphs, and the title as the graph's label.
func (g Graph) DOT() string { return g.drawing().DOT() }

// drawing builds the drawing Mermaid and DOT render.
func (g Graph) drawing() *drawing.Drawing {
	d := drawing.New(g.Title())
	do := d.Root().Cluster("do, in step order")
	drawChain(d, do, g.Steps)
	var cleaners []string
	var collect func([]GraphStep)
	collect = func(steps []GraphStep) {
		for _, s := range steps {
			if slices.Contains(s.Phases, phaseCleanup) {
				cleaners = append(cleaners, s.Name)
			}
			collect(s.Steps)
		}
	}
	collect(g.Steps)
	if len(cleaners) > 0 {
		cleanup := d.Root().Cluster("cleanup, on deletion, in reverse order")
		prev := ""
		for _, name := range slices.Backward(cleaners) {
			id := cleanup.Box(name)
			if prev != "" {
				d.Edge(prev, id, "")
			}
			prev = id
		}
	}
	return d
}

// drawChain draws steps in c, each after the other, and returns where the
// chain starts and ends; both are "" for no steps.
func drawChain(d *drawing.Drawing, c drawing.Cluster, steps []GraphStep) (in, out string) {
	for i, s := range steps {
		sin, sout := drawStep(d, c, s)
		if i == 0 {
			in = sin
		} else {
			d.Edge(out, sin, "")
		}
		out = sout
	}
	return in, out
}

// drawStep draws s in c and returns where it starts and ends.
func drawStep(d *drawing.Drawing, c drawing.Cluster, s GraphStep) (in, out string) {
	label := s.label()
	switch {
	case s.Kind != "" && len(s.Steps) > 0:
		sub := c.Cluster(label)
		switch s.Kind {
		case "Sequence", "If", "Timeout", "Retry", "WithConditions", "WithSetup":
			return drawChain(d, sub, s.Steps)
		}
		fork := sub.Fork(s.Kind)
		ports := make([][2]string, len(s.Steps))
		for i, child := range s.Steps {
			ports[i][0], ports[i][1] = drawStep(d, sub, child)
		}
		merge := sub.Merge(s.Kind + " end")
		for i, p := range ports {
			edge := ""
			if s.Kind == "OrderedJoin" {
				edge = strconv.Itoa(i + 1)
			}
			d.Edge(fork, p[0], edge)
			d.Edge(p[1], merge, "")
		}
		return fork, merge
	default:
		id := c.Box(label)
		return id, id
	}
}

// label returns "NAME: PHASES" and, when the step owns conditions,
// "; conditions A, B".
func (s GraphStep) label() string {
	var b strings.Builder
	b.WriteString(s.Name)
	b.WriteString(": ")
	for i, p := range s.Phases {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p)
	}
	if len(s.Conditions) > 0 {
		b.WriteString("; conditions ")
		b.WriteString(strings.Join(s.Conditions, ", "))
	}
	return b.String()
}
