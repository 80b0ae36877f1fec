package flow

import (
	"strconv"
	"strings"
)

// Drawing is a graph that other packages build to draw what holds workflows
// (a reconciler's steps, a document's actions), with the shapes, escaping
// and ids of Mermaid and DOT: boxes, fork and merge nodes, clusters
// (subgraphs) and labelled edges, and whole workflows drawn into a cluster
// as Mermaid and DOT draw them.
//
// Node ids (n0, n1, ...) and cluster ids (s0, s1, ...; cluster_0, ... in
// DOT) are given in the order nodes and clusters are added, workflows'
// included, so a drawing built in a fixed order renders the same every
// time. A Shared action met in two workflows of one drawing is drawn once.
// The zero Drawing is not usable; NewDrawing makes one.
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

// NewDrawing returns an empty drawing with a title ("" for none): Mermaid
// writes it as the title of its front matter, DOT as the graph's label.
func NewDrawing(title string) *Drawing {
	return &Drawing{g: &graph{shared: make(map[*sharedAction]port)}, title: title}
}

// Root returns the top level of the drawing.
func (d *Drawing) Root() Cluster { return Cluster{g: d.g, c: &d.g.root} }

// Box adds a box labelled label to c and returns its id.
func (c Cluster) Box(label string) string { return c.g.node(c.c, label, shapeBox) }

// Fork adds the node where the branches of a join start, drawn as Mermaid
// and DOT draw a Join's, and returns its id.
func (c Cluster) Fork(label string) string { return c.g.node(c.c, label, shapeFork) }

// Merge adds the node where the branches of a join meet, drawn as Mermaid
// and DOT draw the end of a Join, and returns its id.
func (c Cluster) Merge(label string) string { return c.g.node(c.c, label, shapeMerge) }

// Cluster adds a subgraph labelled label to c and returns it.
func (c Cluster) Cluster(label string) Cluster {
	return Cluster{g: c.g, c: c.g.cluster(c.c, label)}
}

// Workflow draws a in c as Mermaid draws it, and returns the ids of the
// nodes where it starts and ends, for edges to and from it.
func (c Cluster) Workflow(a Action) (in, out string) {
	p := c.g.build(a, c.c)
	return p.in, p.out
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
