package bosun_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

type widgetStep = bosun.Step[*testapi.Widget]

// TestCompositesAreSteps checks that the steps inside composites, at any
// depth, are the reconciler's own: their Do runs as the composite says,
// their Post and Cleanup run in tree order (Cleanup reversed), conditions
// given with WithConditions are owned, and each gets its metrics.
func TestCompositesAreSteps(t *testing.T) {
	tr := &trace{}
	a := &traced{name: "a", tr: tr}
	b := &traced{name: "b", tr: tr, do: func() (ctrl.Result, error) { return ctrl.Result{}, errors.New("b failed") }}
	c := &traced{name: "c", tr: tr}
	d := &traced{name: "d", tr: tr}
	skip := func(*bosun.Pass[*testapi.Widget]) bool { return false }
	steps := []widgetStep{
		bosun.Join(a, bosun.WithConditions[*testapi.Widget](b, "BReady")).Named("ab"),
		bosun.If(skip, widgetStep(c)),
		bosun.Timeout(time.Minute, widgetStep(d)),
	}
	cl := fakeClient(t, nil, fakeWidget("w", nil, false, nil))
	r := &bosun.Reconciler[*testapi.Widget]{Name: "composites", Client: cl, Finalizer: testFinalizer, Steps: steps}
	_, w, err := reconcileWidget(t, r, cl, "w")
	if err == nil || !strings.Contains(err.Error(), "b failed") {
		t.Fatalf("error = %v, want b's", err)
	}
	// The Join runs b after a, and stops the Sequence of the top level;
	// the If skips c. Post runs on every step of the tree.
	want := []string{"a.do", "b.do", "a.post", "b.post", "c.post", "d.post"}
	if diff := cmp.Diff(want, tr.get()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if got := conditions.Find(w.Status.Conditions, "BReady"); got == nil || got.Status != metav1.ConditionUnknown {
		t.Errorf("condition BReady = %+v, want it added as Unknown", got)
	}

	tr.calls = nil
	now := metav1.Now()
	w.DeletionTimestamp = &now
	cl = fakeClient(t, nil, w)
	r = &bosun.Reconciler[*testapi.Widget]{Name: "composites-cleanup", Client: cl, Finalizer: testFinalizer, Steps: steps}
	if _, _, err := reconcileWidget(t, r, cl, "w"); err != nil {
		t.Fatal(err)
	}
	want = []string{"d.cleanup", "c.cleanup", "b.cleanup", "a.cleanup", "a.post", "b.post", "c.post", "d.post"}
	if diff := cmp.Diff(want, tr.get()); diff != "" {
		t.Errorf("calls when deleted (-want +got):\n%s", diff)
	}

	samples := stepSamples(t, "composites")
	for _, key := range []string{"ab/do", "a/do", "WithConditions(b)/do", "b/do", "c/post", "d/post"} {
		if samples[key] == 0 {
			t.Errorf("no duration samples for %s; have %v", key, samples)
		}
	}
	for _, key := range []string{"If(c)/do", "c/do", "d/do"} {
		if samples[key] != 0 {
			t.Errorf("%d duration samples for %s, after the Join failed", samples[key], key)
		}
	}
}

// stepSamples returns the number of duration samples of each step/phase of
// controller.
func stepSamples(t *testing.T, controller string) map[string]uint64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, fam := range families {
		if fam.GetName() != bosun.MetricStepDuration {
			continue
		}
		for _, m := range fam.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["controller"] == controller {
				out[labels["step"]+"/"+labels["phase"]] = m.GetHistogram().GetSampleCount()
			}
		}
	}
	return out
}

