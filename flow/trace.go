package flow

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Trace is a Hook that records which actions ran, in which order and with
// which outcome, and draws a run over the static graph of its workflow: the
// same Mermaid or DOT graph that Mermaid and DOT draw, with each action that
// ran marked by its order and outcome and coloured by the outcome, and the
// actions that did not run drawn dashed. It is a test aid: install it with
// WithHooks, or give it to whatever runs actions with hooks (the manager and
// the engine steps that bosun gen writes take hooks), run one reconcile, and
// compare Runs, String or the drawing with what the test expects.
//
// Combinators are run through hooks too; a Trace records them, but Runs,
// String and the drawings show only the leaf actions. A Trace is safe for
// concurrent use (ParallelJoin runs its actions at once); the order of two
// actions is the order in which they started. The zero Trace is ready to
// use.
type Trace struct {
	mu   sync.Mutex
	runs []ActionRun
}

var _ Hook = (*Trace)(nil)

// ActionRun is one run of an action that a Trace recorded.
type ActionRun struct {
	// Order is the place of the run among the leaf actions the trace
	// recorded since it was made or Reset, from 1, by the time they
	// started.
	Order int
	// Action is the action that ran, and Description its Description.
	Action      Action
	Description string
	// Result and Err are what the action returned; Done is false while it
	// runs, and for good if it panicked.
	Result reconcile.Result
	Err    error
	Done   bool
}

// Outcome names the outcome of the run in a word or a few: "ok", "requeue",
// "requeue now", "requeue after 5s", "exit", "error: MESSAGE" (cut to 60
// characters), or "running" when the action has not returned.
func (r ActionRun) Outcome() string {
	switch {
	case !r.Done:
		return "running"
	case errors.Is(r.Err, ErrExit) && !hasRealError(r.Err):
		return "exit"
	case r.Err != nil:
		msg := strings.Join(strings.Fields(r.Err.Error()), " ")
		if len(msg) > 60 {
			msg = msg[:57] + "..."
		}
		return "error: " + msg
	case r.Result.RequeueAfter == Immediately:
		return "requeue now"
	case r.Result.RequeueAfter > 0:
		return "requeue after " + r.Result.RequeueAfter.String()
	case r.Result.Requeue: //nolint:staticcheck // foreign results may still set Requeue
		return "requeue"
	default:
		return "ok"
	}
}

// class returns the drawing class of the run's outcome.
func (r ActionRun) class() string {
	switch o := r.Outcome(); {
	case strings.HasPrefix(o, "error"):
		return "failed"
	case strings.HasPrefix(o, "requeue"):
		return "requeued"
	case o == "exit":
		return "exited"
	case o == "running":
		return "running"
	default:
		return "succeeded"
	}
}

// hasRealError reports whether err holds an error other than ErrExit.
func hasRealError(err error) bool {
	if err == nil || err == ErrExit { //nolint:errorlint // ErrExit itself, not wrapped
		return false
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if hasRealError(e) {
				return true
			}
		}
		return false
	}
	return true
}

// traceRunKey carries, in the context PreRun returns, the index of the run
// it recorded, for PostRun.
type traceRunKey struct{ t *Trace }

// PreRun records that a started.
func (t *Trace) PreRun(ctx context.Context, a Action) context.Context {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.runs = append(t.runs, ActionRun{Action: a, Description: describeAction(a)})
	return context.WithValue(ctx, traceRunKey{t}, len(t.runs)-1)
}

// PostRun records what a returned.
func (t *Trace) PostRun(ctx context.Context, a Action, res reconcile.Result, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i, ok := ctx.Value(traceRunKey{t}).(int)
	if !ok || i >= len(t.runs) {
		return // recorded before a Reset
	}
	t.runs[i].Result, t.runs[i].Err, t.runs[i].Done = res, err, true
}

// Reset forgets every run recorded so far.
func (t *Trace) Reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.runs = nil
}

// Runs returns the runs of leaf actions recorded so far, in the order they
// started.
func (t *Trace) Runs() []ActionRun {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []ActionRun
	for _, r := range t.runs {
		if _, ok := r.Action.(composite); ok || isNop(r.Action) {
			continue
		}
		r.Order = len(out) + 1
		out = append(out, r)
	}
	return out
}

