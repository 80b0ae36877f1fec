package flow

import (
	"strconv"
	"strings"
)

// Mermaid renders the workflow a as a Mermaid flowchart (top to bottom):
//
//   - a leaf action is a box labelled with its description, Nop a rounded box;
//   - Sequence chains its children with edges;
//   - Join, OrderedJoin and ParallelJoin are a fork node with an edge to each child and
//     a merge node with an edge from each child; the edges of an OrderedJoin are
//     numbered in order;
//   - IfElse is a decision node with "then" and "else" edges and a merge node;
//   - Timeout, Retry, If, When and Shared are subgraphs labelled with
//     their parameters, around their action;
//   - a Shared action is drawn once, where it is first met; each later use has edges to
//     and from that drawing;
//   - WithHooks is transparent.
//
// Node ids (n0, n1, ...) and subgraph ids (s0, s1, ...) follow the order of a
// depth-first walk, so the output is deterministic. Labels are quoted, with quotes,
// '#', '<' and '>' written as Mermaid entities.
func Mermaid(a Action) string {
	g := newGraph(a)
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	g.writeMermaid(&b, &g.root, 1)
	g.writeMermaidEdges(&b)
	return b.String()
}

// DOT renders the workflow a as a Graphviz digraph with the same structure as Mermaid:
// boxes for leaf actions, fork and merge nodes for joins, a diamond for IfElse, and
// clusters (subgraph cluster_N) for Timeout, Retry, If, When and Shared. Node ids and
// cluster ids follow a depth-first walk; labels are quoted and escaped.
func DOT(a Action) string {
	g := newGraph(a)
	var b strings.Builder
	b.WriteString("digraph flow {\n")
	indent(&b, 1)
	b.WriteString("node [shape=box];\n")
	g.writeDOT(&b, &g.root, 1)
	g.writeDOTEdges(&b)
	b.WriteString("}\n")
	return b.String()
}

type shape uint8

const (
	shapeBox shape = iota
	shapeNop
	shapeFork
	shapeMerge
	shapeDecision
)

type gnode struct {
	id    string
	label string
	shape shape
}

// gcluster is a subgraph; the root cluster is the graph itself.
type gcluster struct {
	id    string
	label string
	items []gitem
}

// gitem is a node or a cluster, in the order they were met.
type gitem struct {
	node    *gnode
	cluster *gcluster
}

type gedge struct {
	from, to, label string
}

// port is the entry and exit node of a drawn action.
type port struct {
	in, out string
}

type graph struct {
	root     gcluster
	edges    []gedge
	nodes    int
	clusters int
	shared   map[*sharedAction]port
}

func newGraph(a Action) *graph {
	g := &graph{shared: make(map[*sharedAction]port)}
	g.build(a, &g.root)
	return g
}

func (g *graph) node(c *gcluster, label string, s shape) string {
	id := "n" + strconv.Itoa(g.nodes)
	g.nodes++
	c.items = append(c.items, gitem{node: &gnode{id: id, label: label, shape: s}})
	return id
}

func (g *graph) cluster(c *gcluster, label string) *gcluster {
	sub := &gcluster{id: "s" + strconv.Itoa(g.clusters), label: label}
	g.clusters++
	c.items = append(c.items, gitem{cluster: sub})
	return sub
}

func (g *graph) edge(from, to, label string) {
	g.edges = append(g.edges, gedge{from: from, to: to, label: label})
}

// build draws a inside c and returns its entry and exit nodes.
func (g *graph) build(a Action, c *gcluster) port {
	switch x := a.(type) {
	case nil:
		id := g.node(c, "<nil>", shapeBox)
		return port{id, id}
	case nopAction:
		id := g.node(c, "Nop", shapeNop)
		return port{id, id}
	case *group:
		if x.kind == kindSequence {
			return g.sequence(x, c)
		}
		return g.join(x, c)
	case *timeoutAction:
		return g.build(x.a, g.cluster(c, "Timeout "+x.d.String()))
	case *ifAction:
		cond := strconv.FormatBool(x.cond)
		if !x.hasElse {
			return g.build(x.then, g.cluster(c, "If "+cond))
		}
		decision := g.node(c, "IfElse "+cond, shapeDecision)
		then := g.build(x.then, c)
		els := g.build(x.els, c)
		merge := g.node(c, "IfElse end", shapeMerge)
		g.edge(decision, then.in, "then")
		g.edge(decision, els.in, "else")
		g.edge(then.out, merge, "")
		g.edge(els.out, merge, "")
		return port{decision, merge}
	case *whenAction:
		return g.build(x.a, g.cluster(c, "When"))
	case *retryAction:
		label := "Retry " + strconv.Itoa(x.limit)
		if x.interval > 0 {
			label += " every " + x.interval.String()
		}
		return g.build(x.a, g.cluster(c, label))
	case *sharedAction:
		if p, ok := g.shared[x]; ok {
			return p
		}
		p := g.build(x.a, g.cluster(c, "Shared"))
		g.shared[x] = p
		return p
	case *hookedAction:
		return g.build(x.a, c)
	default:
		id := g.node(c, a.Description(), shapeBox)
		return port{id, id}
	}
}

