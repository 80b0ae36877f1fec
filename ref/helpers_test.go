package ref_test

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/ref"
)

// The annotations a test Widget refers to another object with.
const (
	annName      = "ref.test/name"
	annNamespace = "ref.test/namespace"
	annSelector  = "ref.test/selector"
	// annBadSelector holds a label key; the reference selects it with an
	// operator that does not exist.
	annBadSelector = "ref.test/bad-selector"
)

// refOf reads the reference of w from its annotations.
func refOf(w *testapi.Widget) ref.Reference {
	a := w.Annotations
	r := ref.Reference{Name: a[annName], Namespace: a[annNamespace]}
	if s, ok := a[annSelector]; ok {
		sel, err := metav1.ParseToLabelSelector(s)
		if err != nil {
			panic(err)
		}
		r.Selector = sel
	}
	if key, ok := a[annBadSelector]; ok {
		r.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: "Near"}}}
	}
	return r
}

// errNoOwner is the error of the use step when the owner step resolved
// nothing.
var errNoOwner = errors.New("no owner resolved")

// useOwner is a step after owner: it copies the resolved Widget's
// spec.value into status.result, or -1 when the reference is optional and
// names nothing.
func useOwner(owner *ref.Step[*testapi.Widget, *testapi.Widget], optional bool) bosun.Step[*testapi.Widget] {
	return bosun.NewStep("use", func(_ context.Context, p *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
		r, ok := owner.Resolved(p)
		switch {
		case ok:
			p.Object.Status.Result = r.Spec.Value
		case optional:
			p.Object.Status.Result = -1
		default:
			return ctrl.Result{}, errNoOwner
		}
		return ctrl.Result{}, nil
	})
}

// widget returns a Widget ns/name with annotations (key, value pairs).
func widget(ns, name string, kv ...string) *testapi.Widget {
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if len(kv) > 0 {
		w.Annotations = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			w.Annotations[kv[i]] = kv[i+1]
		}
	}
	return w
}

// target returns a Widget ns/name of value v, labelled, whose Ready
// condition has status st and describes generation observed; generation
// is gen.
func target(ns, name string, v int64, labels map[string]string, gen, observed int64, st metav1.ConditionStatus) *testapi.Widget {
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, Generation: gen}}
	w.Spec.Value = v
	w.Status.ObservedGeneration = observed
	if st != "" {
		reason := conditions.ReasonSucceeded
		if st != metav1.ConditionTrue {
			reason = "Broken"
		}
		w.Status.Conditions = []metav1.Condition{{
			Type: conditions.TypeReady, Status: st, Reason: string(reason), Message: "as the test says",
			ObservedGeneration: observed, LastTransitionTime: metav1.Now(),
		}}
	}
	return w
}

// ready returns a ready Widget ns/name of value v with labels.
func ready(ns, name string, v int64, labels map[string]string) *testapi.Widget {
	return target(ns, name, v, labels, 1, 1, metav1.ConditionTrue)
}
