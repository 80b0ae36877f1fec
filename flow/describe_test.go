package flow_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/flow"
)

// leaf returns an action named name that succeeds.
func leaf(name string) flow.Action {
	return flow.New(name, func(context.Context) (reconcile.Result, error) { return flow.Continue() })
}

func always(context.Context) bool { return true }

func TestDescribe(t *testing.T) {
	a, b, c := leaf("A"), leaf("B"), leaf("C")
	s := flow.Shared(leaf("load"))
	tests := []struct {
		name string
		a    flow.Action
		want string
	}{
		{"leaf", a, "A"},
		{"nil", nil, "<nil>"},
		{"Nop", flow.Nop(), "Nop"},
		{"seed example", flow.Sequence(flow.Join(a, b), flow.Timeout(time.Second, c)), "Sequence(Join(A, B), Timeout(C, 1s))"},
		{"empty group", flow.Join(), "Join()"},
		{"joins", flow.ParallelJoin(flow.OrderedJoin(a, b), flow.OrderedJoin(c)), "ParallelJoin(OrderedJoin(A, B), OrderedJoin(C))"},
		{"conditions", flow.Sequence(flow.If(false, a), flow.IfElse(true, b, c), flow.When(always, a)), "Sequence(If(false, A), IfElse(true, B, C), When(A))"},
		{"retries", flow.Join(flow.Retry(3, 0, a), flow.Retry(2, 500*time.Millisecond, b)), "Join(Retry(A, 3), Retry(B, 2, 500ms))"},
		{"shared", flow.Join(s, flow.Sequence(s, a)), "Join(Shared(load), Sequence(Shared(load), A))"},
		{"hooks are transparent", flow.WithHooks(flow.Sequence(a, flow.WithHooks(b, flow.NopHook())), flow.NopHook()), "Sequence(A, B)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, flow.Describe(tt.a)); diff != "" {
				t.Errorf("Describe mismatch (-want +got):\n%s", diff)
			}
			if tt.a == nil {
				return
			}
			// A combinator describes itself the same way, also on later calls.
			for range 2 {
				if diff := cmp.Diff(tt.want, tt.a.Description()); diff != "" {
					t.Errorf("Description mismatch (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestOptimize(t *testing.T) {
	a, b, c, d := leaf("A"), leaf("B"), leaf("C"), leaf("D")
	s := flow.Shared(flow.Sequence(a, flow.Sequence(b)))
	tests := []struct {
		name string
		in   flow.Action
		want string
	}{
		{"leaf unchanged", a, "A"},
		{"flatten Sequence", flow.Sequence(a, flow.Sequence(b, flow.Sequence(c)), d), "Sequence(A, B, C, D)"},
		{"flatten Join", flow.Join(flow.Join(a, b), flow.Join(c, d)), "Join(A, B, C, D)"},
		{"flatten OrderedJoin", flow.OrderedJoin(a, flow.OrderedJoin(b, c)), "OrderedJoin(A, B, C)"},
		{"flatten ParallelJoin", flow.ParallelJoin(flow.ParallelJoin(a, b), c), "ParallelJoin(A, B, C)"},
		{"different kinds kept", flow.Sequence(a, flow.Join(b, c), flow.OrderedJoin(d, flow.Join(a, b))), "Sequence(A, Join(B, C), OrderedJoin(D, Join(A, B)))"},
		{"Nop children dropped", flow.Join(flow.Nop(), a, flow.Nop(), b), "Join(A, B)"},
		{"group of one", flow.Sequence(flow.Nop(), a), "A"},
		{"empty group", flow.Join(flow.Nop(), flow.Sequence()), "Nop"},
		{"ParallelJoin of one kept", flow.ParallelJoin(flow.Nop(), a), "ParallelJoin(A)"},
		{"ParallelJoin of nothing", flow.ParallelJoin(flow.Nop()), "Nop"},
		{"If true", flow.If(true, flow.Sequence(a, flow.Sequence(b))), "Sequence(A, B)"},
		{"If false", flow.Sequence(a, flow.If(false, b), c), "Sequence(A, C)"},
		{"IfElse true", flow.IfElse(true, a, b), "A"},
		{"IfElse false", flow.IfElse(false, a, flow.Join(b)), "B"},
		{"Timeout outer shorter", flow.Timeout(time.Second, flow.Timeout(2*time.Second, a)), "Timeout(A, 1s)"},
		{"Timeout inner shorter", flow.Timeout(2*time.Second, flow.Timeout(time.Second, a)), "Timeout(A, 1s)"},
		{"Timeout three deep", flow.Timeout(3*time.Second, flow.Timeout(time.Minute, flow.Timeout(2*time.Second, a))), "Timeout(A, 2s)"},
		{"Timeout through a removed group", flow.Timeout(time.Second, flow.Sequence(flow.Timeout(time.Minute, a))), "Timeout(A, 1s)"},
		{"Timeout inner optimised", flow.Timeout(time.Second, flow.Join(a, flow.Nop())), "Timeout(A, 1s)"},
		{"Retry of one try", flow.Retry(1, 0, flow.Join(a, b)), "Join(A, B)"},
		{"Retry inner optimised", flow.Retry(3, time.Second, flow.Sequence(a, flow.Sequence(b))), "Retry(Sequence(A, B), 3, 1s)"},
		{"Retry of Nop", flow.Retry(3, 0, flow.If(false, a)), "Nop"},
		{"When inner optimised", flow.When(always, flow.Join(flow.Join(a), b)), "When(Join(A, B))"},
		{"Shared inner optimised", flow.Join(s, s), "Join(Shared(Sequence(A, B)), Shared(Sequence(A, B)))"},
		{"Shared of Nop", flow.Sequence(flow.Shared(flow.Nop()), a), "A"},
		{"hooks kept, no flattening through them", flow.Sequence(a, flow.WithHooks(flow.Sequence(b, flow.Sequence(c)), flow.NopHook())), "Sequence(A, Sequence(B, C))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, flow.Describe(flow.Optimize(tt.in))); diff != "" {
				t.Errorf("Optimize mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOptimizeKeepsIdentity(t *testing.T) {
	w := flow.Sequence(leaf("A"), flow.Join(leaf("B"), leaf("C")))
	if got := flow.Optimize(w); got != w {
		t.Errorf("Optimize rebuilt a workflow that needed no change")
	}
	f := flow.ActionFunc(func(context.Context) (reconcile.Result, error) { return flow.Continue() })
	// ActionFunc values cannot be compared with ==; Optimize must not try.
	_ = flow.Optimize(flow.Join(f, flow.Sequence(f, flow.Nop())))
}

func TestOptimizeKeepsSharedShared(t *testing.T) {
	r := &recorder{}
	s := flow.Shared(flow.Sequence(r.ok("load"), flow.Nop()))
	w := flow.Optimize(flow.Join(s, flow.Sequence(s, r.ok("A")), flow.ParallelJoin(s)))
	if _, err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"A", "load"}, r.sorted()); diff != "" {
		t.Errorf("calls mismatch (-want +got):\n%s", diff)
	}
}

func TestOptimizeKeepsResults(t *testing.T) {
	// Each workflow is run as built and optimised; the outcomes and the calls match.
	build := func(r *recorder) []flow.Action {
		return []flow.Action{
			flow.Sequence(r.ok("A"), flow.Sequence(r.act("B", after(5), nil), r.ok("C")), r.ok("D")),
			flow.Join(flow.Join(r.act("A", after(9), errA), flow.Nop()), flow.Join(r.act("B", reconcile.Result{}, flow.ErrExit), r.act("C", after(2), errC))),
			flow.OrderedJoin(r.act("A", legacy(0, nil), nil), flow.OrderedJoin(r.ok("B"), flow.If(true, r.act("C", reconcile.Result{}, errB)))),
			flow.ParallelJoin(flow.ParallelJoin(r.act("A", after(3), nil)), r.act("B", after(1), errA)),
			flow.Sequence(flow.If(false, r.ok("X")), flow.Sequence(r.act("A", reconcile.Result{}, flow.ErrExit)), r.ok("B")),
			flow.Retry(1, 0, flow.Sequence(r.ok("A"), flow.Join(r.act("B", reconcile.Result{}, errB)))),
			flow.Timeout(time.Minute, flow.Timeout(time.Hour, flow.Sequence(r.ok("A"), flow.IfElse(false, r.ok("X"), r.act("B", after(4), nil))))),
		}
	}
	r1, r2 := &recorder{}, &recorder{}
	plain, optimised := build(r1), build(r2)
	for i := range plain {
		want := outcomeOf(plain[i].Run(context.Background()))
		got := outcomeOf(flow.Optimize(optimised[i]).Run(context.Background()))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("workflow %d: %s: outcome changed (-plain +optimised):\n%s", i, flow.Describe(plain[i]), diff)
		}
	}
	if diff := cmp.Diff(r1.sorted(), r2.sorted()); diff != "" {
		t.Errorf("calls changed (-plain +optimised):\n%s", diff)
	}
}

// graphWorkflow exercises every drawing rule.
func graphWorkflow() flow.Action {
	s := flow.Shared(leaf("load"))
	return flow.Sequence(
		s,
		flow.Join(leaf("A"), leaf(`B "quoted" #1 <x>`)),
		flow.Timeout(time.Second, leaf("C")),
		flow.OrderedJoin(s, leaf("D")),
		flow.IfElse(true, leaf("E"), flow.Retry(3, 0, leaf("F"))),
		flow.When(always, flow.ParallelJoin(leaf("G"), s)),
		flow.If(false, flow.Retry(2, time.Second, flow.Nop())),
	)
}

func TestMermaid(t *testing.T) {
	want := `flowchart TD
    subgraph s0 ["Shared"]
        n0["load"]
    end
    n1{{"Join"}}
    n2["A"]
    n3["B #quot;quoted#quot; #35;1 #lt;x#gt;"]
    n4{{"Join end"}}
    subgraph s1 ["Timeout 1s"]
        n5["C"]
    end
    n6{{"OrderedJoin"}}
    n7["D"]
    n8{{"OrderedJoin end"}}
    n9{"IfElse true"}
    n10["E"]
    subgraph s2 ["Retry 3"]
        n11["F"]
    end
    n12{{"IfElse end"}}
    subgraph s3 ["When"]
        n13{{"ParallelJoin"}}
        n14["G"]
        n15{{"ParallelJoin end"}}
    end
    subgraph s4 ["If false"]
        subgraph s5 ["Retry 2 every 1s"]
            n16("Nop")
        end
    end
    n1 --> n2
    n2 --> n4
    n1 --> n3
    n3 --> n4
    n0 --> n1
    n4 --> n5
    n6 -->|"1"| n0
    n0 --> n8
    n6 -->|"2"| n7
    n7 --> n8
    n5 --> n6
    n9 -->|"then"| n10
    n9 -->|"else"| n11
    n10 --> n12
    n11 --> n12
    n8 --> n9
    n13 --> n14
    n14 --> n15
    n13 --> n0
    n0 --> n15
    n12 --> n13
    n15 --> n16
`
	got := flow.Mermaid(graphWorkflow())
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Mermaid mismatch (-want +got):\n%s", diff)
	}
	if again := flow.Mermaid(graphWorkflow()); again != got {
		t.Errorf("Mermaid output is not deterministic")
	}
}

func TestDOT(t *testing.T) {
	want := `digraph flow {
    node [shape=box];
    subgraph cluster_0 {
        label="Shared";
        n0 [label="load"];
    }
    n1 [label="Join", shape=invtrapezium];
    n2 [label="A"];
    n3 [label="B \"quoted\" #1 <x>"];
    n4 [label="Join end", shape=trapezium];
    subgraph cluster_1 {
        label="Timeout 1s";
        n5 [label="C"];
    }
    n6 [label="OrderedJoin", shape=invtrapezium];
    n7 [label="D"];
    n8 [label="OrderedJoin end", shape=trapezium];
    n9 [label="IfElse true", shape=diamond];
    n10 [label="E"];
    subgraph cluster_2 {
        label="Retry 3";
        n11 [label="F"];
    }
    n12 [label="IfElse end", shape=trapezium];
    subgraph cluster_3 {
        label="When";
        n13 [label="ParallelJoin", shape=invtrapezium];
        n14 [label="G"];
        n15 [label="ParallelJoin end", shape=trapezium];
    }
    subgraph cluster_4 {
        label="If false";
        subgraph cluster_5 {
            label="Retry 2 every 1s";
            n16 [label="Nop", style=dashed];
        }
    }
    n1 -> n2;
    n2 -> n4;
    n1 -> n3;
    n3 -> n4;
    n0 -> n1;
    n4 -> n5;
    n6 -> n0 [label="1"];
    n0 -> n8;
    n6 -> n7 [label="2"];
    n7 -> n8;
    n5 -> n6;
    n9 -> n10 [label="then"];
    n9 -> n11 [label="else"];
    n10 -> n12;
    n11 -> n12;
    n8 -> n9;
    n13 -> n14;
    n14 -> n15;
    n13 -> n0;
    n0 -> n15;
    n12 -> n13;
    n15 -> n16;
}
`
	if diff := cmp.Diff(want, flow.DOT(graphWorkflow())); diff != "" {
		t.Errorf("DOT mismatch (-want +got):\n%s", diff)
	}
}

func TestGraphEdgeCases(t *testing.T) {
	tests := []struct {
		name, mermaid, dot string
		a                  flow.Action
	}{
		{
			name:    "single leaf with a newline",
			a:       leaf("line1\nline2"),
			mermaid: "flowchart TD\n    n0[\"line1 line2\"]\n",
			dot:     "digraph flow {\n    node [shape=box];\n    n0 [label=\"line1\\nline2\"];\n}\n",
		},
		{
			name:    "empty join",
			a:       flow.Join(),
			mermaid: "flowchart TD\n    n0{{\"Join\"}}\n    n1{{\"Join end\"}}\n    n0 --> n1\n",
			dot:     "digraph flow {\n    node [shape=box];\n    n0 [label=\"Join\", shape=invtrapezium];\n    n1 [label=\"Join end\", shape=trapezium];\n    n0 -> n1;\n}\n",
		},
		{
			name:    "empty sequential and hooks",
			a:       flow.WithHooks(flow.Sequence(), flow.NopHook()),
			mermaid: "flowchart TD\n    n0(\"Nop\")\n",
			dot:     "digraph flow {\n    node [shape=box];\n    n0 [label=\"Nop\", style=dashed];\n}\n",
		},
		{
			name:    "backslash",
			a:       leaf(`C:\dir`),
			mermaid: "flowchart TD\n    n0[\"C:\\dir\"]\n",
			dot:     "digraph flow {\n    node [shape=box];\n    n0 [label=\"C:\\\\dir\"];\n}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.mermaid, flow.Mermaid(tt.a)); diff != "" {
				t.Errorf("Mermaid mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.dot, flow.DOT(tt.a)); diff != "" {
				t.Errorf("DOT mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
