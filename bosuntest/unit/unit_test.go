package unit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/unit"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

func scheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := testapi.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// publish is a step that keeps a ConfigMap with the Widget's value,
// reports it in condition Published, and deletes it on cleanup.
type publish struct{}

func (publish) Conditions() []string { return []string{"Published"} }

func (publish) Do(ctx context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	w := req.Object
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name}}
	err := req.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm)
	switch {
	case apierrors.IsNotFound(err):
		cm.Data = map[string]string{"value": fmt.Sprint(w.Spec.Value)}
		if err := req.Client.Create(ctx, cm); err != nil {
			return ctrl.Result{}, &conditions.Error{Type: "Published", Reason: "CreateFailed", Severity: conditions.SeverityWarning, Err: err}
		}
		req.Recorder.Eventf(w, nil, corev1.EventTypeNormal, "Published", "Publish", "made ConfigMap %s", cm.Name)
	case err != nil:
		return ctrl.Result{}, err
	}
	meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: "Published", Status: metav1.ConditionTrue, Reason: "Done", ObservedGeneration: w.Generation})
	return ctrl.Result{}, nil
}

func (publish) Cleanup(ctx context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: req.Object.Namespace, Name: req.Object.Name}}
	return ctrl.Result{}, client.IgnoreNotFound(req.Client.Delete(ctx, cm))
}

func widget() *testapi.Widget {
	return &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w"}, Spec: testapi.WidgetSpec{Value: 7}}
}

func TestTable(t *testing.T) {
	newReconciler := func() *bosun.Reconciler[*testapi.Widget] {
		return unit.Steps[*testapi.Widget](publish{})
	}
	unit.Run(t, scheme(t), newReconciler,
		unit.Case[*testapi.Widget]{
			Name:   "first pass claims, publishes and reports",
			Object: widget(),
			ExpectWrites: []string{
				"patch Widget ns/w", // the claim: the finalizer
				"create ConfigMap ns/w",
				"patch status Widget ns/w",
			},
			ExpectEvents: []string{"Normal " + string(conditions.ReasonClaimed) + " claimed by finalizer \"unit.bosun.dev/cleanup\"", "Normal Published made ConfigMap w"},
			ExpectConditions: []metav1.Condition{
				{Type: "Published", Status: metav1.ConditionTrue, Reason: "Done"},
				{Type: conditions.TypeReady, Status: metav1.ConditionTrue, Reason: string(conditions.ReasonSucceeded), ObservedGeneration: 1},
			},
			ExpectObjects: []client.Object{&corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w"},
				Data:       map[string]string{"value": "7"},
			}},
		},
		unit.Case[*testapi.Widget]{
			Name: "a pass that changes nothing writes nothing",
			Object: func() *testapi.Widget {
				w := widget()
				w.Finalizers = []string{unit.Finalizer}
				w.Status.Conditions = []metav1.Condition{
					{Type: "Published", Status: metav1.ConditionTrue, Reason: "Done", ObservedGeneration: 1, LastTransitionTime: metav1.Now()},
					{Type: conditions.TypeReady, Status: metav1.ConditionTrue, Reason: string(conditions.ReasonSucceeded), ObservedGeneration: 1, LastTransitionTime: metav1.Now()},
				}
				w.Status.ObservedGeneration = 1
				return w
			}(),
			Given:          []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w"}}},
			ExpectNoWrites: true,
			ExpectNoEvents: true,
		},
		unit.Case[*testapi.Widget]{
			Name:   "a create that fails is reported on the step's condition",
			Object: widget(),
			Interceptor: interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				return apierrors.NewForbidden(corev1.Resource("configmaps"), obj.GetName(), errors.New("quota"))
			}},
			ExpectErr: "quota",
			ExpectConditions: []metav1.Condition{
				{Type: "Published", Status: metav1.ConditionFalse, Reason: "CreateFailed"},
				{Type: conditions.TypeReady, Status: metav1.ConditionFalse, Reason: "CreateFailed"},
			},
			ExpectGone: []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w"}}},
		},
		unit.Case[*testapi.Widget]{
			Name:       "deleting cleans up and lets the object go",
			Object:     widget(),
			Deleting:   true,
			Given:      []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w"}}},
			ExpectGone: []client.Object{widget(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w"}}},
			Check: func(t bosuntest.TB, out *unit.Outcome[*testapi.Widget]) {
				if out.Object != nil {
					t.Errorf("Outcome.Object = %v, want nil for a gone object", out.Object)
				}
			},
		},
	)
}