// TestCompositeRunsItsCombinator checks each combinator's Do through the
// engine: which steps run, and the outcome.
func TestCompositeRunsItsCombinator(t *testing.T) {
	fail := func() (ctrl.Result, error) { return ctrl.Result{}, errors.New("failed") }
	requeue := func() (ctrl.Result, error) { return ctrl.Result{RequeueAfter: time.Minute}, nil }
	stop := func() (ctrl.Result, error) { return ctrl.Result{}, fmt.Errorf("not yet: %w", bosun.ErrStop) }
	errBoom := errors.New("boom")
	for _, tc := range []struct {
		name     string
		steps    func(tr *trace) []widgetStep
		wantDo   []string
		wantRes  ctrl.Result
		wantErr  string
		wantIs   error // errors.Is finds it in the error, when set
		anyOrder bool  // the Do calls may come in any order
	}{
		{
			name: "sequence stops at the first that interrupts",
			steps: func(tr *trace) []widgetStep {
				return []widgetStep{bosun.Sequence[*testapi.Widget](&traced{name: "a", tr: tr, do: requeue}, &traced{name: "b", tr: tr})}
			},
			wantDo:  []string{"a.do"},
			wantRes: ctrl.Result{RequeueAfter: time.Minute},
		},
		{
			name: "join runs all and joins the outcomes",
			steps: func(tr *trace) []widgetStep {
				return []widgetStep{bosun.Join[*testapi.Widget](&traced{name: "a", tr: tr, do: requeue}, &traced{name: "b", tr: tr, do: fail})}
			},
			wantDo:  []string{"a.do", "b.do"},
			wantErr: "failed",
		},
		{
			name: "if runs the step when the predicate holds",
			steps: func(tr *trace) []widgetStep {
				return []widgetStep{bosun.If(func(req *bosun.Pass[*testapi.Widget]) bool { return req.Object.Spec.Value == 6 },
					widgetStep(&traced{name: "a", tr: tr}))}
			},
			wantDo: []string{"a.do"},
		},
		{
			name: "if skips the step when the predicate fails, and the next runs",
			steps: func(tr *trace) []widgetStep {
				return []widgetStep{bosun.If(func(req *bosun.Pass[*testapi.Widget]) bool { return req.Object.Spec.Value != 6 },
					widgetStep(&traced{name: "a", tr: tr})), &traced{name: "b", tr: tr}}
			},
			wantDo: []string{"b.do"},
		},
		{
			name: "retry tries again",
			steps: func(tr *trace) []widgetStep {
				return []widgetStep{bosun.Retry(3, 0, widgetStep(&traced{name: "a", tr: tr, do: fail}))}
			},
			wantDo:  []string{"a.do", "a.do", "a.do"},
			wantErr: "failed",
		},
		{
			name: "timeout ends a step that overruns",
			steps: func(tr *trace) []widgetStep {
				return []widgetStep{bosun.Timeout(time.Millisecond, widgetStep(bosun.NewStep("slow", func(ctx context.Context, _ *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
					tr.add("slow.do")
					<-ctx.Done()
					return ctrl.Result{}, ctx.Err()
				})))}
			},
			wantDo:  []string{"slow.do"},
			wantErr: `step "slow" timed out after 1ms: context deadline exceeded`,
			wantIs:  context.DeadlineExceeded,
		},
		{
			name: "timeout keeps a step's own error",
			steps: func(tr *trace) []widgetStep {
				return []widgetStep{bosun.Timeout(time.Millisecond, widgetStep(bosun.NewStep("slow", func(ctx context.Context, _ *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
					tr.add("slow.do")
					<-ctx.Done()
					return ctrl.Result{}, errBoom
				})))}
			},
			wantDo:  []string{"slow.do"},
			wantErr: `step "slow" timed out after 1ms: context deadline exceeded: boom`,
			wantIs:  errBoom,
		},
		{
			name: "timeout leaves a step in time alone",
			steps: func(tr *trace) []widgetStep {
				return []widgetStep{bosun.Timeout(time.Hour, widgetStep(&traced{name: "a", tr: tr, do: requeue}))}
			},
			wantDo:  []string{"a.do"},
			wantRes: ctrl.Result{RequeueAfter: time.Minute},
		},
		{
			name: "sequence stops quietly at ErrStop",
			steps: func(tr *trace) []widgetStep {
				return []widgetStep{bosun.Sequence[*testapi.Widget](&traced{name: "a", tr: tr, do: stop}, &traced{name: "b", tr: tr}), &traced{name: "c", tr: tr}}
			},
			wantDo: []string{"a.do"},
		},
		{
			name: "join runs all past ErrStop, then the pass stops",
			steps: func(tr *trace) []widgetStep {
				return []widgetStep{bosun.Join[*testapi.Widget](&traced{name: "a", tr: tr, do: stop}, &traced{name: "b", tr: tr, do: requeue}), &traced{name: "c", tr: tr}}
			},
			wantDo:  []string{"a.do", "b.do"},
			wantRes: ctrl.Result{RequeueAfter: time.Minute},
		},
		{
			name: "join: a failure wins over ErrStop",
			steps: func(tr *trace) []widgetStep {
				return []widgetStep{bosun.OrderedJoin[*testapi.Widget](&traced{name: "a", tr: tr, do: stop}, &traced{name: "b", tr: tr, do: fail})}
			},
			wantDo:  []string{"a.do", "b.do"},
			wantErr: "failed",
		},
		{
			name: "parallel join runs all and joins the outcomes",
			steps: func(tr *trace) []widgetStep {
				return []widgetStep{bosun.ParallelJoin[*testapi.Widget](&traced{name: "a", tr: tr, do: fail}, &traced{name: "b", tr: tr, do: fail})}
			},
			wantDo:   []string{"a.do", "b.do"},
			wantErr:  "failed\nfailed",
			anyOrder: true,
		},
		{
			name: "retry does not try ErrStop again",
			steps: func(tr *trace) []widgetStep {
				return []widgetStep{bosun.Retry(3, 0, widgetStep(&traced{name: "a", tr: tr, do: stop}))}
			},
			wantDo: []string{"a.do"},
		},
		{
			name: "retry stops once it succeeds",
			steps: func(tr *trace) []widgetStep {
				n := 0
				return []widgetStep{bosun.Retry(3, time.Millisecond, widgetStep(&traced{name: "a", tr: tr, do: func() (ctrl.Result, error) {
					if n++; n < 2 {
						return fail()
					}
					return requeue()
				}}))}
			},
			wantDo:  []string{"a.do", "a.do"},
			wantRes: ctrl.Result{RequeueAfter: time.Minute},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &trace{}
			cl := fakeClient(t, nil, fakeWidget("w", nil, false, nil))
			r := &bosun.Reconciler[*testapi.Widget]{Name: "combinators", Client: cl, Finalizer: testFinalizer, Steps: tc.steps(tr)}
			res, _, err := reconcileWidget(t, r, cl, "w")
			var do []string
			for _, c := range tr.get() {
				if strings.HasSuffix(c, ".do") {
					do = append(do, c)
				}
			}
			if tc.anyOrder {
				slices.Sort(do)
			}
			if diff := cmp.Diff(tc.wantDo, do); diff != "" {
				t.Errorf("Do calls (-want +got):\n%s", diff)
			}
			if tc.wantErr == "" {
				if err != nil || res != tc.wantRes {
					t.Errorf("outcome = %+v, %v; want %+v, nil", res, err, tc.wantRes)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error = %v, want one containing %q", err, tc.wantErr)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("error = %v, want one that holds %v", err, tc.wantIs)
			}
		})
	}
}

