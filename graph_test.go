package bosun_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/internal/testapi"
)

// graphPass is the Pass of the graph tests' steps, which must never run.
type graphPass = bosun.Pass[*testapi.Widget]

// graphApply applies, cleans up and observes; it owns Applied.
type graphApply struct{ t *testing.T }

func (graphApply) Name() string         { return "apply" }
func (graphApply) Conditions() []string { return []string{"Applied"} }
func (s graphApply) Do(context.Context, *graphPass) (ctrl.Result, error) {
	s.t.Error("Graph ran Do of apply")
	return ctrl.Result{}, nil
}

func (s graphApply) Observe(context.Context, *graphPass) (ctrl.Result, error) {
	s.t.Error("Graph ran Observe of apply")
	return ctrl.Result{}, nil
}

func (s graphApply) Cleanup(context.Context, *graphPass) (ctrl.Result, error) {
	s.t.Error("Graph ran Cleanup of apply")
	return ctrl.Result{}, nil
}

// graphReport claims, reports in Post, and owns Reported.
type graphReport struct{ t *testing.T }

func (graphReport) Name() string         { return "report" }
func (graphReport) Conditions() []string { return []string{"Reported"} }
func (s graphReport) Do(context.Context, *graphPass) (ctrl.Result, error) {
	s.t.Error("Graph ran Do of report")
	return ctrl.Result{}, nil
}

func (s graphReport) Claim(context.Context, *graphPass) error {
	s.t.Error("Graph ran Claim of report")
	return nil
}

func (s graphReport) Post(context.Context, *graphPass) error {
	s.t.Error("Graph ran Post of report")
	return nil
}

// graphBundle is a composite of another package's making.
type graphBundle struct {
	bosun.Nop[*testapi.Widget]
	steps []widgetStep
}

func (graphBundle) Name() string          { return "bundle" }
func (b graphBundle) Steps() []widgetStep { return b.steps }

// graphCheck is a step whose Do must not run.
func graphCheck(t *testing.T, name string) bosun.StepFunc[*testapi.Widget] {
	return bosun.NewStep(name, func(context.Context, *graphPass) (ctrl.Result, error) {
		t.Errorf("Graph ran Do of %s", name)
		return ctrl.Result{}, nil
	})
}

// threeSteps is a reconciler of three steps and no Client: Graph needs
// none.
func threeSteps(t *testing.T) *bosun.Reconciler[*testapi.Widget] {
	return &bosun.Reconciler[*testapi.Widget]{
		Name:      "widgets",
		Finalizer: "example.com/cleanup",
		Steps:     []widgetStep{graphCheck(t, "check"), graphApply{t}, graphReport{t}},
	}
}

// composites is a reconciler whose steps are composites: a Join holding an
// If, an OrderedJoin and a composite of another package's making, and a
// Sequence.
func composites(t *testing.T) *bosun.Reconciler[*testapi.Widget] {
	always := func(*graphPass) bool { t.Error("Graph ran a predicate"); return true }
	return &bosun.Reconciler[*testapi.Widget]{
		Name: "composed",
		Steps: []widgetStep{
			bosun.Join(
				graphCheck(t, "list"),
				bosun.If(always, graphCheck(t, "run")),
			).Named("jobs"),
			bosun.OrderedJoin(graphCheck(t, "first"), graphCheck(t, "second")),
			graphBundle{steps: []widgetStep{graphCheck(t, "x"), bosun.WithConditions[*testapi.Widget](graphCheck(t, "y"), "Y")}},
			bosun.Sequence(graphCheck(t, "last")),
		},
	}
}

