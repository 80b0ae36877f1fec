package managed

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	v1 "github.com/bosunkit/bosun/managed/internal/bucketapi"
)

// histogramSamples returns the sample count of each series of the
// histogram name in g, by "controller/step".
func histogramSamples(t *testing.T, g prometheus.Gatherer, name string) map[string]uint64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			l := labelsOf(m)
			out[l.controller+"/"+l.step] = m.GetHistogram().GetSampleCount()
		}
	}
	return out
}

// metricsRun is one reconciler of TestMetricsPerRegistry and its object.
type metricsRun struct {
	r   *bosun.Reconciler[*v1.Bucket]
	key client.ObjectKey
}

// newMetricsRun returns a reconciler called name, recording its metrics
// in reg, that runs step on the fake client for a Bucket of namespace name.
func newMetricsRun(t *testing.T, name string, reg prometheus.Registerer, step *Step[*v1.Bucket]) metricsRun {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	b := &v1.Bucket{
		ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "b", Generation: 1, CreationTimestamp: metav1.NewTime(time.Now().Add(-time.Second))},
		Spec:       v1.BucketSpec{Size: 1},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&v1.Bucket{}).WithObjects(b).Build()
	return metricsRun{
		r: &bosun.Reconciler[*v1.Bucket]{
			Name: name, Client: c, Finalizer: finalizer, Options: bosun.Options{IgnoreNamespacePolicy: true, Metrics: reg},
			Steps: []bosun.Step[*v1.Bucket]{step},
		},
		key: client.ObjectKeyFromObject(b),
	}
}

func ready(b *v1.Bucket) bool {
	c := conditions.Find(b.Status.Conditions, conditions.TypeReady)
	return c != nil && c.Status == metav1.ConditionTrue
}

// pass reconciles the run's object once and returns it, nil once gone.
func (m metricsRun) pass(t *testing.T) *v1.Bucket {
	t.Helper()
	if _, err := m.r.Reconcile(t.Context(), ctrl.Request{NamespacedName: m.key}); err != nil {
		t.Fatalf("%s: reconcile: %v", m.r.Name, err)
	}
	b := &v1.Bucket{}
	if err := m.r.Client.Get(t.Context(), m.key, b); apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	return b
}

// until reconciles the run's object until done holds, at most ten times.
func (m metricsRun) until(t *testing.T, what string, done func(*v1.Bucket) bool) {
	t.Helper()
	for range 10 {
		if done(m.pass(t)) {
			return
		}
	}
	t.Fatalf("%s: not %s after ten passes", m.r.Name, what)
}

// TestMetricsPerRegistry runs one managed step in two reconcilers on the
// fake client, alpha with one registry and beta with another, through
// create, drift and delete. Each registry holds the step's series under
// its own reconciler's name only, and controller-runtime's none of them.
func TestMetricsPerRegistry(t *testing.T) {
	cl := newCloud()
	step := NewStep[*v1.Bucket](cl)
	regs := map[string]*prometheus.Registry{"alpha": prometheus.NewRegistry(), "beta": prometheus.NewRegistry()}
	for _, name := range []string{"alpha", "beta"} {
		m := newMetricsRun(t, name, regs[name], step)
		m.until(t, "ready", ready)
		// Drift behind the operator's back, corrected by the next pass.
		cl.set(func(c *cloud) { c.buckets[m.key.Namespace+".b"].size = 7 })
		m.pass(t)
		if got, _ := cl.bucket(m.key.Namespace + ".b"); got.size != 1 {
			t.Fatalf("%s: cloud size %d after a pass, want 1", m.r.Name, got.size)
		}
		b := &v1.Bucket{}
		if err := m.r.Client.Get(t.Context(), m.key, b); err != nil {
			t.Fatal(err)
		}
		if err := m.r.Client.Delete(t.Context(), b); err != nil {
			t.Fatal(err)
		}
		m.until(t, "gone", func(b *v1.Bucket) bool { return b == nil })
	}

	for _, name := range []string{"alpha", "beta"} {
		t.Run(name, func(t *testing.T) {
			reg := regs[name]
			for _, metric := range []string{metricFirstReconcile, metricTimeToReady, metricDeletion} {
				if diff := cmp.Diff(map[string]uint64{name + "/managed": 1}, histogramSamples(t, reg, metric)); diff != "" {
					t.Errorf("%s samples (-want +got):\n%s", metric, diff)
				}
			}
			want := fmt.Sprintf(`# HELP %[1]s Updates of external resources that had drifted from an applied spec.
# TYPE %[1]s counter
%[1]s{controller=%[2]q,step="managed"} 1
`, metricDriftCorrections, name)
			if err := testutil.GatherAndCompare(reg, strings.NewReader(want), metricDriftCorrections); err != nil {
				t.Error(err)
			}
		})
	}
	for _, metric := range []string{metricFirstReconcile, metricTimeToReady, metricDeletion} {
		for key := range histogramSamples(t, metrics.Registry, metric) {
			if strings.HasPrefix(key, "alpha/") || strings.HasPrefix(key, "beta/") {
				t.Errorf("controller-runtime's registry holds %s %s", metric, key)
			}
		}
	}
}

// TestMetricsRegistryConflict: when the reconciler's registry holds other
// metrics under the step's names, the step still works, logs why, and
// records nothing there.
func TestMetricsRegistryConflict(t *testing.T) {
	reg := prometheus.NewRegistry()
	taken := prometheus.NewCounter(prometheus.CounterOpts{Name: metricFirstReconcile, Help: "not the step's"})
	reg.MustRegister(taken)
	m := newMetricsRun(t, "conflict", reg, NewStep[*v1.Bucket](newCloud()))
	m.until(t, "ready", ready)
	if n, err := testutil.GatherAndCount(reg, metricFirstReconcile); err != nil || n != 1 {
		t.Errorf("%s: %d series (%v), want only the one registered before", metricFirstReconcile, n, err)
	}
	if got := testutil.ToFloat64(taken); got != 0 {
		t.Errorf("the registry's own counter = %v, want 0", got)
	}
}
