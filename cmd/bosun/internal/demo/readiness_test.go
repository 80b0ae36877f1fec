package demo

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestReadinessOf(t *testing.T) {
	obj := func(generation int64, status map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetGeneration(generation)
		if status != nil {
			u.Object["status"] = status
		}
		return u
	}
	ready := func(status string, observed int64) map[string]any {
		return map[string]any{"type": "Ready", "status": status, "reason": "Because", "message": "all good", "observedGeneration": observed}
	}
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want readiness
	}{
		{
			name: "no status",
			obj:  obj(1, nil),
			want: readiness{summary: "no Ready condition yet"},
		},
		{
			name: "ready for the current generation",
			obj:  obj(2, map[string]any{"observedGeneration": int64(2), "conditions": []any{ready("True", 2)}}),
			want: readiness{ready: true, summary: "Ready", message: "all good"},
		},
		{
			name: "ready condition for an older generation",
			obj:  obj(3, map[string]any{"conditions": []any{ready("True", 2)}}),
			want: readiness{summary: "Ready condition describes generation 2, object is at 3", message: "all good"},
		},
		{
			name: "status.observedGeneration behind",
			obj:  obj(3, map[string]any{"observedGeneration": int64(1), "conditions": []any{ready("True", 3)}}),
			want: readiness{summary: "status describes generation 1, object is at 3"},
		},
		{
			name: "not ready",
			obj:  obj(1, map[string]any{"conditions": []any{map[string]any{"type": "Other", "status": "True"}, ready("False", 1)}}),
			want: readiness{summary: "Ready=False Because: all good", message: "all good"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := readinessOf(tc.obj)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(readiness{})); diff != "" {
				t.Errorf("readinessOf() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