// String returns the runs of leaf actions one a line, as
// "ORDER DESCRIPTION: OUTCOME".
func (t *Trace) String() string {
	var b strings.Builder
	for _, r := range t.Runs() {
		fmt.Fprintf(&b, "%d %s: %s\n", r.Order, r.Description, r.Outcome())
	}
	return b.String()
}

// describeAction returns a's description, "<nil>" for nil.
func describeAction(a Action) string {
	if a == nil {
		return "<nil>"
	}
	return a.Description()
}

// Mermaid draws the run over workflow as Mermaid draws workflow: each leaf
// action that ran has its runs added to its label, "(run ORDER: OUTCOME;
// ...)",
// and the class of its last outcome (succeeded, requeued, exited, failed or
// running, each with a fill colour); a leaf action that did not run has the
// class notrun (dashed). A run is drawn on the node of the same action
// (the same pointer), else on the first node with the same description;
// runs of actions the workflow does not hold are drawn in a subgraph "not
// in the workflow" at the end. The output is deterministic for the same
// workflow and runs.
func (t *Trace) Mermaid(workflow Action) string {
	g, marks, extra := t.overlay(workflow)
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	g.writeMermaid(&b, &g.root, 1)
	g.writeMermaidEdges(&b)
	if len(extra.items) > 0 {
		indent(&b, 1)
		b.WriteString("subgraph ")
		b.WriteString(extra.id)
		b.WriteString(" [")
		b.WriteString(mermaidQuote(extra.label))
		b.WriteString("]\n")
		g.writeMermaid(&b, extra, 2)
		indent(&b, 1)
		b.WriteString("end\n")
	}
	for _, c := range traceClasses {
		indent(&b, 1)
		b.WriteString("classDef " + c.name + " " + c.mermaid + "\n")
	}
	for _, c := range traceClasses {
		if ids := marks.byClass[c.name]; len(ids) > 0 {
			indent(&b, 1)
			b.WriteString("class " + strings.Join(ids, ",") + " " + c.name + "\n")
		}
	}
	return b.String()
}

