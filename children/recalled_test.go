package children

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/bosunkit/bosun/internal/testapi"
)

// TestAnsweredIsTheRememberedObjectOnly checks how confirmRecalled tells a
// child judged from the answer of the step's apply: by that very object,
// for the parent and child it was remembered for, and not once its live
// form is dropped after cacheGrace.
func TestAnsweredIsTheRememberedObjectOnly(t *testing.T) {
	now := time.Now()
	m := &memory{}
	m.parents.Now = func() time.Time { return now }
	parent := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: types.UID("uid-p")}}
	answer := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm-0"}}
	m.rememberApply(parent, "cm-0", write{hash: "h", at: now, live: answer})
	newer := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: types.UID("uid-p2")}}
	got := map[string]bool{
		"the answer":            m.answered(parent, "cm-0", answer),
		"a copy of it":          m.answered(parent, "cm-0", answer.DeepCopy()),
		"another child":         m.answered(parent, "cm-1", answer),
		"a parent of that name": m.answered(newer, "cm-0", answer),
	}
	now = now.Add(cacheGrace)
	m.expire()
	got["the answer past the grace"] = m.answered(parent, "cm-0", answer)
	want := map[string]bool{
		"the answer": true, "a copy of it": false, "another child": false,
		"a parent of that name": false, "the answer past the grace": false,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answered (-want +got):\n%s", diff)
	}
}

// TestInsertRefKeepsPlanOrder checks that a child confirmRecalled adds to
// a Plan's list goes where the sorted list has it.
func TestInsertRefKeepsPlanOrder(t *testing.T) {
	refs := []Ref{{"ConfigMap", "ns", "a"}, {"ConfigMap", "ns", "c"}, {"Deployment", "ns", "a"}}
	got := insertRef(refs, Ref{"ConfigMap", "ns", "b"})
	got = insertRef(got, Ref{"Service", "ns", "a"})
	got = insertRef(got, Ref{"ConfigMap", "ms", "z"})
	want := []Ref{{"ConfigMap", "ms", "z"}, {"ConfigMap", "ns", "a"}, {"ConfigMap", "ns", "b"}, {"ConfigMap", "ns", "c"}, {"Deployment", "ns", "a"}, {"Service", "ns", "a"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("refs (-want +got):\n%s", diff)
	}
}
