package flow_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/flow"
)

// benchSizes are the numbers of actions per workflow the benchmarks measure.
var benchSizes = []int{1, 10, 100}

// sink keeps the compiler from discarding benchmarked work.
var sink reconcile.Result

// benchFn is the work every benchmarked action does: next to nothing, so the figures
// show the cost of the framework around it.
//
//go:noinline
func benchFn(context.Context) (reconcile.Result, error) { return reconcile.Result{}, nil }

// perAction runs body under b.Loop and reports the cost per action of a workflow of n
// actions: ns/action and allocs/action.
func perAction(b *testing.B, n int, body func()) {
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		body()
	}
	runtime.ReadMemStats(&after)
	actions := float64(b.N) * float64(n)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/actions, "ns/action")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/actions, "allocs/action")
}

func benchActions(n int) []flow.Action {
	as := make([]flow.Action, n)
	for i := range as {
		as[i] = flow.New(fmt.Sprintf("action %d", i), benchFn)
	}
	return as
}

// BenchmarkWorkflow compares Sequence, Join and ParallelJoin of n actions with a
// plain loop that calls n functions of the same signature (the baseline), in one run.
func BenchmarkWorkflow(b *testing.B) {
	ctx := context.Background()
	for _, n := range benchSizes {
		fns := make([]func(context.Context) (reconcile.Result, error), n)
		for i := range fns {
			fns[i] = benchFn
		}
		b.Run(fmt.Sprintf("baseline/n=%d", n), func(b *testing.B) {
			perAction(b, n, func() {
				for _, f := range fns {
					res, err := f(ctx)
					if err != nil || res.RequeueAfter > 0 {
						sink = res
						return
					}
				}
			})
		})
		for _, w := range []struct {
			name string
			a    flow.Action
		}{
			{"Sequence", flow.Sequence(benchActions(n)...)},
			{"Join", flow.Join(benchActions(n)...)},
			{"ParallelJoin", flow.ParallelJoin(benchActions(n)...)},
			{"Sequence+NopHook", flow.WithHooks(flow.Sequence(benchActions(n)...), flow.NopHook())},
			{"Join+Shared", flow.Join(append(benchActions(n-1), flow.Shared(flow.New("shared", benchFn)))...)},
		} {
			b.Run(fmt.Sprintf("%s/n=%d", w.name, n), func(b *testing.B) {
				perAction(b, n, func() { sink, _ = w.a.Run(ctx) })
			})
		}
	}
}
