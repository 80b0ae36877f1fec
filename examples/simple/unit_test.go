package simple

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/unit"
	"github.com/bosunkit/bosun/conditions"
	simplev1 "github.com/bosunkit/bosun/examples/simple/api/v1alpha1"
)

func TestDivide(t *testing.T) {
	tests := []struct {
		dividend, divisor int64
		wantQ, wantR      int64
		wantErr           error
	}{
		{dividend: 17, divisor: 5, wantQ: 3, wantR: 2},
		{dividend: -17, divisor: 5, wantQ: -3, wantR: -2},
		{dividend: 17, divisor: -5, wantQ: -3, wantR: 2},
		{dividend: 0, divisor: 9, wantQ: 0, wantR: 0},
		{dividend: 3, divisor: 10, wantQ: 0, wantR: 3},
		{dividend: math.MaxInt64, divisor: -1, wantQ: -math.MaxInt64, wantR: 0},
		{dividend: math.MinInt64, divisor: 1, wantQ: math.MinInt64, wantR: 0},
		{dividend: 7, divisor: 0, wantErr: ErrZeroDivisor},
		{dividend: math.MinInt64, divisor: -1, wantErr: ErrOverflow},
	}
	for _, tt := range tests {
		q, r, err := Divide(tt.dividend, tt.divisor)
		if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
			t.Errorf("Divide(%d, %d) error = %v, want %v", tt.dividend, tt.divisor, err, tt.wantErr)
		}
		if diff := cmp.Diff([2]int64{tt.wantQ, tt.wantR}, [2]int64{q, r}); diff != "" {
			t.Errorf("Divide(%d, %d) quotient, remainder (-want +got):\n%s", tt.dividend, tt.divisor, diff)
		}
	}
}

func ptr(v int64) *int64 { return &v }

// simple returns a Simple at generation 4 with spec and status.
func simple(spec simplev1.SimpleSpec, status simplev1.SimpleStatus) *simplev1.Simple {
	return &simplev1.Simple{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s", Generation: 4},
		Spec:       spec,
		Status:     *status.DeepCopy(),
	}
}

// checkStatus checks the results and the observed generation the Simple
// keeps after the pass (nil results: absent).
func checkStatus(t bosuntest.TB, out *unit.Outcome[*simplev1.Simple], quotient, remainder *int64, observed int64) {
	t.Helper()
	if out.Object == nil {
		t.Errorf("the Simple is gone")
		return
	}
	want := simplev1.SimpleStatus{Quotient: quotient, Remainder: remainder, ObservedGeneration: observed}
	got := out.Object.Status
	got.Conditions = nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}

// wantStatus is a Case.Check: checkStatus, and no event recorded.
func wantStatus(quotient, remainder *int64, observed int64) func(bosuntest.TB, *unit.Outcome[*simplev1.Simple]) {
	return func(t bosuntest.TB, out *unit.Outcome[*simplev1.Simple]) {
		t.Helper()
		checkStatus(t, out, quotient, remainder, observed)
		if len(out.Events) > 0 {
			t.Errorf("events = %q, want none", out.Events)
		}
	}
}

