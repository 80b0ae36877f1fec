package conditions_test

import (
	"errors"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/conditions"
)

// The engine calls these once per reconcile; they should cost little next to an API
// round trip.

func BenchmarkSetUnchanged(b *testing.B) {
	conds := []metav1.Condition{}
	c := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: string(conditions.ReasonSucceeded), ObservedGeneration: 1}
	conditions.Set(&conds, c, t0)
	for b.Loop() {
		conditions.Set(&conds, c, t1)
	}
}

func BenchmarkSummarize(b *testing.B) {
	var conds []metav1.Condition
	order := make([]string, 5)
	for i := range order {
		order[i] = fmt.Sprintf("Step%d", i)
		conditions.Set(&conds, metav1.Condition{Type: order[i], Status: metav1.ConditionTrue, Reason: "Done"}, t0)
	}
	for b.Loop() {
		conditions.Summarize(conds, order, 1)
	}
}

func BenchmarkFromError(b *testing.B) {
	err := fmt.Errorf("step divide: %w", conditions.Terminal("DivisorZero", errors.New("divisor is zero")))
	for b.Loop() {
		conditions.FromError(err)
	}
}

func BenchmarkSetObservedGeneration(b *testing.B) {
	w := &widget{}
	for b.Loop() {
		conditions.SetObservedGeneration(w, 3)
	}
}
