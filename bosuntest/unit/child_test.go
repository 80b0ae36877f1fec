package unit_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest/unit"
	"github.com/bosunkit/bosun/children"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// owned returns Widget w in namespace ns with a UID, as stored.
func owned() *testapi.Widget {
	w := widget()
	w.UID = "0a1b"
	return w
}

func TestChildOf(t *testing.T) {
	owner := metav1.OwnerReference{
		APIVersion: testapi.GroupVersion.String(), Kind: "Widget", Name: "w", UID: "0a1b",
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}
	for _, tc := range []struct {
		name  string
		child *corev1.ConfigMap
		want  metav1.ObjectMeta
	}{
		{
			name:  "takes the parent's namespace",
			child: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}},
			want: metav1.ObjectMeta{Namespace: "ns", Name: "a", Labels: map[string]string{children.LabelSet: "parts", children.LabelOwner: "0a1b"},
				OwnerReferences: []metav1.OwnerReference{owner}},
		},
		{
			name: "keeps its labels, and has one owner",
			child: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", Labels: map[string]string{"app": "x", children.LabelSet: "old"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "9"}}}},
			want: metav1.ObjectMeta{Namespace: "ns", Name: "b", Labels: map[string]string{"app": "x", children.LabelSet: "parts", children.LabelOwner: "0a1b"},
				OwnerReferences: []metav1.OwnerReference{owner}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.child.DeepCopy()
			got := unit.ChildOf(t, scheme(t), owned(), "parts", tc.child)
			if diff := cmp.Diff(tc.want, got.ObjectMeta); diff != "" {
				t.Errorf("metadata (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.child); diff != "" {
				t.Errorf("ChildOf changed its argument (-before +after):\n%s", diff)
			}
		})
	}
}

// TestChildOfRefuses: what ChildOf cannot mark fails the test, saying why.
func TestChildOfRefuses(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	for _, tc := range []struct {
		name   string
		scheme *runtime.Scheme
		parent client.Object
		set    string
		want   string
	}{
		{"parent without a UID", scheme(t), widget(), "parts", "has no UID"},
		{"no set", scheme(t), owned(), "", "no set name"},
		{"no parent", scheme(t), (*testapi.Widget)(nil), "parts", "no parent"},
		{"parent of a kind the scheme lacks", runtime.NewScheme(), owned(), "parts", "the kind of the parent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &fatalRecorder{}
			func() {
				defer func() { _ = recover() }()
				unit.ChildOf(rec, tc.scheme, tc.parent, tc.set, cm)
			}()
			if !strings.Contains(rec.msg, tc.want) {
				t.Errorf("ChildOf failed with %q, want %q", rec.msg, tc.want)
			}
		})
	}
}

// fatalRecorder is a TB whose Fatalf keeps the first message and stops
// the call, as testing.T's does.
type fatalRecorder struct {
	recorder
	msg string
}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	if r.msg == "" {
		r.msg = fmt.Sprintf(format, args...)
	}
	panic("fatal")
}

// TestChildOfIsAMember: the children step takes a child ChildOf made for
// its own: it updates one that is still desired and prunes one that is
// not, where it would leave alone an object that is not the set's.
func TestChildOfIsAMember(t *testing.T) {
	desired := func(_ context.Context, p *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		return []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept"}, Data: map[string]string{"v": fmt.Sprint(p.Object.Spec.Value)}}}, nil
	}
	newReconciler := func() *bosun.Reconciler[*testapi.Widget] {
		return unit.Steps(children.NewStep[*testapi.Widget]("parts", desired, []children.Kind{children.Of(&corev1.ConfigMap{})}))
	}
	s := scheme(t)
	cm := func(name, v string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": v}}
	}
	unit.Run(t, s, newReconciler,
		unit.Case[*testapi.Widget]{
			Name:   "members are updated and pruned",
			Object: owned(),
			Given:  []client.Object{unit.ChildOf(t, s, owned(), "parts", cm("kept", "old")), unit.ChildOf(t, s, owned(), "parts", cm("gone", "old"))},
			ExpectConditions: []metav1.Condition{
				{Type: "ConfigMapReady", Status: metav1.ConditionTrue},
				{Type: conditions.TypeReady, Status: metav1.ConditionTrue},
			},
			ExpectObjects: []client.Object{unit.ChildOf(t, s, owned(), "parts", cm("kept", "7"))},
			ExpectGone:    []client.Object{cm("gone", "old")},
		},
		unit.Case[*testapi.Widget]{
			Name:      "an object that is not the set's is left alone",
			Object:    owned(),
			Given:     []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "kept"}, Data: map[string]string{"v": "old"}}},
			ExpectErr: "was not created by set",
			ExpectConditions: []metav1.Condition{
				{Type: "ConfigMapReady", Status: metav1.ConditionFalse, Reason: string(children.ReasonChildExists)},
				{Type: conditions.TypeReady, Status: metav1.ConditionFalse},
			},
			ExpectObjects: []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "kept"}, Data: map[string]string{"v": "old"}}},
		},
	)
}