// TestReconcile runs the Simple reconciler, as the manager runs it, on one
// Simple in an in-memory client and checks what it leaves: the results, the
// conditions, the writes and the error.
func TestReconcile(t *testing.T) {
	stale := simplev1.SimpleStatus{Quotient: ptr(99), Remainder: ptr(98)}
	divisorValid := metav1.Condition{Type: simplev1.ConditionDivisorValid, Status: metav1.ConditionTrue, Reason: string(simplev1.ReasonNonZeroDivisor), ObservedGeneration: 4}
	ready := metav1.Condition{Type: conditions.TypeReady, Status: metav1.ConditionTrue, Reason: string(conditions.ReasonSucceeded), ObservedGeneration: 4}
	statusWrite := []string{"patch status Simple ns/s"}
	statusFails := func(err error) interceptor.Funcs {
		return interceptor.Funcs{SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
			return err
		}}
	}
	converged := simplev1.SimpleStatus{ObservedGeneration: 4, Quotient: ptr(3), Remainder: ptr(2), Conditions: []metav1.Condition{
		{Type: simplev1.ConditionDivisorValid, Status: metav1.ConditionTrue, Reason: string(simplev1.ReasonNonZeroDivisor), ObservedGeneration: 4, LastTransitionTime: metav1.Now()},
		{Type: conditions.TypeReady, Status: metav1.ConditionTrue, Reason: string(conditions.ReasonSucceeded), ObservedGeneration: 4, LastTransitionTime: metav1.Now()},
	}}
	unit.Run(t, unit.Scheme(t, AddToScheme), NewReconciler,
		unit.Case[*simplev1.Simple]{
			Name:             "divides",
			Object:           simple(simplev1.SimpleSpec{Dividend: 17, Divisor: 5}, simplev1.SimpleStatus{}),
			ExpectConditions: []metav1.Condition{divisorValid, ready},
			ExpectWrites:     statusWrite,
			Check:            wantStatus(ptr(3), ptr(2), 4),
		},
		unit.Case[*simplev1.Simple]{
			Name:             "zero results are written",
			Object:           simple(simplev1.SimpleSpec{Dividend: 0, Divisor: 5}, stale),
			ExpectConditions: []metav1.Condition{divisorValid, ready},
			ExpectWrites:     statusWrite,
			Check:            wantStatus(ptr(0), ptr(0), 4),
		},
		unit.Case[*simplev1.Simple]{
			Name:   "zero divisor clears the results and stops",
			Object: simple(simplev1.SimpleSpec{Dividend: 7, Divisor: 0}, stale),
			ExpectConditions: []metav1.Condition{
				{Type: simplev1.ConditionDivisorValid, Status: metav1.ConditionFalse, Reason: string(simplev1.ReasonZeroDivisor), Message: "spec.divisor is zero; set it to another number", ObservedGeneration: 4},
				{Type: conditions.TypeReady, Status: metav1.ConditionFalse, Reason: string(simplev1.ReasonZeroDivisor), Message: "spec.divisor is zero; set it to another number", ObservedGeneration: 4},
			},
			ExpectWrites: statusWrite,
			Check:        wantStatus(nil, nil, 4),
		},
		unit.Case[*simplev1.Simple]{
			Name:      "overflow is terminal",
			Object:    simple(simplev1.SimpleSpec{Dividend: math.MinInt64, Divisor: -1}, stale),
			ExpectErr: "divide -9223372036854775808 by -1: quotient overflows int64",
			ExpectConditions: []metav1.Condition{
				divisorValid,
				{Type: conditions.TypeReady, Status: metav1.ConditionFalse, Reason: string(ReasonOverflow), Message: "divide -9223372036854775808 by -1: quotient overflows int64", ObservedGeneration: 4},
			},
			ExpectWrites: statusWrite,
			ExpectEvents: []string{"Warning " + string(ReasonOverflow) + " divide -9223372036854775808 by -1: quotient overflows int64"},
			Check: func(t bosuntest.TB, out *unit.Outcome[*simplev1.Simple]) {
				checkStatus(t, out, nil, nil, 4)
				if !errors.Is(out.Err, reconcile.TerminalError(nil)) {
					t.Errorf("error %v is not terminal", out.Err)
				}
				if !errors.Is(out.Err, ErrOverflow) {
					t.Errorf("error %v does not wrap ErrOverflow", out.Err)
				}
				if reason, severity, _ := conditions.FromError(out.Err); reason != ReasonOverflow || severity != conditions.SeverityError {
					t.Errorf("FromError = %s, %s; want %s, %s", reason, severity, ReasonOverflow, conditions.SeverityError)
				}
			},
		},
		unit.Case[*simplev1.Simple]{
			Name:           "a converged Simple is not written",
			Object:         simple(simplev1.SimpleSpec{Dividend: 17, Divisor: 5}, converged),
			ExpectNoWrites: true,
			Check:          wantStatus(ptr(3), ptr(2), 4),
		},
		unit.Case[*simplev1.Simple]{
			Name:         "a status write that fails returns its error and changes nothing",
			Object:       simple(simplev1.SimpleSpec{Dividend: 17, Divisor: 5}, stale),
			Interceptor:  statusFails(apierrors.NewInternalError(errors.New("etcd is down"))),
			ExpectErr:    "writing status: Internal error occurred: etcd is down",
			ExpectWrites: statusWrite,
			Check:        wantStatus(ptr(99), ptr(98), 0),
		},
		unit.Case[*simplev1.Simple]{
			Name:         "a status write refused with a conflict is a quiet requeue",
			Object:       simple(simplev1.SimpleSpec{Dividend: 17, Divisor: 5}, stale),
			Interceptor:  statusFails(apierrors.NewConflict(simplev1.GroupVersion.WithResource("simples").GroupResource(), "s", errors.New("changed"))),
			ExpectResult: ctrl.Result{RequeueAfter: 100 * time.Millisecond},
			ExpectWrites: statusWrite,
			Check:        wantStatus(ptr(99), ptr(98), 0),
		},
	)
}

