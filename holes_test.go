package bosun_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// TestNoOpWriteDoesNotWedgeObject runs a step that sets a status field the
// CRD prunes, so every status write after the first changes nothing on the
// server and keeps its resourceVersion. The engine must not take that
// version for one it wrote over: the step keeps running at the interval it
// asks for, instead of every pass ending with "cache behind own writes".
func TestNoOpWriteDoesNotWedgeObject(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var passes atomic.Int64
	r := &bosun.Reconciler[*testapi.Widget]{
		Name: "noop-write",
		Steps: []bosun.Step[*testapi.Widget]{
			bosun.NewStep("prune", func(_ context.Context, req *bosun.Request[*testapi.Widget]) (ctrl.Result, error) {
				passes.Add(1)
				req.Object.Status.Pruned = "dropped by the server"
				req.Object.Status.Result = req.Object.Spec.Value
				return ctrl.Result{RequeueAfter: 200 * time.Millisecond}, nil
			}),
		},
	}
	f.run(r, runOptions{})
	f.create("w", 3, 1, nil)
	f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
	start := passes.Load()
	bosuntest.Eventually(t, func(context.Context) error {
		if n := passes.Load() - start; n < 10 {
			return fmt.Errorf("%d passes of the step since Ready, want 10: the object is wedged", n)
		}
		return nil
	})
}

// noisy owns the condition Noisy and puts a 100 KB message in it, without
// going through conditions.Set.
type noisy struct{}

func (noisy) Conditions() []string { return []string{"Noisy"} }

func (noisy) Do(_ context.Context, req *bosun.Request[*testapi.Widget]) (ctrl.Result, error) {
	w := req.Object
	msg := strings.Repeat("every child is unwell; ", 100_000/23)
	c := conditions.Find(w.Status.Conditions, "Noisy")
	if c == nil {
		w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: "Noisy"})
		c = &w.Status.Conditions[len(w.Status.Conditions)-1]
	}
	c.Status, c.Reason, c.Message, c.ObservedGeneration = metav1.ConditionFalse, "Unwell", msg, w.Generation
	c.LastTransitionTime = metav1.Now()
	return ctrl.Result{}, nil
}

// TestLongConditionMessageIsBounded checks that a step's 100 KB condition
// message does not make the status write fail: the engine cuts it to the
// API server's limit, and Ready carries the cut message.
func TestLongConditionMessageIsBounded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.run(&bosun.Reconciler[*testapi.Widget]{Name: "noisy", Steps: []bosun.Step[*testapi.Widget]{noisy{}}}, runOptions{})
	f.create("w", 1, 1, nil)
	w := f.waitReady("w", metav1.ConditionFalse, "Unwell")
	for _, c := range w.Status.Conditions {
		if len(c.Message) > conditions.MaxMessageLength {
			t.Errorf("condition %s has a %d-byte message, want at most %d", c.Type, len(c.Message), conditions.MaxMessageLength)
		}
	}
	if m := conditions.Find(w.Status.Conditions, "Noisy").Message; !strings.HasSuffix(m, conditions.CutMarker) {
		t.Errorf("Noisy message does not end with %q", conditions.CutMarker)
	}
}