// sequence draws the sequential group x inside c: its actions one after
// another, or a Nop when it has none.
func (g *graph) sequence(x *group, c *gcluster) port {
	if len(x.actions) == 0 {
		id := g.node(c, "Nop", shapeNop)
		return port{id, id}
	}
	var p port
	for i, child := range x.actions {
		cp := g.build(child, c)
		if i == 0 {
			p.in = cp.in
		} else {
			g.edge(p.out, cp.in, "")
		}
		p.out = cp.out
	}
	return p
}

// join draws the concurrent or ordered group x inside c: a fork to each
// action and a merge after them, the edges of an ordered join numbered.
func (g *graph) join(x *group, c *gcluster) port {
	name := x.kind.String()
	fork := g.node(c, name, shapeFork)
	ports := make([]port, len(x.actions))
	for i, child := range x.actions {
		ports[i] = g.build(child, c)
	}
	merge := g.node(c, name+" end", shapeMerge)
	if len(ports) == 0 {
		g.edge(fork, merge, "")
	}
	for i, p := range ports {
		label := ""
		if x.kind == kindOrderedJoin {
			label = strconv.Itoa(i + 1)
		}
		g.edge(fork, p.in, label)
		g.edge(p.out, merge, "")
	}
	return port{fork, merge}
}

func indent(b *strings.Builder, depth int) {
	for range depth {
		b.WriteString("    ")
	}
}

func (g *graph) writeMermaid(b *strings.Builder, c *gcluster, depth int) {
	for _, it := range c.items {
		if n := it.node; n != nil {
			indent(b, depth)
			b.WriteString(n.id)
			open, closing := "[", "]"
			switch n.shape {
			case shapeNop:
				open, closing = "(", ")"
			case shapeFork, shapeMerge:
				open, closing = "{{", "}}"
			case shapeDecision:
				open, closing = "{", "}"
			}
			b.WriteString(open)
			b.WriteString(mermaidQuote(n.label))
			b.WriteString(closing)
			b.WriteByte('\n')
			continue
		}
		sub := it.cluster
		indent(b, depth)
		b.WriteString("subgraph ")
		b.WriteString(sub.id)
		b.WriteString(" [")
		b.WriteString(mermaidQuote(sub.label))
		b.WriteString("]\n")
		g.writeMermaid(b, sub, depth+1)
		indent(b, depth)
		b.WriteString("end\n")
	}
}

func (g *graph) writeDOT(b *strings.Builder, c *gcluster, depth int) {
	for _, it := range c.items {
		if n := it.node; n != nil {
			indent(b, depth)
			b.WriteString(n.id)
			b.WriteString(" [label=")
			b.WriteString(dotQuote(n.label))
			switch n.shape {
			case shapeNop:
				b.WriteString(", style=dashed")
			case shapeFork:
				b.WriteString(", shape=invtrapezium")
			case shapeMerge:
				b.WriteString(", shape=trapezium")
			case shapeDecision:
				b.WriteString(", shape=diamond")
			}
			b.WriteString("];\n")
			continue
		}
		sub := it.cluster
		indent(b, depth)
		b.WriteString("subgraph cluster_")
		b.WriteString(strings.TrimPrefix(sub.id, "s"))
		b.WriteString(" {\n")
		indent(b, depth+1)
		b.WriteString("label=")
		b.WriteString(dotQuote(sub.label))
		b.WriteString(";\n")
		g.writeDOT(b, sub, depth+1)
		indent(b, depth)
		b.WriteString("}\n")
	}
}

var mermaidEscaper = strings.NewReplacer(
	"#", "#35;",
	`"`, "#quot;",
	"<", "#lt;",
	">", "#gt;",
	"\n", " ",
	"\r", " ",
)

// mermaidQuote returns s as a quoted Mermaid label.
func mermaidQuote(s string) string {
	return `"` + mermaidEscaper.Replace(s) + `"`
}

var dotEscaper = strings.NewReplacer(
	`\`, `\\`,
	`"`, `\"`,
	"\n", `\n`,
	"\r", "",
)

// dotQuote returns s as a quoted DOT string.
func dotQuote(s string) string {
	return `"` + dotEscaper.Replace(s) + `"`
}

// writeMermaidEdges writes the edges of g as Mermaid arrows, labelled
// where they have a label.
func (g *graph) writeMermaidEdges(b *strings.Builder) {
	for _, e := range g.edges {
		indent(b, 1)
		b.WriteString(e.from)
		if e.label != "" {
			b.WriteString(" -->|")
			b.WriteString(mermaidQuote(e.label))
			b.WriteString("| ")
		} else {
			b.WriteString(" --> ")
		}
		b.WriteString(e.to)
		b.WriteByte('\n')
	}
}

// writeDOTEdges writes the edges of g as DOT edges, labelled where they
// have a label.
func (g *graph) writeDOTEdges(b *strings.Builder) {
	for _, e := range g.edges {
		indent(b, 1)
		b.WriteString(e.from)
		b.WriteString(" -> ")
		b.WriteString(e.to)
		if e.label != "" {
			b.WriteString(" [label=")
			b.WriteString(dotQuote(e.label))
			b.WriteByte(']')
		}
		b.WriteString(";\n")
	}
}