// TestCompositeConfigErrors checks that mistakes inside composites are
// refused by Validate, naming the step.
func TestCompositeConfigErrors(t *testing.T) {
	step := func(name string) widgetStep { return bosun.NewStep[*testapi.Widget](name, nil) }
	for _, tc := range []struct {
		name  string
		steps []widgetStep
		want  string
	}{
		{"nested name taken", []widgetStep{step("a"), bosun.Join(step("b"), step("a"))}, `both named "a"`},
		{"nil inside", []widgetStep{bosun.Join(step("a"), nil)}, "step 0.1 is nil"},
		{"timeout of zero", []widgetStep{bosun.Timeout(0, step("a"))}, `step "Timeout(a)": Timeout: the duration must be positive`},
		{"retry of zero", []widgetStep{bosun.Retry(0, time.Second, step("a"))}, "the limit must be positive"},
		{"no predicate", []widgetStep{bosun.If(nil, step("a"))}, "the predicate is nil"},
		{"condition twice", []widgetStep{bosun.WithConditions(step("a"), "X"), bosun.WithConditions(step("b"), "X")}, `owns condition "X", which is the engine's or another step's`},
		{"empty group", []widgetStep{bosun.Sequence(widgetStep(bosun.Join[*testapi.Widget]()))}, ""},
		{"a composite in itself", []widgetStep{loop{}}, "steps nest more than 64 deep at 0.0.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &bosun.Reconciler[*testapi.Widget]{Name: "config", Client: fakeClient(t, nil), Steps: tc.steps}
			err := r.Validate()
			if tc.want == "" {
				if err != nil {
					t.Errorf("Validate = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, bosun.ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate = %v, want ErrInvalidConfig containing %q", err, tc.want)
			}
		})
	}
}

// loop is a composite that contains itself.
type loop struct{ bosun.Nop[*testapi.Widget] }

func (loop) Name() string          { return "loop" }
func (l loop) Steps() []widgetStep { return []widgetStep{l} }

// firstFailure is a composite of a user's making: its Do runs its steps
// with Pass.Run, in order, until one fails, and ignores requeues.
type firstFailure struct{ steps []widgetStep }

