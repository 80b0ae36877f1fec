package bosun_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/internal/testapi"
)

func TestRollbackStatus(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name       string
		fn         func(w *testapi.Widget) error
		wantResult int64
		wantConds  int
		wantErr    error
	}{
		{"success keeps the edits", func(w *testapi.Widget) error {
			w.Status.Result = 42
			w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: "X"})
			return nil
		}, 42, 2, nil},
		{"error discards the edits", func(w *testapi.Widget) error {
			w.Status.Result = 42
			w.Status.Conditions[0].Status = metav1.ConditionFalse
			w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: "X"})
			return errBoom
		}, 7, 1, errBoom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &testapi.Widget{Spec: testapi.WidgetSpec{Value: 1}, Status: testapi.WidgetStatus{
				Result: 7, Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue}},
			}}
			err := bosun.RollbackStatus(w, func() error {
				w.Spec.Value = 2 // not status: kept either way
				return tt.fn(w)
			})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			got := []int64{w.Status.Result, int64(len(w.Status.Conditions)), w.Spec.Value}
			if diff := cmp.Diff([]int64{tt.wantResult, int64(tt.wantConds), 2}, got); diff != "" {
				t.Errorf("result, conditions, spec.value (-want +got):\n%s", diff)
			}
			if tt.wantErr != nil && w.Status.Conditions[0].Status != metav1.ConditionTrue {
				t.Errorf("a condition edited in place was not restored: %+v", w.Status.Conditions[0])
			}
		})
	}
}

func TestRollbackStatusPanicAndUnstructured(t *testing.T) {
	w := &testapi.Widget{Status: testapi.WidgetStatus{Result: 7}}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not go through")
			}
		}()
		_ = bosun.RollbackStatus(w, func() error {
			w.Status.Result = 1
			panic("step bug")
		})
	}()
	if w.Status.Result != 7 {
		t.Errorf("status.result = %d after a panic, want 7", w.Status.Result)
	}

	u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"phase": "old"}}}
	_ = bosun.RollbackStatus(u, func() error {
		u.Object["status"] = map[string]any{"phase": "new"}
		return errors.New("no")
	})
	if diff := cmp.Diff(map[string]any{"phase": "old"}, u.Object["status"]); diff != "" {
		t.Errorf("unstructured status (-want +got):\n%s", diff)
	}
}

func TestStatusStep(t *testing.T) {
	step := bosun.NewStatusStep("result", func(_ context.Context, w *testapi.Widget) error {
		w.Status.Result = w.Spec.Value * 2
		if w.Spec.Divisor == 0 {
			return errors.New("zero divisor")
		}
		return nil
	})
	if got := bosun.StepName[*testapi.Widget](step); got != "result" {
		t.Errorf("name = %q, want result", got)
	}
	w := &testapi.Widget{Spec: testapi.WidgetSpec{Value: 3, Divisor: 1}}
	if _, err := step.Do(t.Context(), &bosun.Pass[*testapi.Widget]{Object: w}); err != nil || w.Status.Result != 6 {
		t.Errorf("Do = %v, result %d; want nil, 6", err, w.Status.Result)
	}
	w.Spec.Value, w.Spec.Divisor = 5, 0
	if _, err := step.Do(t.Context(), &bosun.Pass[*testapi.Widget]{Object: w}); err == nil || w.Status.Result != 6 {
		t.Errorf("Do = %v, result %d; want an error and the earlier 6", err, w.Status.Result)
	}
}