// recorder is a TB that keeps what the checks report.
type recorder struct {
	bosuntest.TB
	errs []string
}

func (*recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...) }

// TestCheckReportsEachMismatch checks that every expectation can fail.
func TestCheckReportsEachMismatch(t *testing.T) {
	c := unit.Case[*testapi.Widget]{Name: "wrong", Object: widget()}
	out := unit.Reconcile(t, scheme(t), unit.Steps[*testapi.Widget](publish{}), c)
	c.ExpectErr = "boom"
	c.ExpectResult = ctrl.Result{RequeueAfter: time.Minute}
	c.ExpectConditions = []metav1.Condition{{Type: "Published", Status: metav1.ConditionFalse, Reason: "Done"}, {Type: "Other", Status: metav1.ConditionTrue}}
	c.ExpectWrites = []string{"create ConfigMap ns/w"}
	c.ExpectEvents = []string{"Warning Nope"}
	c.ExpectObjects = []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w"}, Data: map[string]string{"value": "8"}}}
	c.ExpectGone = []client.Object{widget()}
	rec := &recorder{TB: t}
	unit.Check(rec, c, out)
	all := strings.Join(rec.errs, "\n")
	for _, want := range []string{
		`error = <nil>, want one containing "boom"`,
		"result (-want +got)",
		"Published: True/Done",
		"Other: missing",
		"writes (-want +got)",
		"events (-want +got)",
		"data.value: 7, want 8",
		"Widget ns/w: still there",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("Check did not report %q; it reported:\n%s", want, all)
		}
	}
}

// TestExpectNoEvents checks that ExpectNoEvents reports an event the pass
// recorded.
func TestExpectNoEvents(t *testing.T) {
	noisy := bosun.NewStep("noisy", func(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
		req.Recorder.Eventf(req.Object, nil, corev1.EventTypeNormal, "Noise", "Reconcile", "hello")
		return ctrl.Result{}, nil
	})
	c := unit.Case[*testapi.Widget]{Name: "noisy", Object: widget(), ExpectNoEvents: true}
	out := unit.Reconcile(t, scheme(t), unit.Steps[*testapi.Widget](noisy), c)
	rec := &recorder{TB: t}
	unit.Check(rec, c, out)
	if all := strings.Join(rec.errs, "\n"); !strings.Contains(all, "events (-want +got)") || !strings.Contains(all, "Normal Noise hello") {
		t.Errorf("Check did not report the event; it reported:\n%s", all)
	}
}

// TestExpectConditionsReason: an expected condition without a reason
// matches whatever reason the pass gave; one with a reason must match it.
func TestExpectConditionsReason(t *testing.T) {
	c := unit.Case[*testapi.Widget]{Name: "published", Object: widget()}
	out := unit.Reconcile(t, scheme(t), unit.Steps[*testapi.Widget](publish{}), c)
	for _, tc := range []struct {
		name string
		want metav1.Condition
		errs []string // empty: no error
	}{
		{"no reason", metav1.Condition{Type: "Published", Status: metav1.ConditionTrue}, nil},
		{"the reason", metav1.Condition{Type: "Published", Status: metav1.ConditionTrue, Reason: "Done"}, nil},
		{"another reason", metav1.Condition{Type: "Published", Status: metav1.ConditionTrue, Reason: "Other"},
			[]string{`Published: True/Done "" (generation 1), want True/Other`}},
		{"another status, no reason", metav1.Condition{Type: "Published", Status: metav1.ConditionFalse},
			[]string{`Published: True/Done "" (generation 1), want False`}},
		{"missing, no reason", metav1.Condition{Type: "Other", Status: metav1.ConditionTrue},
			[]string{"Other: missing, want True"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.ExpectConditions = []metav1.Condition{tc.want}
			rec := &recorder{TB: t}
			unit.Check(rec, c, out)
			var got []string
			for _, e := range rec.errs {
				got = append(got, strings.TrimSpace(strings.TrimPrefix(e, "conditions:\n")))
			}
			if diff := cmp.Diff(tc.errs, got); diff != "" {
				t.Errorf("Check reported (-want +got):\n%s", diff)
			}
		})
	}
}