func TestGraph(t *testing.T) {
	tests := []struct {
		name string
		r    *bosun.Reconciler[*testapi.Widget]
		want bosun.Graph
	}{
		{
			name: "three steps",
			r:    threeSteps(t),
			want: bosun.Graph{Name: "widgets", Finalizer: "example.com/cleanup", Steps: []bosun.GraphStep{
				{Name: "check", Phases: []string{"do"}},
				{
					Name:       "apply",
					Phases:     []string{"do", "observe", "cleanup"},
					Conditions: []string{"Applied"},
				},
				{
					Name:       "report",
					Phases:     []string{"claim", "do", "post"},
					Conditions: []string{"Reported"},
				},
			}},
		},
		{
			name: "composites",
			r:    composites(t),
			want: bosun.Graph{Name: "composed", Steps: []bosun.GraphStep{
				{Name: "jobs", Kind: "Join", Phases: []string{"do"}, Steps: []bosun.GraphStep{
					{Name: "list", Phases: []string{"do"}},
					{Name: "If(run)", Kind: "If", Phases: []string{"do"}, Steps: []bosun.GraphStep{
						{Name: "run", Phases: []string{"do"}},
					}},
				}},
				{Name: "OrderedJoin(first,second)", Kind: "OrderedJoin", Phases: []string{"do"}, Steps: []bosun.GraphStep{
					{Name: "first", Phases: []string{"do"}},
					{Name: "second", Phases: []string{"do"}},
				}},
				{Name: "bundle", Kind: "Composite", Phases: []string{"do"}, Steps: []bosun.GraphStep{
					{Name: "x", Phases: []string{"do"}},
					{Name: "WithConditions(y)", Kind: "WithConditions", Phases: []string{"do"}, Conditions: []string{"Y"}, Steps: []bosun.GraphStep{
						{Name: "y", Phases: []string{"do"}},
					}},
				}},
				{Name: "Sequence(last)", Kind: "Sequence", Phases: []string{"do"}, Steps: []bosun.GraphStep{
					{Name: "last", Phases: []string{"do"}},
				}},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.r.Graph()); diff != "" {
				t.Errorf("Graph mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGraphDrawings(t *testing.T) {
	tests := []struct {
		name   string
		r      *bosun.Reconciler[*testapi.Widget]
		render func(bosun.Graph) string
		want   string
	}{
		{"three steps as Mermaid", threeSteps(t), bosun.Graph.Mermaid, `---
title: "reconciler widgets, finalizer example.com/cleanup"
---
flowchart TD
    subgraph s0 ["do, in step order"]
        n0["check: do"]
        n1["apply: do, observe, cleanup; conditions Applied"]
        n2["report: claim, do, post; conditions Reported"]
    end
    subgraph s1 ["cleanup, on deletion, in reverse order"]
        n3["apply"]
    end
    n0 --> n1
    n1 --> n2
`},
		{"three steps as DOT", threeSteps(t), bosun.Graph.DOT, `digraph flow {
    graph [label="reconciler widgets, finalizer example.com/cleanup", labelloc=t];
    node [shape=box];
    subgraph cluster_0 {
        label="do, in step order";
        n0 [label="check: do"];
        n1 [label="apply: do, observe, cleanup; conditions Applied"];
        n2 [label="report: claim, do, post; conditions Reported"];
    }
    subgraph cluster_1 {
        label="cleanup, on deletion, in reverse order";
        n3 [label="apply"];
    }
    n0 -> n1;
    n1 -> n2;
}
`},
		{"composites as Mermaid", composites(t), bosun.Graph.Mermaid, `---
title: "reconciler composed"
---
flowchart TD
    subgraph s0 ["do, in step order"]
        subgraph s1 ["jobs: do"]
            n0{{"Join"}}
            n1["list: do"]
            subgraph s2 ["If(run): do"]
                n2["run: do"]
            end
            n3{{"Join end"}}
        end
        subgraph s3 ["OrderedJoin(first,second): do"]
            n4{{"OrderedJoin"}}
            n5["first: do"]
            n6["second: do"]
            n7{{"OrderedJoin end"}}
        end
        subgraph s4 ["bundle: do"]
            n8{{"Composite"}}
            n9["x: do"]
            subgraph s5 ["WithConditions(y): do; conditions Y"]
                n10["y: do"]
            end
            n11{{"Composite end"}}
        end
        subgraph s6 ["Sequence(last): do"]
            n12["last: do"]
        end
    end
    n0 --> n1
    n1 --> n3
    n0 --> n2
    n2 --> n3
    n4 -->|"1"| n5
    n5 --> n7
    n4 -->|"2"| n6
    n6 --> n7
    n3 --> n4
    n8 --> n9
    n9 --> n11
    n8 --> n10
    n10 --> n11
    n7 --> n8
    n11 --> n12
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := tt.r.Graph()
			got := tt.render(g)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			if again := tt.render(tt.r.Graph()); again != got {
				t.Errorf("a second rendering differs:\n%s", again)
			}
		})
	}
}

// Graph describes what Validate refuses without failing: a nil step, and a
// composite that contains itself, cut where Validate gives up.
func TestGraphOfInvalidReconciler(t *testing.T) {
	var nilGroup *bosun.Group[*testapi.Widget]
	r := &bosun.Reconciler[*testapi.Widget]{Name: "broken", Steps: []widgetStep{nil, nilGroup, loop{}}}
	g := r.Graph()
	want := []bosun.GraphStep{
		{Name: "<nil>", Phases: []string{"do"}},
		{Name: "<nil>", Phases: []string{"do"}},
	}
	if diff := cmp.Diff(want, g.Steps[:2]); diff != "" {
		t.Errorf("nil steps mismatch (-want +got):\n%s", diff)
	}
	depth := 0
	for s := g.Steps[2]; len(s.Steps) > 0; s = s.Steps[0] {
		depth++
	}
	if depth != 64 {
		t.Errorf("the loop nests %d levels below the top, want 64", depth)
	}
	if !strings.Contains(g.Mermaid(), `["loop: do"]`) {
		t.Errorf("the loop is not drawn:\n%s", g.Mermaid())
	}
}
