package simple

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	simplev1 "github.com/bosunkit/bosun/examples/simple/api/v1alpha1"
	"github.com/bosunkit/bosun/flow"
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

// TestSteps runs the steps the way the engine's default workflow does
// (flow.Sequential of every Do) and checks what they leave in the status.
func TestSteps(t *testing.T) {
	stale := simplev1.SimpleStatus{Quotient: ptr(99), Remainder: ptr(98)}
	tests := []struct {
		name    string
		spec    simplev1.SimpleSpec
		status  simplev1.SimpleStatus
		want    simplev1.SimpleStatus
		wantErr string
		// terminal: the error is terminal with reason ReasonOverflow.
		terminal bool
	}{
		{
			name: "divides",
			spec: simplev1.SimpleSpec{Dividend: 17, Divisor: 5},
			want: simplev1.SimpleStatus{Quotient: ptr(3), Remainder: ptr(2), Conditions: []metav1.Condition{
				{Type: "DivisorValid", Status: metav1.ConditionTrue, Reason: "NonZeroDivisor", ObservedGeneration: 4},
			}},
		},
		{
			name:   "zero results are written",
			spec:   simplev1.SimpleSpec{Dividend: 0, Divisor: 5},
			status: stale,
			want: simplev1.SimpleStatus{Quotient: ptr(0), Remainder: ptr(0), Conditions: []metav1.Condition{
				{Type: "DivisorValid", Status: metav1.ConditionTrue, Reason: "NonZeroDivisor", ObservedGeneration: 4},
			}},
		},
		{
			name:   "zero divisor clears the results and stops",
			spec:   simplev1.SimpleSpec{Dividend: 7, Divisor: 0},
			status: stale,
			want: simplev1.SimpleStatus{Conditions: []metav1.Condition{
				{Type: "DivisorValid", Status: metav1.ConditionFalse, Reason: "ZeroDivisor", Message: "spec.divisor is zero; set it to another number", ObservedGeneration: 4},
			}},
		},
		{
			name:   "overflow is terminal",
			spec:   simplev1.SimpleSpec{Dividend: math.MinInt64, Divisor: -1},
			status: stale,
			want: simplev1.SimpleStatus{Conditions: []metav1.Condition{
				{Type: "DivisorValid", Status: metav1.ConditionTrue, Reason: "NonZeroDivisor", ObservedGeneration: 4},
			}},
			wantErr:  "divide -9223372036854775808 by -1: quotient overflows int64",
			terminal: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &simplev1.Simple{ObjectMeta: metav1.ObjectMeta{Generation: 4}, Spec: tt.spec, Status: *tt.status.DeepCopy()}
			req := &bosun.Pass[*simplev1.Simple]{Object: obj, Values: &bosun.Values{}}
			var actions []flow.Action
			for _, s := range Steps() {
				actions = append(actions, flow.New(bosun.StepName(s), func(ctx context.Context) (ctrl.Result, error) {
					return s.Do(ctx, req)
				}))
			}
			res, err := flow.IgnoreExit(flow.Sequential(actions...).Run(t.Context()))
			if !res.IsZero() {
				t.Errorf("result = %+v, want zero", res)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("error = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
				t.Errorf("error = %v, want %q", err, tt.wantErr)
			}
			if tt.terminal {
				reason, severity, _ := conditions.FromError(err)
				if reason != ReasonOverflow || severity != conditions.SeverityError {
					t.Errorf("FromError = %s, %s; want %s, %s", reason, severity, ReasonOverflow, conditions.SeverityError)
				}
			}
			if diff := cmp.Diff(tt.want, obj.Status, cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
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
