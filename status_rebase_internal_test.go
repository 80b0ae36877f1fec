package bosun

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/internal/testapi"
)

// TestRebaseStatus checks which changes of another writer the pass's
// status changes are rebased onto, and which are real conflicts: the
// Widget as the pass read it, the pass's changes, the other writer's,
// and the status the rebased write leaves (or errStatusOverlap).
func TestRebaseStatus(t *testing.T) {
	t.Parallel()
	at := metav1.NewTime(time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC))
	later := metav1.NewTime(at.Add(time.Minute))
	cond := func(typ string, status metav1.ConditionStatus, reason string, gen int64) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: typ + " " + reason, ObservedGeneration: gen, LastTransitionTime: at}
	}
	ready := cond("Ready", metav1.ConditionTrue, "Succeeded", 1)
	computed := cond("Computed", metav1.ConditionTrue, "Divided", 1)
	check := cond("ExternalCheck", metav1.ConditionTrue, "Checked", 1)
	read := func() *testapi.Widget {
		return &testapi.Widget{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", UID: "u", ResourceVersion: "7", Generation: 1},
			Spec:       testapi.WidgetSpec{Value: 6, Divisor: 3},
			Status: testapi.WidgetStatus{ObservedGeneration: 1, Result: 2,
				Conditions: []metav1.Condition{ready, computed, check}},
		}
	}
	set := func(w *testapi.Widget, c metav1.Condition) {
		for i := range w.Status.Conditions {
			if w.Status.Conditions[i].Type == c.Type {
				w.Status.Conditions[i] = c
				return
			}
		}
		w.Status.Conditions = append(w.Status.Conditions, c)
	}
	remove := func(w *testapi.Widget, typ string) {
		var kept []metav1.Condition
		for _, c := range w.Status.Conditions {
			if c.Type != typ {
				kept = append(kept, c)
			}
		}
		w.Status.Conditions = kept
	}
	notReady := cond("Ready", metav1.ConditionFalse, "ZeroDivisor", 1)
	checkAgain := check
	checkAgain.Message, checkAgain.LastTransitionTime = "checked again", later

	cases := []struct {
		name string
		// read, when set, changes the Widget the pass read; pass is what
		// the pass changed, other what the other writer changed in the
		// meantime.
		read, pass, other func(*testapi.Widget)
		// want is the status of the rebased write; nil for a conflict.
		want *testapi.WidgetStatus
		// same: the stored version holds the pass's changes already.
		same bool
		// wins rebases as Pass.Reload does: the pass's value where both
		// changed the same condition type or field.
		wins bool
	}{
		{
			name:  "another condition type changed",
			pass:  func(w *testapi.Widget) { set(w, notReady) },
			other: func(w *testapi.Widget) { set(w, checkAgain) },
			want:  &testapi.WidgetStatus{ObservedGeneration: 1, Result: 2, Conditions: []metav1.Condition{notReady, computed, checkAgain}},
		},
		{
			name:  "another condition type added",
			pass:  func(w *testapi.Widget) { set(w, notReady) },
			other: func(w *testapi.Widget) { set(w, cond("Audited", metav1.ConditionTrue, "Seen", 1)) },
			want: &testapi.WidgetStatus{ObservedGeneration: 1, Result: 2, Conditions: []metav1.Condition{
				notReady, computed, check, cond("Audited", metav1.ConditionTrue, "Seen", 1)}},
		},
		{
			name:  "another condition type removed",
			pass:  func(w *testapi.Widget) { set(w, notReady) },
			other: func(w *testapi.Widget) { remove(w, "ExternalCheck") },
			want:  &testapi.WidgetStatus{ObservedGeneration: 1, Result: 2, Conditions: []metav1.Condition{notReady, computed}},
		},
		{
			name: "the pass adds types, after the other's",
			pass: func(w *testapi.Widget) {
				set(w, cond("Reconciling", metav1.ConditionTrue, "Progressing", 1))
				set(w, cond("DeletionBlocked", metav1.ConditionTrue, "CleanupPending", 1))
			},
			other: func(w *testapi.Widget) { remove(w, "ExternalCheck"); set(w, checkAgain) },
			want: &testapi.WidgetStatus{ObservedGeneration: 1, Result: 2, Conditions: []metav1.Condition{
				ready, computed, checkAgain,
				cond("Reconciling", metav1.ConditionTrue, "Progressing", 1), cond("DeletionBlocked", metav1.ConditionTrue, "CleanupPending", 1)}},
		},
		{
			name:  "the pass removes a type",
			pass:  func(w *testapi.Widget) { remove(w, "Computed") },
			other: func(w *testapi.Widget) { set(w, checkAgain) },
			want:  &testapi.WidgetStatus{ObservedGeneration: 1, Result: 2, Conditions: []metav1.Condition{ready, checkAgain}},
		},
		{
			name:  "the pass removes every condition",
			pass:  func(w *testapi.Widget) { w.Status.Conditions = nil },
			other: func(w *testapi.Widget) { set(w, cond("Audited", metav1.ConditionTrue, "Seen", 1)) },
			want:  &testapi.WidgetStatus{ObservedGeneration: 1, Result: 2, Conditions: []metav1.Condition{cond("Audited", metav1.ConditionTrue, "Seen", 1)}},
		},
		{
			name:  "the pass removes every condition, one of them changed by another",
			pass:  func(w *testapi.Widget) { w.Status.Conditions = nil },
			other: func(w *testapi.Widget) { set(w, checkAgain) },
		},
		{
			name: "the first status of the pass",
			read: func(w *testapi.Widget) { w.Status = testapi.WidgetStatus{} },
			pass: func(w *testapi.Widget) {
				w.Status = testapi.WidgetStatus{ObservedGeneration: 1, Result: 2, Conditions: []metav1.Condition{computed, ready}}
			},
			other: func(w *testapi.Widget) { w.Status.Conditions = []metav1.Condition{check} },
			want:  &testapi.WidgetStatus{ObservedGeneration: 1, Result: 2, Conditions: []metav1.Condition{check, computed, ready}},
		},
		{
			name:  "another status field",
			pass:  func(w *testapi.Widget) { w.Status.Result = 5; set(w, notReady) },
			other: func(w *testapi.Widget) { w.Status.LastHandledReconcileAt = "now" },
			want: &testapi.WidgetStatus{ObservedGeneration: 1, Result: 5, LastHandledReconcileAt: "now",
				Conditions: []metav1.Condition{notReady, computed, check}},
		},
		{
			name:  "the spec and the metadata, changed by another",
			pass:  func(w *testapi.Widget) { set(w, notReady) },
			other: func(w *testapi.Widget) { w.Spec.Value, w.Generation, w.Labels = 9, 2, map[string]string{"a": "b"} },
			want:  &testapi.WidgetStatus{ObservedGeneration: 1, Result: 2, Conditions: []metav1.Condition{notReady, computed, check}},
		},
		{
			name:  "the same change on both sides",
			pass:  func(w *testapi.Widget) { set(w, notReady); w.Status.Result = 0 },
			other: func(w *testapi.Widget) { set(w, notReady); w.Status.Result = 0; set(w, checkAgain) },
			same:  true,
		},
		{
			name:  "the same condition type, to another value",
			pass:  func(w *testapi.Widget) { set(w, notReady) },
			other: func(w *testapi.Widget) { set(w, cond("Ready", metav1.ConditionFalse, "Broken", 1)) },
		},
		{
			name:  "the same condition type, its generation only",
			pass:  func(w *testapi.Widget) { set(w, notReady) },
			other: func(w *testapi.Widget) { set(w, cond("Ready", metav1.ConditionTrue, "Succeeded", 2)) },
		},
		{
			name:  "a type the pass removed, changed by another",
			pass:  func(w *testapi.Widget) { remove(w, "Computed") },
			other: func(w *testapi.Widget) { set(w, cond("Computed", metav1.ConditionFalse, "Stale", 1)) },
		},
		{
			name:  "a type the pass changed, removed by another",
			pass:  func(w *testapi.Widget) { set(w, notReady) },
			other: func(w *testapi.Widget) { remove(w, "Ready") },
		},
		{
			name:  "a type both added, differently",
			pass:  func(w *testapi.Widget) { set(w, cond("Stalled", metav1.ConditionTrue, "ZeroDivisor", 1)) },
			other: func(w *testapi.Widget) { set(w, cond("Stalled", metav1.ConditionTrue, "Other", 1)) },
		},
		{
			name:  "the same status field",
			pass:  func(w *testapi.Widget) { w.Status.Result = 5 },
			other: func(w *testapi.Widget) { w.Status.Result = 7 },
		},
		{
			name: "the whole list written back from an older read",
			pass: func(w *testapi.Widget) { set(w, notReady) },
			other: func(w *testapi.Widget) {
				older := cond("Ready", metav1.ConditionUnknown, "Initializing", 1)
				w.Status.Conditions = []metav1.Condition{older, computed, checkAgain}
			},
		},
		{
			name: "as Reload: the same condition type, the pass's value",
			pass: func(w *testapi.Widget) { set(w, notReady) },
			other: func(w *testapi.Widget) {
				set(w, cond("Ready", metav1.ConditionFalse, "Broken", 1))
				set(w, checkAgain)
			},
			wins: true,
			want: &testapi.WidgetStatus{ObservedGeneration: 1, Result: 2, Conditions: []metav1.Condition{notReady, computed, checkAgain}},
		},
		{
			name: "as Reload: a type the pass removed, changed by another",
			pass: func(w *testapi.Widget) { remove(w, "Computed") },
			other: func(w *testapi.Widget) {
				set(w, cond("Computed", metav1.ConditionFalse, "Stale", 1))
				set(w, checkAgain)
			},
			wins: true,
			want: &testapi.WidgetStatus{ObservedGeneration: 1, Result: 2, Conditions: []metav1.Condition{ready, checkAgain}},
		},
		{
			name:  "as Reload: the same status field, the pass's value",
			pass:  func(w *testapi.Widget) { w.Status.Result = 5 },
			other: func(w *testapi.Widget) { w.Status.Result = 7; w.Status.LastHandledReconcileAt = "now" },
			wins:  true,
			want: &testapi.WidgetStatus{ObservedGeneration: 1, Result: 5, LastHandledReconcileAt: "now",
				Conditions: []metav1.Condition{ready, computed, check}},
		},
		{
			name: "the whole list written back from an older read, where the pass changed nothing",
			pass: func(w *testapi.Widget) { w.Status.Result = 5 },
			other: func(w *testapi.Widget) {
				older := cond("Ready", metav1.ConditionUnknown, "Initializing", 1)
				w.Status.Conditions = []metav1.Condition{older, computed, checkAgain}
			},
			want: &testapi.WidgetStatus{ObservedGeneration: 1, Result: 5, Conditions: []metav1.Condition{
				cond("Ready", metav1.ConditionUnknown, "Initializing", 1), computed, checkAgain}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			orig, mine, fresh := read(), read(), read()
			if tc.read != nil {
				for _, w := range []*testapi.Widget{orig, mine, fresh} {
					tc.read(w)
				}
			}
			tc.pass(mine)
			tc.other(fresh)
			fresh.ResourceVersion = "8"
			same, patch, err := statusOnlyDiff(orig, mine)
			if err != nil || !same || patch == nil {
				t.Fatalf("the pass's status patch: %v, %s, %v", same, patch, err)
			}
			rebased, onto, err := rebaseStatus(orig, fresh, patch, tc.wins)
			switch {
			case tc.want == nil && !tc.same:
				if !errors.Is(err, errStatusOverlap) {
					t.Fatalf("rebaseStatus = %+v, %s, %v; want errStatusOverlap", rebased.Status, onto, err)
				}
				return
			case err != nil:
				t.Fatal(err)
			case tc.same:
				if onto != nil || rebased != fresh {
					t.Fatalf("rebaseStatus wrote %s over a version that holds the pass's changes", onto)
				}
				return
			}
			if diff := cmp.Diff(*tc.want, rebased.Status); diff != "" {
				t.Errorf("rebased status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(fresh.Spec, rebased.Spec); diff != "" {
				t.Errorf("rebased spec (-stored +got):\n%s", diff)
			}
			if diff := cmp.Diff(fresh.ObjectMeta, rebased.ObjectMeta); diff != "" {
				t.Errorf("rebased metadata (-stored +got):\n%s", diff)
			}
			// What the write sends makes the rebased status of the stored one.
			stored, err := json.Marshal(fresh.Status)
			if err != nil {
				t.Fatal(err)
			}
			applied, err := jsonpatch.MergePatch(stored, onto)
			if err != nil {
				t.Fatal(err)
			}
			var written testapi.WidgetStatus
			if err := json.Unmarshal(applied, &written); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(*tc.want, written); diff != "" {
				t.Errorf("the stored status with the write applied (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRebaseStatusUnstructured: without a Go type, the conditions at
// status.conditions still go by type, and big numbers keep every digit.
func TestRebaseStatusUnstructured(t *testing.T) {
	t.Parallel()
	obj := func(conds []any, count int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "test.bosun.dev/v1", "kind": "Gadget",
			"metadata": map[string]any{"name": "g", "namespace": "ns", "uid": "u", "resourceVersion": "7"},
			"status":   map[string]any{"conditions": conds, "count": count},
		}}
	}
	c := func(typ, status string) any { return map[string]any{"type": typ, "status": status} }
	const big = int64(1)<<60 + 1
	orig := obj([]any{c("Ready", "True"), c("ExternalCheck", "True")}, big)
	mine := obj([]any{c("Ready", "False"), c("ExternalCheck", "True")}, big+2)
	fresh := obj([]any{c("Ready", "True"), c("ExternalCheck", "False")}, big)
	patch, err := client.MergeFrom(orig).Data(mine)
	if err != nil {
		t.Fatal(err)
	}
	var parts map[string]json.RawMessage
	if err := json.Unmarshal(patch, &parts); err != nil {
		t.Fatal(err)
	}
	rebased, _, err := rebaseStatus(orig, fresh, parts["status"], false)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"conditions": []any{c("Ready", "False"), c("ExternalCheck", "False")}, "count": big + 2}
	if diff := cmp.Diff(want, rebased.Object["status"]); diff != "" {
		t.Errorf("rebased status (-want +got):\n%s", diff)
	}
}