func (firstFailure) Name() string          { return "firstFailure" }
func (f firstFailure) Steps() []widgetStep { return f.steps }

func (f firstFailure) Do(ctx context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	for _, s := range f.steps {
		if _, err := req.Run(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// TestPassRunInComposite checks that the steps a user's composite runs
// with Pass.Run are the engine's: a panic in one is recovered into a
// *conditions.PanicError that names it, Ready says Panic, and each step
// run gets its metrics.
func TestPassRunInComposite(t *testing.T) {
	tr := &trace{}
	steps := []widgetStep{firstFailure{steps: []widgetStep{
		&traced{name: "a", tr: tr, do: func() (ctrl.Result, error) { return ctrl.Result{RequeueAfter: time.Minute}, nil }},
		&traced{name: "b", tr: tr, do: func() (ctrl.Result, error) { panic("b broke") }},
		&traced{name: "c", tr: tr},
	}}}
	cl := fakeClient(t, nil, fakeWidget("w", nil, false, nil))
	r := &bosun.Reconciler[*testapi.Widget]{Name: "user-composite", Client: cl, Finalizer: testFinalizer, Steps: steps}
	_, w, err := reconcileWidget(t, r, cl, "w")
	var pe *conditions.PanicError
	if !errors.As(err, &pe) || pe.Step != "b" || pe.Value != "b broke" || len(pe.Stack) == 0 {
		t.Fatalf("error = %v, want a *conditions.PanicError of step b with its stack", err)
	}
	if diff := cmp.Diff([]string{"a.do", "b.do", "a.post", "b.post", "c.post"}, tr.get()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if got, want := readyOf(w), "False/Panic: panic in b: b broke"; got != want {
		t.Errorf("Ready = %q, want %q", got, want)
	}
	samples := stepSamples(t, "user-composite")
	for key, want := range map[string]uint64{"firstFailure/do": 1, "a/do": 1, "b/do": 1, "c/do": 0} {
		if samples[key] != want {
			t.Errorf("%d duration samples for %s, want %d; have %v", samples[key], key, want, samples)
		}
	}
}

// condStep owns one condition and sets it True in Do through
// Pass.UpdateConditions.
type condStep struct{ cond string }

func (s condStep) Name() string         { return "set" + s.cond }
func (s condStep) Conditions() []string { return []string{s.cond} }

func (s condStep) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	req.UpdateConditions(func(conds *[]metav1.Condition) {
		conditions.Set(conds, metav1.Condition{Type: s.cond, Status: metav1.ConditionTrue, Reason: "Done"}, metav1.Now())
	})
	return ctrl.Result{}, nil
}

// TestParallelStepsSetTheirOwnConditions: steps of a ParallelJoin that
// each own a condition set it through Pass.UpdateConditions, and none is
// lost to another step's write of the list (run with -race too).
func TestParallelStepsSetTheirOwnConditions(t *testing.T) {
	var steps []widgetStep
	for i := range 8 {
		steps = append(steps, condStep{cond: fmt.Sprintf("Part%dReady", i)})
	}
	cl := fakeClient(t, nil)
	r := &bosun.Reconciler[*testapi.Widget]{Name: "parallel-conds", Client: cl, Finalizer: testFinalizer, Steps: []widgetStep{bosun.ParallelJoin(steps...)}}
	for n := range 30 {
		name := fmt.Sprintf("w%d", n)
		if err := cl.Create(context.Background(), fakeWidget(name, nil, false, nil)); err != nil {
			t.Fatal(err)
		}
		_, w, err := reconcileWidget(t, r, cl, name)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 8 {
			if c := conditions.Find(w.Status.Conditions, fmt.Sprintf("Part%dReady", i)); c == nil || c.Status != metav1.ConditionTrue {
				t.Errorf("%s: condition Part%dReady = %+v, want True; Ready %s", name, i, c, readyOf(w))
			}
		}
	}
}

// TestUpdateConditionsWithoutConditions: an object that keeps no
// conditions gets no call of change.
func TestUpdateConditionsWithoutConditions(t *testing.T) {
	req := &bosun.Pass[*corev1.ConfigMap]{Object: &corev1.ConfigMap{}}
	if req.UpdateConditions(func(*[]metav1.Condition) { t.Error("change called for a ConfigMap") }) {
		t.Error("UpdateConditions of a ConfigMap = true, want false")
	}
}
