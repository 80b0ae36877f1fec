// Package drawing draws graphs as Mermaid flowcharts and Graphviz DOT
// digraphs: boxes, fork and merge nodes, clusters (subgraphs) and labelled
// edges. bosun's Graph (a reconciler's steps) and `bosun graph` (a DSL
// document's declarations) draw with it.
package drawing

import (
	"strconv"
	"strings"
)

// Drawing is a graph to draw, built node by node.
//
// Node ids (n0, n1, ...) and cluster ids (s0, s1, ...; cluster_0, ... in
// DOT) are given in the order nodes and clusters are added, so a drawing
// built in a fixed order renders the same every time. The zero Drawing is
// not usable; New makes one.
type Drawing struct {
	g     *graph
	title string
}

// Cluster is where a Drawing's nodes go: the drawing itself (Root) or one
// of its subgraphs.
type Cluster struct {
	g *graph
	c *gcluster
}

// New returns an empty drawing with a title ("" for none): Mermaid writes
// it as the title of its front matter, DOT as the graph's label.
func New(title string) *Drawing {
	return &Drawing{g: &graph{}, title: title}
}

// Root returns the top level of the drawing.
func (d *Drawing) Root() Cluster { return Cluster{g: d.g, c: &d.g.root} }

// Box adds a box labelled label to c and returns its id.
func (c Cluster) Box(label string) string { return c.g.node(c.c, label, shapeBox) }

// Fork adds the node where the branches of a join start and returns its
// id.
func (c Cluster) Fork(label string) string { return c.g.node(c.c, label, shapeFork) }

// Merge adds the node where the branches of a join meet and returns its
// id.
func (c Cluster) Merge(label string) string { return c.g.node(c.c, label, shapeMerge) }

// Cluster adds a subgraph labelled label to c and returns it.
func (c Cluster) Cluster(label string) Cluster {
	return Cluster{g: c.g, c: c.g.cluster(c.c, label)}
}

// Edge adds an edge from the node with id from to the node with id to,
// labelled label ("" for none). Edges are written in the order they are
// added.
func (d *Drawing) Edge(from, to, label string) { d.g.edge(from, to, label) }

// Mermaid renders the drawing as a Mermaid flowchart (top to bottom),
// preceded by front matter with the title when there is one.
func (d *Drawing) Mermaid() string {
	var b strings.Builder
	if d.title != "" {
		// A double-quoted YAML scalar: Go's escapes are YAML's.
		b.WriteString("---\ntitle: " + strconv.Quote(d.title) + "\n---\n")
	}
	b.WriteString("flowchart TD\n")
	d.g.writeMermaid(&b, &d.g.root, 1)
	d.g.writeMermaidEdges(&b)
	return b.String()
}

// DOT renders the drawing as a Graphviz digraph, with the title as the
// graph's label, at the top, when there is one.
func (d *Drawing) DOT() string {
	var b strings.Builder
	b.WriteString("digraph flow {\n")
	if d.title != "" {
		indent(&b, 1)
		b.WriteString("graph [label=" + dotQuote(d.title) + ", labelloc=t];\n")
	}
	indent(&b, 1)
	b.WriteString("node [shape=box];\n")
	d.g.writeDOT(&b, &d.g.root, 1)
	d.g.writeDOTEdges(&b)
	b.WriteString("}\n")
	return b.String()
}

type shape uint8

const (
	shapeBox shape = iota
	shapeFork
	shapeMerge
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

type graph struct {
	root     gcluster
	edges    []gedge
	nodes    int
	clusters int
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
			case shapeFork, shapeMerge:
				open, closing = "{{", "}}"
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
			case shapeFork:
				b.WriteString(", shape=invtrapezium")
			case shapeMerge:
				b.WriteString(", shape=trapezium")
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
