package flow_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/bosunkit/bosun/flow"
)

// A workflow drawn alone in a Drawing without a title is what Mermaid and
// DOT draw.
func TestDrawingOfOneWorkflowIsMermaidAndDOT(t *testing.T) {
	a, b, c := leaf("A"), leaf("B"), leaf("C")
	s := flow.Shared(leaf("load"))
	for _, w := range []flow.Action{
		a,
		flow.Nop(),
		flow.Sequence(a, flow.Join(b, c)),
		flow.OrderedJoin(flow.IfElse(true, a, b), flow.Timeout(time.Second, c)),
		flow.Join(s, flow.Sequence(s, flow.Retry(2, 0, a))),
	} {
		t.Run(flow.Describe(w), func(t *testing.T) {
			d := flow.NewDrawing("")
			d.Root().Workflow(w)
			if diff := cmp.Diff(flow.Mermaid(w), d.Mermaid()); diff != "" {
				t.Errorf("Mermaid mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(flow.DOT(w), d.DOT()); diff != "" {
				t.Errorf("DOT mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDrawing(t *testing.T) {
	build := func() *flow.Drawing {
		d := flow.NewDrawing(`steps of "demo"`)
		root := d.Root()
		first := root.Box("first")
		sub := root.Cluster("second: a workflow")
		in, out := sub.Workflow(flow.Sequence(leaf("A"), flow.If(false, leaf("B"))))
		fork, merge := root.Fork("Join"), root.Merge("Join end")
		d.Edge(first, in, "")
		d.Edge(out, fork, "then")
		d.Edge(fork, merge, "")
		return d
	}
	tests := []struct {
		name   string
		render func(*flow.Drawing) string
		want   string
	}{
		{"Mermaid", (*flow.Drawing).Mermaid, `---
title: "steps of \"demo\""
---
flowchart TD
    n0["first"]
    subgraph s0 ["second: a workflow"]
        n1["A"]
        subgraph s1 ["If false"]
            n2["B"]
        end
    end
    n3{{"Join"}}
    n4{{"Join end"}}
    n1 --> n2
    n0 --> n1
    n2 -->|"then"| n3
    n3 --> n4
`},
		{"DOT", (*flow.Drawing).DOT, `digraph flow {
    graph [label="steps of \"demo\"", labelloc=t];
    node [shape=box];
    n0 [label="first"];
    subgraph cluster_0 {
        label="second: a workflow";
        n1 [label="A"];
        subgraph cluster_1 {
            label="If false";
            n2 [label="B"];
        }
    }
    n3 [label="Join", shape=invtrapezium];
    n4 [label="Join end", shape=trapezium];
    n1 -> n2;
    n0 -> n1;
    n2 -> n3 [label="then"];
    n3 -> n4;
}
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.render(build())
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			if again := tt.render(build()); again != got {
				t.Errorf("a second drawing built the same way differs:\n%s", again)
			}
		})
	}
}

// A Drawing puts a workflow inside a larger picture: here a box before it,
// joined to where the workflow starts.
func ExampleDrawing() {
	d := flow.NewDrawing("sync")
	root := d.Root()
	load := root.Box("load")
	in, _ := root.Cluster("apply").Workflow(flow.Sequence(leaf("render"), leaf("write")))
	d.Edge(load, in, "")
	fmt.Print(d.Mermaid())
	// Output:
	// ---
	// title: "sync"
	// ---
	// flowchart TD
	//     n0["load"]
	//     subgraph s0 ["apply"]
	//         n1["render"]
	//         n2["write"]
	//     end
	//     n1 --> n2
	//     n0 --> n1
}
