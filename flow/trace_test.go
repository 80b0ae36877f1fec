package flow_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/flow"
)

// traced returns an action named name that returns res and err.
func traced(name string, res reconcile.Result, err error) flow.Action {
	return flow.New(name, func(context.Context) (reconcile.Result, error) { return res, err })
}

func TestTrace(t *testing.T) {
	ok := traced("ok", reconcile.Result{}, nil)
	later := traced("later", reconcile.Result{RequeueAfter: 5 * time.Second}, nil)
	now := traced("now", reconcile.Result{RequeueAfter: flow.Immediately}, nil)
	exit := traced("exit", reconcile.Result{}, flow.ErrExit)
	boom := traced("boom", reconcile.Result{}, errors.New("boom\nsecond line"))
	long := traced("long", reconcile.Result{}, errors.New(strings.Repeat("x", 80)))
	flaky := func() flow.Action {
		n := 0
		return flow.New("flaky", func(context.Context) (reconcile.Result, error) {
			n++
			if n < 3 {
				return reconcile.Result{}, errors.New("not yet")
			}
			return reconcile.Result{}, nil
		})
	}
	dynamic := flow.New("starts", func(ctx context.Context) (reconcile.Result, error) {
		return flow.Sequence(traced("inner", reconcile.Result{}, nil)).Run(ctx)
	})
	shared := flow.Shared(ok)

	tests := []struct {
		name     string
		workflow flow.Action
		// run, when set, is what runs instead of workflow: the drawing is
		// still of workflow.
		run        flow.Action
		want       string   // Trace.String
		wantLabels []string // the leaf and class lines of the Mermaid drawing
	}{{
		name:     "a sequence stops at a requeue",
		workflow: flow.Sequence(ok, later, boom),
		want:     "1 ok: ok\n2 later: requeue after 5s\n",
		wantLabels: []string{
			`n0["ok (run 1: ok)"]`, `n1["later (run 2: requeue after 5s)"]`, `n2["boom"]`,
			"class n0 succeeded", "class n1 requeued", "class n2 notrun",
		},
	}, {
		name:     "a join runs every action; errors, exit and an immediate requeue",
		workflow: flow.Join(now, exit, boom, long),
		want:     "1 now: requeue now\n2 exit: exit\n3 boom: error: boom second line\n4 long: error: " + strings.Repeat("x", 57) + "...\n",
		wantLabels: []string{
			`n1["now (run 1: requeue now)"]`, `n2["exit (run 2: exit)"]`, `n3["boom (run 3: error: boom second line)"]`,
			`n4["long (run 4: error: ` + strings.Repeat("x", 57) + `...)"]`,
			"class n1 requeued", "class n2 exited", "class n3,n4 failed",
		},
	}, {
		name:     "a retried action has every run on its node",
		workflow: flow.Retry(3, 0, flaky()),
		want:     "1 flaky: error: not yet\n2 flaky: error: not yet\n3 flaky: ok\n",
		wantLabels: []string{
			`n0["flaky (run 1: error: not yet; run 2: error: not yet; run 3: ok)"]`,
			"class n0 succeeded",
		},
	}, {
		name:       "a shared action runs and is drawn once",
		workflow:   flow.Join(shared, shared),
		want:       "1 ok: ok\n",
		wantLabels: []string{`n1["ok (run 1: ok)"]`, "class n1 succeeded"},
	}, {
		name:     "actions a workflow starts itself are drawn apart",
		workflow: dynamic,
		want:     "1 starts: ok\n2 inner: ok\n",
		wantLabels: []string{
			`n0["starts (run 1: ok)"]`, `t0["inner (run 2: ok)"]`, "class n0,t0 succeeded",
		},
	}, {
		name:     "an action of the same description stands for one that is not the same value",
		workflow: flow.Sequence(traced("a", reconcile.Result{}, nil), traced("b", reconcile.Result{}, nil)),
		run:      flow.Sequence(traced("a", reconcile.Result{}, nil), traced("b", reconcile.Result{}, errors.New("no"))),
		want:     "1 a: ok\n2 b: error: no\n",
		wantLabels: []string{
			`n0["a (run 1: ok)"]`, `n1["b (run 2: error: no)"]`, "class n0 succeeded", "class n1 failed",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &flow.Trace{}
			run := tt.workflow
			if tt.run != nil {
				run = tt.run
			}
			_, _ = flow.WithHooks(run, tr).Run(t.Context())
			if diff := cmp.Diff(tt.want, tr.String()); diff != "" {
				t.Errorf("String (-want +got):\n%s", diff)
			}
			var got []string
			for _, l := range strings.Split(tr.Mermaid(tt.workflow), "\n") {
				l = strings.TrimSpace(l)
				if strings.Contains(l, `["`) && !strings.HasPrefix(l, "subgraph") || strings.HasPrefix(l, "class ") {
					got = append(got, l)
				}
			}
			if diff := cmp.Diff(tt.wantLabels, got); diff != "" {
				t.Errorf("Mermaid leaves and classes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTraceDOT(t *testing.T) {
	a, b := traced("a", reconcile.Result{}, nil), traced("b", reconcile.Result{}, nil)
	workflow := flow.Sequence(a, flow.If(false, b))
	tr := &flow.Trace{}
	_, _ = flow.WithHooks(workflow, tr).Run(t.Context())
	want := "digraph flow {\n" +
		"    node [shape=box];\n" +
		"    n0 [label=\"a (run 1: ok)\"];\n" +
		"    subgraph cluster_0 {\n" +
		"        label=\"If false\";\n" +
		"        n1 [label=\"b\"];\n" +
		"    }\n" +
		"    n0 -> n1;\n" +
		"    n0 [style=filled, fillcolor=\"#d4edda\", color=\"#28a745\"];\n" +
		"    n1 [style=dashed, fontcolor=\"#6c757d\"];\n" +
		"}\n"
	if diff := cmp.Diff(want, tr.DOT(workflow)); diff != "" {
		t.Errorf("DOT (-want +got):\n%s", diff)
	}
	// The static graph is DOT's, the marks aside.
	if static := flow.DOT(workflow); !strings.Contains(static, "n0 [label=\"a\"];") {
		t.Errorf("DOT changed by a trace:\n%s", static)
	}
}

// TestTraceConcurrentAndReset runs a ParallelJoin under a trace (with -race
// this checks that the trace guards its records), a panicking action, which
// stays running, and Reset.
func TestTraceConcurrentAndReset(t *testing.T) {
	var actions []flow.Action
	for range 8 {
		actions = append(actions, traced("p", reconcile.Result{}, nil))
	}
	tr := &flow.Trace{}
	_, _ = flow.WithHooks(flow.ParallelJoin(actions...), tr).Run(t.Context())
	runs := tr.Runs()
	if len(runs) != 8 {
		t.Fatalf("%d runs, want 8", len(runs))
	}
	for i, r := range runs {
		if r.Order != i+1 || !r.Done || r.Outcome() != "ok" {
			t.Errorf("run %d: %+v, want order %d, done, ok", i, r, i+1)
		}
	}

	tr.Reset()
	panics := flow.New("panics", func(context.Context) (reconcile.Result, error) { panic("no") })
	_, err := flow.WithHooks(flow.ParallelJoin(panics), tr).Run(t.Context())
	if err == nil {
		t.Fatal("a panic in a ParallelJoin gave no error")
	}
	if diff := cmp.Diff("1 panics: running\n", tr.String()); diff != "" {
		t.Errorf("String after a panic (-want +got):\n%s", diff)
	}
	if m := tr.Mermaid(panics); !strings.Contains(m, "class n0 running") {
		t.Errorf("a panicked action is not drawn running:\n%s", m)
	}
}