// TestReconcilerIsValid checks the configuration the way setup does.
func TestReconcilerIsValid(t *testing.T) {
	r := NewReconciler()
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	r.Client = fake.NewClientBuilder().WithScheme(s).Build()
	if err := r.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if r.Finalizer != "" {
		t.Errorf("Finalizer = %q, want none: no step cleans up", r.Finalizer)
	}
	for _, s := range r.Steps {
		if _, ok := s.(bosun.Cleaner[*simplev1.Simple]); ok {
			t.Errorf("step %s cleans up; the example has nothing to clean", bosun.StepName(s))
		}
	}
}

func TestAddToScheme(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatalf("AddToScheme: %v", err)
	}
	for _, tt := range []struct {
		obj  runtime.Object
		want schema.GroupVersionKind
	}{
		{&simplev1.Simple{}, simplev1.GroupVersion.WithKind("Simple")},
		{&simplev1.SimpleList{}, simplev1.GroupVersion.WithKind("SimpleList")},
	} {
		gvks, _, err := s.ObjectKinds(tt.obj)
		if err != nil {
			t.Errorf("ObjectKinds(%T): %v", tt.obj, err)
			continue
		}
		if diff := cmp.Diff([]schema.GroupVersionKind{tt.want}, gvks); diff != "" {
			t.Errorf("ObjectKinds(%T) (-want +got):\n%s", tt.obj, diff)
		}
	}
}

func TestCRDs(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatalf("CRDs: %v", err)
	}
	if len(crds) != 1 {
		t.Fatalf("CRDs returned %d definitions, want 1", len(crds))
	}
	c := crds[0]
	type summary struct {
		Name, Group, Kind string
		Scope             apiextensionsv1.ResourceScope
		Versions          []string
		Status            bool
		Fields            []string
	}
	got := summary{Name: c.Name, Group: c.Spec.Group, Kind: c.Spec.Names.Kind, Scope: c.Spec.Scope}
	for _, v := range c.Spec.Versions {
		got.Versions = append(got.Versions, v.Name)
		got.Status = v.Subresources != nil && v.Subresources.Status != nil
		props := v.Schema.OpenAPIV3Schema.Properties
		for _, part := range []string{"spec", "status"} {
			for name, p := range props[part].Properties {
				got.Fields = append(got.Fields, part+"."+name+":"+p.Type)
			}
		}
	}
	want := summary{
		Name:     "simples.simple.bosun.dev",
		Group:    simplev1.GroupVersion.Group,
		Kind:     "Simple",
		Scope:    apiextensionsv1.NamespaceScoped,
		Versions: []string{simplev1.GroupVersion.Version},
		Status:   true,
		Fields: []string{
			"spec.dividend:integer", "spec.divisor:integer",
			"status.conditions:array", "status.observedGeneration:integer", "status.quotient:integer", "status.remainder:integer",
		},
	}
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("CRD (-want +got):\n%s", diff)
	}
}

func TestSamples(t *testing.T) {
	names := map[string]bool{}
	for _, obj := range Samples("demo") {
		s, ok := obj.(*simplev1.Simple)
		if !ok {
			t.Fatalf("sample %T, want *v1alpha1.Simple", obj)
		}
		if s.Namespace != "demo" || names[s.Name] {
			t.Errorf("sample %s/%s: wrong namespace or name used twice", s.Namespace, s.Name)
		}
		names[s.Name] = true
		// The demo waits for every sample to be Ready.
		if _, _, err := Divide(s.Spec.Dividend, s.Spec.Divisor); err != nil {
			t.Errorf("sample %s would never be Ready: %v", s.Name, err)
		}
	}
	Samples("demo")[0].SetName("changed")
	if Samples("demo")[0].GetName() == "changed" {
		t.Error("Samples returned shared objects")
	}
}
