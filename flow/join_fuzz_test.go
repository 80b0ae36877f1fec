package flow_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/flow"
)

// fuzzErrs are the errors the fuzzed outcomes pick from.
var fuzzErrs = []error{
	errA, errB, errC,
	flow.ErrExit,
	fmt.Errorf("stop: %w", flow.ErrExit),
	errors.Join(errA, errB),
	errors.Join(flow.ErrExit, errC),
}

// outcomesFrom decodes data into outcomes: two bytes per outcome.
func outcomesFrom(data []byte) []flow.Outcome {
	var out []flow.Outcome
	for i := 0; i+1 < len(data) && len(out) < 12; i += 2 {
		kind, arg := data[i], data[i+1]
		var o flow.Outcome
		switch kind % 6 {
		case 1:
			o.Result.RequeueAfter = time.Duration(arg%8) * time.Second
		case 2:
			o.Result = legacy(0, nil)
		case 3:
			o.Err = fuzzErrs[int(arg)%len(fuzzErrs)]
		case 4:
			o.Result.RequeueAfter = time.Duration(arg%5) * time.Second
			o.Err = fuzzErrs[int(arg/5)%len(fuzzErrs)]
		case 5:
			o.Result.Priority = prio(int(arg % 4))
		}
		out = append(out, o)
	}
	return out
}

// asAction returns an action that returns o.
func asAction(i int, o flow.Outcome) flow.Action {
	return flow.New(fmt.Sprintf("a%d", i), func(context.Context) (reconcile.Result, error) { return o.Result, o.Err })
}

// FuzzJoinOrder checks that the outcome of Join, OrderedJoin and ParallelJoin does not
// depend on the order of their children: the result is equal and the joined error
// holds the same set of errors.
func FuzzJoinOrder(f *testing.F) {
	f.Add([]byte{3, 0, 3, 3}, uint64(1))
	f.Add([]byte{1, 5, 1, 2, 3, 1, 0, 0}, uint64(2))
	f.Add([]byte{3, 3, 3, 4, 2, 0, 4, 17}, uint64(3))
	f.Add([]byte{5, 1, 5, 3, 3, 6, 3, 5, 1, 0}, uint64(4))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		outcomes := outcomesFrom(data)
		shuffled := append([]flow.Outcome(nil), outcomes...)
		rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)).Shuffle(len(shuffled), func(i, j int) {
			shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
		})
		want := outcomeOf(flow.JoinResults(outcomes...))
		if diff := cmp.Diff(want, outcomeOf(flow.JoinResults(shuffled...))); diff != "" {
			t.Fatalf("JoinResults depends on order (-original +shuffled):\n%s", diff)
		}
		actions := func(os []flow.Outcome) []flow.Action {
			as := make([]flow.Action, len(os))
			for i, o := range os {
				as[i] = asAction(i, o)
			}
			return as
		}
		for name, combine := range map[string]func(...flow.Action) flow.Action{
			"Join": flow.Join, "OrderedJoin": flow.OrderedJoin, "ParallelJoin": flow.ParallelJoin,
		} {
			got := outcomeOf(combine(actions(shuffled)...).Run(context.Background()))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%s depends on order (-JoinResults +%s):\n%s", name, name, diff)
			}
		}
		// The interruption rules hold whatever the order.
		res, err := flow.JoinResults(shuffled...)
		for _, o := range outcomes {
			if flow.NeedsRequeue(o.Result, o.Err) && !flow.NeedsRequeue(res, err) {
				t.Fatalf("an outcome needs a requeue but the join %v, %v does not", res, err)
			}
			if o.Result.RequeueAfter > 0 && res.RequeueAfter > o.Result.RequeueAfter {
				t.Fatalf("joined RequeueAfter %v is later than %v", res.RequeueAfter, o.Result.RequeueAfter)
			}
		}
	})
}
