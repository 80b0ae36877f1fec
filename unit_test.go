package bosun_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/internal/testapi"
)

func TestParsePolicy(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    bosun.Policy
		wantErr bool
	}{
		{in: "manage", want: bosun.PolicyManage},
		{in: "skip", want: bosun.PolicySkip},
		{in: "detach-on-delete", want: bosun.PolicyDetachOnDelete},
		{in: "", wantErr: true},
		{in: " Skip ", want: bosun.PolicySkip},
		{in: "Detach-On-Delete", want: bosun.PolicyDetachOnDelete},
		{in: "sometimes", wantErr: true},
	} {
		got, err := bosun.ParsePolicy(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParsePolicy(%q) error = %v, want error: %t", tc.in, err, tc.wantErr)
		}
		if err != nil {
			if !errors.Is(err, bosun.ErrUnknownPolicy) || !strings.Contains(err.Error(), `"`+tc.in+`"`) {
				t.Errorf("ParsePolicy(%q) error = %v, want ErrUnknownPolicy naming the value", tc.in, err)
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParsePolicy(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestValues(t *testing.T) {
	count := bosun.NewKey[int]("count")
	other := bosun.NewKey[int]("count")
	name := bosun.NewKey[string]("name")
	var v bosun.Values
	if _, ok := count.Get(&v); ok {
		t.Error("Get on empty Values found a value")
	}
	count.Set(&v, 3)
	name.Set(&v, "x")
	type got struct {
		Count      int
		CountOK    bool
		Other      int
		OtherOK    bool
		Name       string
		NilValueOK bool
	}
	g := got{}
	g.Count, g.CountOK = count.Get(&v)
	g.Other, g.OtherOK = other.Get(&v)
	g.Name, _ = name.Get(&v)
	_, g.NilValueOK = count.Get(nil)
	want := got{Count: 3, CountOK: true, Name: "x"}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	if count.Name() != "count" {
		t.Errorf("Name() = %q, want count", count.Name())
	}
}

// TestValuesGetOrSet: of goroutines that ask for the same key at once, one
// makes the value and all get it; a key already set is not made again.
func TestValuesGetOrSet(t *testing.T) {
	key := bosun.NewKey[*int]("shared")
	var v bosun.Values
	var made atomic.Int32
	got := make([]*int, 16)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			got[i] = key.GetOrSet(&v, func() *int {
				made.Add(1)
				n := i
				return &n
			})
		})
	}
	wg.Wait()
	if n := made.Load(); n != 1 {
		t.Errorf("GetOrSet made the value %d times, want 1", n)
	}
	for i, p := range got {
		if p != got[0] {
			t.Errorf("goroutine %d got %p, goroutine 0 got %p: want one value", i, p, got[0])
		}
	}
	other := bosun.NewKey[string]("other")
	other.Set(&v, "set")
	if s := other.GetOrSet(&v, func() string { return "made" }); s != "set" {
		t.Errorf("GetOrSet on a set key = %q, want the stored %q", s, "set")
	}

	// What makes a value may use the other keys, and a value being made is
	// not there yet for Get.
	outer := bosun.NewKey[string]("outer")
	got0 := outer.GetOrSet(&v, func() string {
		if _, ok := outer.Get(&v); ok {
			t.Error("Get found the value GetOrSet is still making")
		}
		s, _ := other.Get(&v)
		bosun.NewKey[int]("inner").Set(&v, 1)
		return "with " + s
	})
	if s, ok := outer.Get(&v); got0 != "with set" || s != got0 || !ok {
		t.Errorf("GetOrSet = %q, then Get = %q, %v; want %q and found", got0, s, ok, "with set")
	}
}

// TestValuesGetOrSetAfterAPanic: a maker that panics stores nothing; a
// goroutine that waited for it, and the next call, make the value with
// their own maker, instead of getting V's zero value (a step after a
// panicking one would fail on a nil value it never made).
func TestValuesGetOrSetAfterAPanic(t *testing.T) {
	key := bosun.NewKey[*int]("shared")
	var v bosun.Values
	making, release := make(chan struct{}), make(chan struct{})
	panicked := make(chan any, 1)
	go func() {
		defer func() { panicked <- recover() }()
		key.GetOrSet(&v, func() *int {
			close(making)
			<-release
			panic("no value")
		})
	}()
	<-making
	waited := make(chan *int, 1)
	go func() { waited <- key.GetOrSet(&v, func() *int { n := 2; return &n }) }()
	close(release)
	if p := <-panicked; p != "no value" {
		t.Fatalf("the maker's caller recovered %v, want its panic", p)
	}
	if got := <-waited; got == nil || *got != 2 {
		t.Errorf("the waiting GetOrSet = %v, want the value it made itself", got)
	}
	if got, ok := key.Get(&v); !ok || *got != 2 {
		t.Errorf("Get after = %v, %v, want the value made after the panic", got, ok)
	}
}

// cleaner is a step that cleans up, named by its type.
type cleaner struct{}

func (cleaner) Do(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}

func (cleaner) Cleanup(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}

// owner is a step that owns a condition type.
type owner struct{ cond string }

func (owner) Do(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}
func (o owner) Conditions() []string { return []string{o.cond} }
func (o owner) Name() string         { return "owner-" + o.cond }

func TestStepName(t *testing.T) {
	for _, tc := range []struct {
		step bosun.Step[*testapi.Widget]
		want string
	}{
		{step: cleaner{}, want: "cleaner"},
		{step: &cleaner{}, want: "cleaner"},
		{step: owner{cond: "A"}, want: "owner-A"},
		{step: bosun.Nop[*testapi.Widget]{}, want: "Nop"},
		{step: bosun.NewStep("hello", func(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
			return ctrl.Result{}, nil
		}), want: "hello"},
	} {
		if got := bosun.StepName(tc.step); got != tc.want {
			t.Errorf("StepName(%T) = %q, want %q", tc.step, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	c := fake.NewClientBuilder().Build()
	nop := bosun.Nop[*testapi.Widget]{}
	for _, tc := range []struct {
		name string
		r    *bosun.Reconciler[*testapi.Widget]
		want string // substring of the error; empty means valid
	}{
		{name: "valid", r: &bosun.Reconciler[*testapi.Widget]{Name: "w", Client: c, Steps: []bosun.Step[*testapi.Widget]{nop}}},
		{name: "valid with cleanup", r: &bosun.Reconciler[*testapi.Widget]{Name: "w", Client: c, Finalizer: testFinalizer, Steps: []bosun.Step[*testapi.Widget]{cleaner{}}}},
		{name: "no name", r: &bosun.Reconciler[*testapi.Widget]{Client: c, Steps: []bosun.Step[*testapi.Widget]{nop}}, want: "Name is empty"},
		{name: "no client", r: &bosun.Reconciler[*testapi.Widget]{Name: "w", Steps: []bosun.Step[*testapi.Widget]{nop}}, want: "Client is nil"},
		{name: "no steps", r: &bosun.Reconciler[*testapi.Widget]{Name: "w", Client: c}, want: "no Steps"},
		{name: "nil step", r: &bosun.Reconciler[*testapi.Widget]{Name: "w", Client: c, Steps: []bosun.Step[*testapi.Widget]{nop, nil}}, want: "step 1 is nil"},
		{name: "nil pointer step", r: &bosun.Reconciler[*testapi.Widget]{Name: "w", Client: c, Steps: []bosun.Step[*testapi.Widget]{(*cleaner)(nil)}}, want: "step 0 is nil"},
		{name: "duplicate names", r: &bosun.Reconciler[*testapi.Widget]{Name: "w", Client: c, Steps: []bosun.Step[*testapi.Widget]{nop, nop}}, want: `steps 0 and 1 are both named "Nop"`},
		{name: "missing finalizer", r: &bosun.Reconciler[*testapi.Widget]{Name: "w", Client: c, Steps: []bosun.Step[*testapi.Widget]{cleaner{}}}, want: `Finalizer is empty but step "cleaner" cleans up`},
		{name: "unqualified finalizer", r: &bosun.Reconciler[*testapi.Widget]{Name: "w", Client: c, Finalizer: "cleanup", Steps: []bosun.Step[*testapi.Widget]{cleaner{}}}, want: `Finalizer "cleanup" (needed by step "cleaner")`},
		{name: "finalizer without domain", r: &bosun.Reconciler[*testapi.Widget]{Name: "w", Client: c, Finalizer: "local/cleanup", Steps: []bosun.Step[*testapi.Widget]{cleaner{}}}, want: "domain-qualified"},
		{name: "bad default policy", r: &bosun.Reconciler[*testapi.Widget]{Name: "w", Client: c, DefaultPolicy: "never", Steps: []bosun.Step[*testapi.Widget]{nop}}, want: `DefaultPolicy: unknown reconcile policy "never"`},
		{name: "bad instance", r: &bosun.Reconciler[*testapi.Widget]{Name: "w", Client: c, Instance: "a b", Steps: []bosun.Step[*testapi.Widget]{nop}}, want: `Instance "a b"`},
		{name: "duplicate condition", r: &bosun.Reconciler[*testapi.Widget]{Name: "w", Client: c, Steps: []bosun.Step[*testapi.Widget]{owner{"A"}, owner{"Ready"}}}, want: `step "owner-Ready" owns condition "Ready"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.r.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !errors.Is(err, bosun.ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want ErrInvalidConfig containing %q", err, tc.want)
			}
		})
	}
}

// cmOwner is a step on ConfigMaps that owns a condition type.
type cmOwner struct{ bosun.Nop[*corev1.ConfigMap] }

func (cmOwner) Conditions() []string { return []string{"Synced"} }

// TestValidateWithoutConditions: a type without conditions, such as a
// built-in kind, is fine until a step wants to own a condition on it.
func TestValidateWithoutConditions(t *testing.T) {
	ok := &bosun.Reconciler[*corev1.ConfigMap]{
		Name:   "cm",
		Client: fake.NewClientBuilder().Build(),
		Steps:  []bosun.Step[*corev1.ConfigMap]{bosun.Nop[*corev1.ConfigMap]{}},
	}
	if err := ok.Validate(); err != nil {
		t.Fatalf("Validate() = %v, want nil for a ConfigMap reconciler", err)
	}
	owning := &bosun.Reconciler[*corev1.ConfigMap]{
		Name:   "cm",
		Client: fake.NewClientBuilder().Build(),
		Steps:  []bosun.Step[*corev1.ConfigMap]{cmOwner{}},
	}
	err := owning.Validate()
	if !errors.Is(err, bosun.ErrInvalidConfig) || !strings.Contains(err.Error(), "GetConditions") {
		t.Fatalf("Validate() = %v, want an error about conditions", err)
	}
	// Reconcile refuses to run, as a terminal error.
	if _, err := owning.Reconcile(context.Background(), ctrl.Request{}); !errors.Is(err, bosun.ErrInvalidConfig) {
		t.Fatalf("Reconcile() = %v, want ErrInvalidConfig", err)
	}
}

var _ client.Object = &testapi.Widget{}
