package conditions_test

import (
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/conditions"
)

// show prints conditions one a line.
func show(conds []metav1.Condition) {
	for _, c := range conds {
		fmt.Printf("%s=%s %s %q gen=%d at %s\n", c.Type, c.Status, c.Reason, c.Message,
			c.ObservedGeneration, c.LastTransitionTime.UTC().Format(time.TimeOnly))
	}
}

// One reconcile pass as the engine does it: declared conditions start Unknown, a step
// reports its own, and Ready is derived from them in step order.
func Example() {
	now := metav1.NewTime(time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC))
	var conds []metav1.Condition
	order := []string{"SecretRead", "SecretWritten"}

	conditions.Init(&conds, 1, now, order...)
	conditions.Set(&conds, metav1.Condition{
		Type: "SecretRead", Status: metav1.ConditionTrue, Reason: "Found", ObservedGeneration: 1,
	}, now)
	conditions.Set(&conds, conditions.Summarize(conds, order, 1), now)
	show(conds)
	// Output:
	// SecretRead=True Found "" gen=1 at 04:00:00
	// SecretWritten=Unknown Initializing "not reported yet" gen=1 at 04:00:00
	// Ready=Unknown Initializing "not reported yet" gen=1 at 04:00:00
}

// Set moves LastTransitionTime only when the status changes, and reports whether
// anything changed, so the status is written only when needed.
func ExampleSet() {
	first := metav1.NewTime(time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC))
	later := metav1.NewTime(first.Add(90 * time.Second))
	var conds []metav1.Condition

	synced := metav1.Condition{Type: "Synced", Status: metav1.ConditionFalse, Reason: "Waiting", ObservedGeneration: 1}
	fmt.Println(conditions.Set(&conds, synced, first))
	fmt.Println(conditions.Set(&conds, synced, later))
	synced.Message = "still waiting"
	fmt.Println(conditions.Set(&conds, synced, later))
	show(conds)
	synced.Status, synced.Reason, synced.Message = metav1.ConditionTrue, "Done", ""
	fmt.Println(conditions.Set(&conds, synced, later))
	show(conds)
	// Output:
	// true
	// false
	// true
	// Synced=False Waiting "still waiting" gen=1 at 04:00:00
	// true
	// Synced=True Done "" gen=1 at 04:01:30
}

// Ready takes the reason and message of the worst condition; False is worse than
// Unknown.
func ExampleSummarize() {
	conds := []metav1.Condition{
		{Type: "Fetched", Status: metav1.ConditionUnknown, Reason: "Pending", Message: "waiting for the input"},
		{Type: "Divided", Status: metav1.ConditionFalse, Reason: "DivisorZero", Message: "divisor is zero"},
	}
	ready := conditions.Summarize(conds, []string{"Fetched", "Divided"}, 3)
	fmt.Println(ready.Type, ready.Status, ready.Reason, ready.Message, ready.ObservedGeneration)

	conds[0].Status, conds[1].Status = metav1.ConditionTrue, metav1.ConditionTrue
	ready = conditions.Summarize(conds, []string{"Fetched", "Divided"}, 3)
	fmt.Println(ready.Type, ready.Status, ready.Reason)
	// Output:
	// Ready False DivisorZero divisor is zero 3
	// Ready True Succeeded
}

// A step gives a failure a reason and says whether retrying can help.
func ExampleTerminal() {
	divide := func(a, b int) (int, error) {
		if b == 0 {
			return 0, conditions.Terminal("DivisorZero", errors.New("spec.divisor must not be zero"))
		}
		return a / b, nil
	}
	_, err := divide(1, 0)
	reason, severity, message := conditions.FromError(fmt.Errorf("step divide: %w", err))
	fmt.Println(reason, severity, message)
	// Output:
	// DivisorZero Error step divide: spec.divisor must not be zero
}

// FromError gives every error a reason and a severity.
func ExampleFromError() {
	for _, err := range []error{
		conditions.Warningf("InputMissing", "secret %q not found", "input"),
		errors.New("connection refused"),
		reconcile.TerminalError(errors.New("unsupported region")),
		&conditions.PanicError{Step: "divide", Value: "integer divide by zero"},
	} {
		reason, severity, message := conditions.FromError(err)
		fmt.Printf("%s %s: %s\n", reason, severity, message)
	}
	// Output:
	// InputMissing Warning: secret "input" not found
	// ReconcileError Warning: connection refused
	// ReconcileError Error: terminal error: unsupported region
	// Panic Warning: panic in divide: integer divide by zero
}

// SetObservedGeneration finds Status.ObservedGeneration on any type that has one.
func ExampleSetObservedGeneration() {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: 4}}
	fmt.Println(conditions.SetObservedGeneration(d, d.Generation), d.Status.ObservedGeneration)
	// Output:
	// true 4
}