// DOT draws the run over workflow as DOT draws workflow, with the same
// labels as Mermaid and the outcome as a fill colour (style=filled), nodes
// that did not run dashed, and runs of actions the workflow does not hold
// in a cluster "not in the workflow".
func (t *Trace) DOT(workflow Action) string {
	g, marks, extra := t.overlay(workflow)
	var b strings.Builder
	b.WriteString("digraph flow {\n")
	indent(&b, 1)
	b.WriteString("node [shape=box];\n")
	g.writeDOT(&b, &g.root, 1)
	g.writeDOTEdges(&b)
	if len(extra.items) > 0 {
		indent(&b, 1)
		b.WriteString("subgraph cluster_trace {\n")
		indent(&b, 2)
		b.WriteString("label=" + dotQuote(extra.label) + ";\n")
		g.writeDOT(&b, extra, 2)
		indent(&b, 1)
		b.WriteString("}\n")
	}
	for _, c := range traceClasses {
		for _, id := range marks.byClass[c.name] {
			indent(&b, 1)
			b.WriteString(id + " [" + c.dot + "];\n")
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// traceClasses are the drawing classes of a run's outcome, and of a leaf
// that did not run, in the order the drawings list them.
var traceClasses = []struct{ name, mermaid, dot string }{
	{"succeeded", "fill:#d4edda,stroke:#28a745", `style=filled, fillcolor="#d4edda", color="#28a745"`},
	{"requeued", "fill:#fff3cd,stroke:#d39e00", `style=filled, fillcolor="#fff3cd", color="#d39e00"`},
	{"exited", "fill:#e2e3e5,stroke:#6c757d", `style=filled, fillcolor="#e2e3e5", color="#6c757d"`},
	{"failed", "fill:#f8d7da,stroke:#dc3545", `style=filled, fillcolor="#f8d7da", color="#dc3545"`},
	{"running", "fill:#cce5ff,stroke:#004085", `style=filled, fillcolor="#cce5ff", color="#004085"`},
	{"notrun", "stroke-dasharray:5 5,color:#6c757d", `style=dashed, fontcolor="#6c757d"`},
}

// traceMarks are the node ids of each class.
type traceMarks struct {
	byClass map[string][]string
}

// overlay builds the graph of workflow and marks the runs on it: it adds
// their orders and outcomes to the labels of the leaf nodes and returns the
// ids of each class, and a cluster holding the runs no node stands for.
func (t *Trace) overlay(workflow Action) (*graph, traceMarks, *gcluster) {
	g := newGraph(workflow)
	leaves := leafActions(workflow)
	var nodes []*gnode
	collectBoxes(&g.root, &nodes)
	// Node ids follow the walk that leafActions repeats, so the i-th box,
	// by id, is the i-th leaf.
	sortByID(nodes)
	byNode := make(map[*gnode][]ActionRun)
	var extraRuns []ActionRun
	for _, r := range t.Runs() {
		n := matchNode(r, leaves, nodes)
		if n == nil {
			extraRuns = append(extraRuns, r)
			continue
		}
		byNode[n] = append(byNode[n], r)
	}
	marks := traceMarks{byClass: make(map[string][]string)}
	for _, n := range nodes {
		runs := byNode[n]
		if len(runs) == 0 {
			marks.byClass["notrun"] = append(marks.byClass["notrun"], n.id)
			continue
		}
		n.label += " " + runLabel(runs)
		class := runs[len(runs)-1].class()
		marks.byClass[class] = append(marks.byClass[class], n.id)
	}
	extra := &gcluster{id: "trace", label: "not in the workflow"}
	for i, r := range extraRuns {
		id := "t" + strconv.Itoa(i)
		extra.items = append(extra.items, gitem{node: &gnode{id: id, label: r.Description + " " + runLabel([]ActionRun{r}), shape: shapeBox}})
		marks.byClass[r.class()] = append(marks.byClass[r.class()], id)
	}
	return g, marks, extra
}

// runLabel returns "(run ORDER: OUTCOME; ...)" for the runs of one node.
func runLabel(runs []ActionRun) string {
	parts := make([]string, len(runs))
	for i, r := range runs {
		parts[i] = "run " + strconv.Itoa(r.Order) + ": " + r.Outcome()
	}
	return "(" + strings.Join(parts, "; ") + ")"
}

// matchNode returns the node of r's action among the leaves: the one of the
// same pointer, else the first of the same description; nil when none.
func matchNode(r ActionRun, leaves []Action, nodes []*gnode) *gnode {
	if len(leaves) != len(nodes) {
		return nil // cannot happen: both follow the same walk
	}
	for i, a := range leaves {
		if sameAction(a, r.Action) {
			return nodes[i]
		}
	}
	for i, a := range leaves {
		if describeAction(a) == r.Description {
			return nodes[i]
		}
	}
	return nil
}

// sameAction reports whether a and b are the same pointer. Actions of other
// kinds are not compared: their types may not be comparable.
func sameAction(a, b Action) bool {
	if a == nil || b == nil {
		return false
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	return va.Kind() == reflect.Pointer && va.Type() == vb.Type() && va.Pointer() == vb.Pointer()
}

// collectBoxes appends the leaf nodes of c and of its clusters.
func collectBoxes(c *gcluster, out *[]*gnode) {
	for _, it := range c.items {
		if it.node != nil && it.node.shape == shapeBox {
			*out = append(*out, it.node)
		}
		if it.cluster != nil {
			collectBoxes(it.cluster, out)
		}
	}
}

// sortByID sorts nodes by the number in their ids, the order the graph made
// them in.
func sortByID(nodes []*gnode) {
	num := func(n *gnode) int { v, _ := strconv.Atoi(strings.TrimPrefix(n.id, "n")); return v }
	for i := 1; i < len(nodes); i++ {
		for j := i; j > 0 && num(nodes[j]) < num(nodes[j-1]); j-- {
			nodes[j], nodes[j-1] = nodes[j-1], nodes[j]
		}
	}
}

// leafActions returns the leaf actions of a in the order the graph draws
// them (see graph.build): every action that is not a combinator of this
// package, nil included, with each Shared action's leaves once.
func leafActions(a Action) []Action {
	var out []Action
	seen := make(map[*sharedAction]bool)
	var walk func(Action)
	walk = func(a Action) {
		switch x := a.(type) {
		case nopAction:
		case *group:
			for _, c := range x.actions {
				walk(c)
			}
		case *timeoutAction:
			walk(x.a)
		case *ifAction:
			walk(x.then)
			if x.hasElse {
				walk(x.els)
			}
		case *whenAction:
			walk(x.a)
		case *retryAction:
			walk(x.a)
		case *sharedAction:
			if !seen[x] {
				seen[x] = true
				walk(x.a)
			}
		case *hookedAction:
			walk(x.a)
		default:
			out = append(out, a)
		}
	}
	walk(a)
	return out
}
