package drawing

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDrawing(t *testing.T) {
	d := New(`a "quoted" title`)
	root := d.Root()
	fork := root.Fork("Join")
	sub := root.Cluster("If true")
	a := sub.Box("apply <config> #1")
	b := root.Box("status")
	merge := root.Merge("Join end")
	d.Edge(fork, a, "1")
	d.Edge(fork, b, "2")
	d.Edge(a, merge, "")
	d.Edge(b, merge, "")

	for _, tc := range []struct {
		name, got, want string
	}{
		{"Mermaid", d.Mermaid(), `---
title: "a \"quoted\" title"
---
flowchart TD
    n0{{"Join"}}
    subgraph s0 ["If true"]
        n1["apply #lt;config#gt; #35;1"]
    end
    n2["status"]
    n3{{"Join end"}}
    n0 -->|"1"| n1
    n0 -->|"2"| n2
    n1 --> n3
    n2 --> n3
`},
		{"DOT", d.DOT(), `digraph flow {
    graph [label="a \"quoted\" title", labelloc=t];
    node [shape=box];
    n0 [label="Join", shape=invtrapezium];
    subgraph cluster_0 {
        label="If true";
        n1 [label="apply <config> #1"];
    }
    n2 [label="status"];
    n3 [label="Join end", shape=trapezium];
    n0 -> n1 [label="1"];
    n0 -> n2 [label="2"];
    n1 -> n3;
    n2 -> n3;
}
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("drawing (-want +got):\n%s", diff)
			}
		})
	}
}
