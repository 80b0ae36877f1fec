package bosun_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/internal/testapi"
)

// samples returns, for each series of the histogram name in g that has
// samples, "controller/step/phase" and its sample count.
func samples(t *testing.T, g prometheus.Gatherer, name string) map[string]uint64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, fam := range families {
		if fam.GetName() != name {
			continue
		}
		for _, m := range fam.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if n := m.GetHistogram().GetSampleCount(); n > 0 {
				out[labels["controller"]+"/"+labels["step"]+"/"+labels["phase"]] = n
			}
		}
	}
	return out
}

// errorsText is the exposition of bosun_step_errors_total for the steps
// of series ("controller/step"), with the given number of errors in phase
// do and none in the other phases.
func errorsText(series map[string]int) string {
	var lines []string
	for cs, n := range series {
		controller, step, _ := strings.Cut(cs, "/")
		for _, ph := range []string{"do", "cleanup", "post", "observe", "claim"} {
			v := 0
			if ph == "do" {
				v = n
			}
			lines = append(lines, fmt.Sprintf("%s{controller=%q,phase=%q,step=%q} %d", bosun.MetricStepErrors, controller, ph, step, v))
		}
	}
	sort.Strings(lines)
	return "# HELP bosun_step_errors_total Errors returned by each phase of each bosun step.\n" +
		"# TYPE bosun_step_errors_total counter\n" + strings.Join(lines, "\n") + "\n"
}

// TestMetricsPerRegistry runs three reconcilers on the fake client: alpha
// with a registry of its own, beta and gamma sharing another. Each registry
// holds the series of its own reconcilers only, labelled with their names,
// and controller-runtime's registry none of them.
func TestMetricsPerRegistry(t *testing.T) {
	regA, regB := prometheus.NewRegistry(), prometheus.NewRegistry()
	ok := func(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) { return ctrl.Result{}, nil }
	bad := func(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
		return ctrl.Result{}, errors.New("failed")
	}
	// seen records which registry each pass hands its steps.
	seen := map[string]string{}
	names := map[prometheus.Registerer]string{regA: "A", regB: "B", metrics.Registry: "controller-runtime"}
	reconcilers := []*bosun.Reconciler[*testapi.Widget]{
		{Name: "alpha", Options: bosun.Options{Metrics: regA}, Steps: []widgetStep{bosun.NewStep("ok", ok)}},
		{Name: "beta", Options: bosun.Options{Metrics: regB}, Steps: []widgetStep{bosun.NewStep("ok", ok), bosun.NewStep("bad", bad)}},
		{Name: "gamma", Options: bosun.Options{Metrics: regB}, Steps: []widgetStep{bosun.NewStep("ok", ok)}},
	}
	for _, r := range reconcilers {
		r.Steps = append([]widgetStep{bosun.NewStep("registry", func(_ context.Context, p *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
			seen[p.Controller] = names[p.Metrics()]
			return ctrl.Result{}, nil
		})}, r.Steps...)
		r.Client = fakeClient(t, nil, fakeWidget("w", nil, false, nil))
		for range 2 {
			_, _, _ = reconcileWidget(t, r, r.Client, "w")
		}
	}
	if diff := cmp.Diff(map[string]string{"alpha": "A", "beta": "B", "gamma": "B"}, seen); diff != "" {
		t.Errorf("Pass.Metrics by controller (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		name string
		reg  prometheus.Gatherer
		// series is the number of series of each metric: 5 phases of each
		// step of each reconciler.
		series    int
		durations map[string]uint64
		errors    map[string]int
	}{
		{
			name:      "own registry",
			reg:       regA,
			series:    5 * 2,
			durations: map[string]uint64{"alpha/ok/do": 2, "alpha/registry/do": 2},
			errors:    map[string]int{"alpha/ok": 0, "alpha/registry": 0},
		},
		{
			name:   "shared registry",
			reg:    regB,
			series: 5 * (3 + 2),
			durations: map[string]uint64{
				"beta/registry/do": 2, "beta/ok/do": 2, "beta/bad/do": 2,
				"gamma/registry/do": 2, "gamma/ok/do": 2,
			},
			errors: map[string]int{"beta/ok": 0, "beta/bad": 2, "beta/registry": 0, "gamma/ok": 0, "gamma/registry": 0},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.durations, samples(t, tc.reg, bosun.MetricStepDuration)); diff != "" {
				t.Errorf("%s samples (-want +got):\n%s", bosun.MetricStepDuration, diff)
			}
			if err := testutil.GatherAndCompare(tc.reg, strings.NewReader(errorsText(tc.errors)), bosun.MetricStepErrors); err != nil {
				t.Error(err)
			}
			for _, name := range []string{bosun.MetricStepDuration, bosun.MetricStepErrors} {
				if n, err := testutil.GatherAndCount(tc.reg, name); err != nil || n != tc.series {
					t.Errorf("%s: %d series (%v), want %d", name, n, err, tc.series)
				}
			}
		})
	}

	// controller-runtime's registry, which other tests of the package
	// share, has none of their series.
	for key := range samples(t, metrics.Registry, bosun.MetricStepDuration) {
		if c, _, _ := strings.Cut(key, "/"); c == "alpha" || c == "beta" || c == "gamma" {
			t.Errorf("controller-runtime's registry holds %s", key)
		}
	}
}

// TestMetricsRegistryConflict: a registry that holds other metrics under
// the engine's names fails the reconciler's validation, naming the field.
func TestMetricsRegistryConflict(t *testing.T) {
	for _, tc := range []struct {
		name  string
		taken prometheus.Collector
	}{
		{"other labels", prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: bosun.MetricStepDuration, Help: "Duration of each phase of each bosun step, in seconds."}, []string{"controller"})},
		{"other help", prometheus.NewCounterVec(prometheus.CounterOpts{Name: bosun.MetricStepErrors, Help: "something else"}, []string{"controller", "step", "phase"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			reg.MustRegister(tc.taken)
			r := &bosun.Reconciler[*testapi.Widget]{
				Name: "conflict", Options: bosun.Options{Metrics: reg}, Client: fakeClient(t, nil),
				Steps: []widgetStep{bosun.NewStep[*testapi.Widget]("ok", nil)},
			}
			err := r.Validate()
			if !errors.Is(err, bosun.ErrInvalidConfig) || !strings.Contains(err.Error(), "Metrics") {
				t.Errorf("Validate() = %v, want an error wrapping ErrInvalidConfig that names Metrics", err)
			}
		})
	}
}

// TestMetricsSameRegistryTwice: reconcilers of one name, in one registry,
// share its collectors instead of panicking, and their series add up.
func TestMetricsSameRegistryTwice(t *testing.T) {
	reg := prometheus.NewRegistry()
	for range 2 {
		r := &bosun.Reconciler[*testapi.Widget]{
			Name: "twice", Options: bosun.Options{Metrics: reg}, Client: fakeClient(t, nil, fakeWidget("w", nil, false, nil)),
			Steps: []widgetStep{bosun.NewStep[*testapi.Widget]("ok", nil)},
		}
		if _, _, err := reconcileWidget(t, r, r.Client, "w"); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(map[string]uint64{"twice/ok/do": 2}, samples(t, reg, bosun.MetricStepDuration)); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
}
