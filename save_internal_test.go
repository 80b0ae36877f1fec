package bosun

import (
	"encoding/json"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// TestStatusOnlyDiff checks that the status patch computed from the
// statuses alone is the status part of the patch of the whole object, and
// takes the status read to the pass's, and that any other change sends
// the caller to that whole patch.
func TestStatusOnlyDiff(t *testing.T) {
	t.Parallel()
	now := metav1.Now()
	base := func() *testapi.Widget {
		return &testapi.Widget{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", ResourceVersion: "7", Labels: map[string]string{"a": "b"}},
			Spec:       testapi.WidgetSpec{Value: 6, Divisor: 3},
			Status: testapi.WidgetStatus{ObservedGeneration: 1, Result: 2, Conditions: []metav1.Condition{
				{Type: "Ready", Status: metav1.ConditionTrue, Reason: string(conditions.ReasonSucceeded), LastTransitionTime: now},
			}},
		}
	}
	cases := []struct {
		name   string
		change func(*testapi.Widget)
		// whole: a change outside the status, for the whole patch.
		whole bool
	}{
		{name: "untouched", change: func(*testapi.Widget) {}},
		{name: "a status field", change: func(w *testapi.Widget) { w.Status.Result = 5 }},
		{name: "a status field cleared", change: func(w *testapi.Widget) { w.Status.Result = 0 }},
		{name: "a condition changed", change: func(w *testapi.Widget) {
			w.Status.Conditions[0].Status, w.Status.Conditions[0].Reason = metav1.ConditionFalse, "Failed"
		}},
		{name: "a condition added", change: func(w *testapi.Widget) {
			w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: "Computed", Status: metav1.ConditionTrue, Reason: "Divided", LastTransitionTime: now})
		}},
		{name: "conditions removed", change: func(w *testapi.Widget) { w.Status.Conditions = nil }},
		{name: "nil and empty conditions encode alike", change: func(w *testapi.Widget) {
			w.Status.Conditions = []metav1.Condition{}
		}},
		{name: "a label", change: func(w *testapi.Widget) { w.Labels["a"] = "c" }, whole: true},
		{name: "a finalizer and the status", change: func(w *testapi.Widget) {
			w.Finalizers = append(w.Finalizers, "x")
			w.Status.Result = 9
		}, whole: true},
		{name: "the spec", change: func(w *testapi.Widget) { w.Spec.Value = 1 }, whole: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			before := base()
			after := before.DeepCopy()
			tc.change(after)
			same, status, err := statusOnlyDiff(before, after)
			if err != nil {
				t.Fatal(err)
			}
			if same == tc.whole {
				t.Fatalf("same = %v, want %v", same, !tc.whole)
			}
			if tc.whole {
				return
			}
			data, err := client.MergeFrom(before).Data(after)
			if err != nil {
				t.Fatal(err)
			}
			var parts map[string]json.RawMessage
			if err := json.Unmarshal(data, &parts); err != nil {
				t.Fatal(err)
			}
			var whole, own any
			if err := json.Unmarshal(parts["status"], &whole); err != nil && parts["status"] != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(status, &own); err != nil && status != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(whole, own); diff != "" {
				t.Errorf("status patch (-whole object's +statuses'):\n%s", diff)
			}
			// Applied to the status read, the patch gives the pass's.
			oldJSON, err := json.Marshal(before.Status)
			if err != nil {
				t.Fatal(err)
			}
			newJSON, err := json.Marshal(after.Status)
			if err != nil {
				t.Fatal(err)
			}
			applied := oldJSON
			if status != nil {
				if applied, err = jsonpatch.MergePatch(oldJSON, status); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(decodeJSON(t, newJSON), decodeJSON(t, applied)); diff != "" {
				t.Errorf("the status read with the patch applied (-pass's +got):\n%s", diff)
			}
		})
	}
}

// decodeJSON decodes a JSON document, dropping the members whose value is
// null: a merge patch and the document it makes treat them as absent.
func decodeJSON(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
	var drop func(any) any
	drop = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if e == nil {
					delete(v, k)
					continue
				}
				v[k] = drop(e)
			}
		case []any:
			for i, e := range v {
				v[i] = drop(e)
			}
		}
		return v
	}
	return drop(v)
}

// TestStatusOnlyDiffFallsBack checks the objects whose status the diff
// cannot take apart: they go to the patch of the whole object.
func TestStatusOnlyDiffFallsBack(t *testing.T) {
	t.Parallel()
	u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"a": "b"}}}
	v := u.DeepCopy()
	v.Object["status"] = map[string]any{"a": "c"}
	if same, _, err := statusOnlyDiff(u, v); same || err != nil {
		t.Errorf("unstructured: same = %v, %v; want false", same, err)
	}
	before := &pointerStatus{}
	after := &pointerStatus{Status: &testapi.WidgetStatus{Result: 1}}
	if same, _, err := statusOnlyDiff(before, after); same || err != nil {
		t.Errorf("a status set from null: same = %v, %v; want false", same, err)
	}
	if same, _, err := statusOnlyDiff(&testapi.Widget{}, &onlyMeta{}); same || err != nil {
		t.Errorf("objects of two types: same = %v, %v; want false", same, err)
	}
	if same, _, err := statusOnlyDiff(&onlyMeta{}, &onlyMeta{ObjectMeta: metav1.ObjectMeta{Name: "x"}}); same || err != nil {
		t.Errorf("a kind with no status: same = %v, %v; want false", same, err)
	}
}

// BenchmarkStatusPatch compares the status patch of a pass that changed
// only the status, computed from the whole objects (as the engine did
// before) and from the statuses alone.
func BenchmarkStatusPatch(b *testing.B) {
	before := &testapi.Widget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", ResourceVersion: "7", Generation: 1,
			Labels: map[string]string{"app": "widgets"}, Annotations: map[string]string{"note": "a widget"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1"}}},
		Spec: testapi.WidgetSpec{Value: 6, Divisor: 3},
	}
	after := before.DeepCopy()
	after.Status.Result, after.Status.ObservedGeneration = 2, 1
	after.Status.Conditions = []metav1.Condition{
		{Type: "Computed", Status: metav1.ConditionTrue, Reason: "Divided", ObservedGeneration: 1, LastTransitionTime: metav1.Now()},
		{Type: "Ready", Status: metav1.ConditionTrue, Reason: string(conditions.ReasonSucceeded), ObservedGeneration: 1, LastTransitionTime: metav1.Now()},
	}
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			data, err := client.MergeFrom(before).Data(after)
			if err != nil {
				b.Fatal(err)
			}
			var parts map[string]json.RawMessage
			if err := json.Unmarshal(data, &parts); err != nil || parts["status"] == nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("status-only", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if same, status, err := statusOnlyDiff(before, after); !same || status == nil || err != nil {
				b.Fatal(same, err)
			}
		}
	})
}

// pointerStatus is a kind whose status may be null.
type pointerStatus struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            *testapi.WidgetStatus `json:"status,omitempty"`
}

func (p *pointerStatus) DeepCopyObject() runtime.Object {
	out := *p
	out.ObjectMeta = *p.DeepCopy()
	if p.Status != nil {
		out.Status = p.Status.DeepCopy()
	}
	return &out
}

// onlyMeta is a kind with no status.
type onlyMeta struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

func (o *onlyMeta) DeepCopyObject() runtime.Object {
	out := *o
	out.ObjectMeta = *o.DeepCopy()
	return &out
}
