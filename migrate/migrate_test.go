package migrate_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/migrate"
)

var shared bosuntest.Shared

func TestMain(m *testing.M) { shared.Main(m) }

const group = "migrate.test.bosun.dev"

// newCRD returns a namespaced CRD of kind with versions v1 (storage) and
// v2, both served, of the same schema and without conversion.
func newCRD(kind, plural string) *apiextensionsv1.CustomResourceDefinition {
	schemaProps := &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"value": {Type: "string"},
			}},
		},
	}
	version := func(name string, storage bool) apiextensionsv1.CustomResourceDefinitionVersion {
		return apiextensionsv1.CustomResourceDefinitionVersion{
			Name: name, Served: true, Storage: storage,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: schemaProps.DeepCopy()},
		}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Kind: kind, ListKind: kind + "List", Plural: plural, Singular: plural[:len(plural)-1],
			},
			Scope:      apiextensionsv1.NamespaceScoped,
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter},
			Versions:   []apiextensionsv1.CustomResourceDefinitionVersion{version("v1", true), version("v2", false)},
		},
	}
}

// fixture installs a CRD with n objects stored at v1, switches the storage
// version to v2, and returns the client, the CRD name and the objects'
// resourceVersions by name.
func fixture(t *testing.T, kind, plural string, n int) (client.Client, string, map[string]string) {
	t.Helper()
	cp := shared.ControlPlane(t)
	c := cp.Client
	crd := newCRD(kind, plural)
	if err := c.Create(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	waitServed(t, c, crd.Name, "v1")
	rvs := map[string]string{}
	for i := range n {
		obj := object(kind, "v1", fmt.Sprintf("obj-%03d", i))
		if err := c.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
		rvs[obj.GetName()] = obj.GetResourceVersion()
	}
	setStorage(t, c, crd.Name, "v2")
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if got := storedVersions(ctx, t, c, crd.Name); !slices.Equal(got, []string{"v1", "v2"}) {
			return fmt.Errorf("storedVersions = %v, want [v1 v2]", got)
		}
		return nil
	})
	return c, crd.Name, rvs
}

// setStorage makes version the storage version of the CRD called crd, as
// a release that moves it does.
func setStorage(t *testing.T, c client.Client, crd, version string) {
	t.Helper()
	cur := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(t.Context(), types.NamespacedName{Name: crd}, cur); err != nil {
		t.Fatal(err)
	}
	for i := range cur.Spec.Versions {
		cur.Spec.Versions[i].Storage = cur.Spec.Versions[i].Name == version
	}
	if err := c.Update(t.Context(), cur); err != nil {
		t.Fatal(err)
	}
}

func object(kind, version, name string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: version, Kind: kind})
	obj.SetNamespace("default")
	obj.SetName(name)
	obj.Object["spec"] = map[string]any{"value": "value of " + name}
	return obj
}

func waitServed(t *testing.T, c client.Client, crd, version string) {
	t.Helper()
	bosuntest.Eventually(t, func(ctx context.Context) error {
		cur := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, types.NamespacedName{Name: crd}, cur); err != nil {
			return err
		}
		for _, cond := range cur.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return errors.New("CRD not established")
	})
	// The CRD being established does not yet mean the API server's
	// discovery and handlers know the kind: wait until a list works.
	bosuntest.Eventually(t, func(ctx context.Context) error {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: version, Kind: "List"})
		cur := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, types.NamespacedName{Name: crd}, cur); err != nil {
			return err
		}
		list.SetKind(cur.Spec.Names.ListKind)
		return c.List(ctx, list, client.Limit(1))
	})
}

func storedVersions(ctx context.Context, t *testing.T, c client.Client, crd string) []string {
	t.Helper()
	cur := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, types.NamespacedName{Name: crd}, cur); err != nil {
		t.Fatal(err)
	}
	return cur.Status.StoredVersions
}

// objects returns the spec.value and resourceVersion of every object of
// kind, read at v2, by name.
func objects(t *testing.T, c client.Client, kind string) (values, rvs map[string]string) {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: "v2", Kind: kind + "List"})
	if err := c.List(t.Context(), list); err != nil {
		t.Fatal(err)
	}
	values, rvs = map[string]string{}, map[string]string{}
	for _, item := range list.Items {
		v, _, _ := unstructured.NestedString(item.Object, "spec", "value")
		values[item.GetName()] = v
		rvs[item.GetName()] = item.GetResourceVersion()
	}
	return values, rvs
}

// metricValue returns the value of the series of metric name labelled crd in
// the gatherer g (controller-runtime's metrics.Registry unless a test gave the
// Migrator its own registry).
func metricValue(t *testing.T, g prometheus.Gatherer, name, crd string) float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "crd" && l.GetValue() == crd {
					if m.GetCounter() != nil {
						return m.GetCounter().GetValue()
					}
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return 0
}

func TestMigrate(t *testing.T) {
	const n = 250
	c, crd, before := fixture(t, "Gadget", "gadgets", n)
	// An object created after the switch is stored at v2 already: the
	// migration's update of it must not reach etcd.
	late := object("Gadget", "v2", "late")
	if err := c.Create(t.Context(), late); err != nil {
		t.Fatal(err)
	}
	before[late.GetName()] = late.GetResourceVersion()

	m, err := migrate.New(c, migrate.Options{CRD: crd})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}

	if got := storedVersions(t.Context(), t, c, crd); !slices.Equal(got, []string{"v2"}) {
		t.Errorf("storedVersions = %v, want [v2]", got)
	}
	values, after := objects(t, c, "Gadget")
	want := map[string]string{}
	for name := range before {
		want[name] = "value of " + name
	}
	if diff := cmp.Diff(want, values); diff != "" {
		t.Errorf("objects after the migration (-want +got):\n%s", diff)
	}
	rewritten := 0
	for name, rv := range before {
		if after[name] != rv {
			rewritten++
		}
	}
	if rewritten != n {
		t.Errorf("%d objects got a new resourceVersion, want the %d stored at v1", rewritten, n)
	}
	if after["late"] != before["late"] {
		t.Errorf("the object stored at v2 already was written again: resourceVersion %s -> %s", before["late"], after["late"])
	}
	reg := metrics.Registry.(prometheus.Gatherer)
	if got := metricValue(t, reg, migrate.MetricObjects, crd); got != n+1 {
		t.Errorf("%s = %v, want %d (every object updated)", migrate.MetricObjects, got, n+1)
	}
	if got := metricValue(t, reg, migrate.MetricRunning, crd); got != 0 {
		t.Errorf("%s = %v after the migration, want 0", migrate.MetricRunning, got)
	}
	cur := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(t.Context(), types.NamespacedName{Name: crd}, cur); err != nil {
		t.Fatal(err)
	}
	if v, ok := cur.Annotations[migrate.ProgressAnnotation]; ok {
		t.Errorf("progress annotation left behind: %s", v)
	}

	// The old version can now go from the CRD.
	cur.Spec.Versions = cur.Spec.Versions[1:]
	if err := c.Update(t.Context(), cur); err != nil {
		t.Errorf("dropping v1 after the migration: %v", err)
	}
	// A second run has nothing to do.
	if err := m.Migrate(t.Context()); err != nil {
		t.Errorf("second Migrate: %v", err)
	}
	if got := metricValue(t, reg, migrate.MetricObjects, crd); got != n+1 {
		t.Errorf("%s = %v after a second run, want %d", migrate.MetricObjects, got, n+1)
	}
}

func TestResume(t *testing.T) {
	const n, batch = 250, 50
	c, crd, before := fixture(t, "Gizmo", "gizmos", n)

	reg := prometheus.NewRegistry()
	first, err := migrate.New(c, migrate.Options{CRD: crd, BatchSize: batch, RateLimit: 40, Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- first.Start(ctx) }()
	// Stop the first Migrator once a page has been recorded.
	bosuntest.Eventually(t, func(ctx context.Context) error {
		cur := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, types.NamespacedName{Name: crd}, cur); err != nil {
			return err
		}
		if _, ok := cur.Annotations[migrate.ProgressAnnotation]; !ok {
			return errors.New("no progress recorded yet")
		}
		return nil
	})
	if got := metricValue(t, reg, migrate.MetricRunning, crd); got != 1 {
		t.Errorf("%s = %v during the migration, want 1", migrate.MetricRunning, got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Start: %v", err)
	}
	firstWrites := metricValue(t, reg, migrate.MetricObjects, crd)
	if got := storedVersions(t.Context(), t, c, crd); !slices.Equal(got, []string{"v1", "v2"}) {
		t.Fatalf("storedVersions after the stop = %v, want [v1 v2]", got)
	}

	reg2 := prometheus.NewRegistry()
	second, err := migrate.New(c, migrate.Options{CRD: crd, BatchSize: batch, Metrics: reg2})
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	secondWrites := metricValue(t, reg2, migrate.MetricObjects, crd)
	t.Logf("writes: %v before the stop, %v after", firstWrites, secondWrites)
	if secondWrites > n-batch {
		t.Errorf("the second Migrator wrote %v objects, want at most %d: it did not resume", secondWrites, n-batch)
	}
	if firstWrites+secondWrites < n {
		t.Errorf("%v + %v writes, want at least %d", firstWrites, secondWrites, n)
	}
	if got := storedVersions(t.Context(), t, c, crd); !slices.Equal(got, []string{"v2"}) {
		t.Errorf("storedVersions = %v, want [v2]", got)
	}
	values, after := objects(t, c, "Gizmo")
	for name, rv := range before {
		if values[name] != "value of "+name {
			t.Errorf("%s: spec.value = %q", name, values[name])
		}
		if after[name] == rv {
			t.Errorf("%s was never rewritten", name)
		}
	}
}

func TestNewValidates(t *testing.T) {
	c := fakeClient{}
	for _, tc := range []struct {
		name string
		c    client.Client
		opts migrate.Options
	}{
		{"nil client", nil, migrate.Options{CRD: "a.b"}},
		{"no CRD", c, migrate.Options{}},
		{"negative batch", c, migrate.Options{CRD: "a.b", BatchSize: -1}},
		{"negative rate", c, migrate.Options{CRD: "a.b", RateLimit: -1}},
	} {
		if _, err := migrate.New(tc.c, tc.opts); err == nil {
			t.Errorf("%s: New succeeded, want an error", tc.name)
		}
	}
	m, err := migrate.New(c, migrate.Options{CRD: "a.b", Metrics: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	if !m.NeedLeaderElection() {
		t.Error("NeedLeaderElection = false, want true")
	}
}

// fakeClient is a client.Client for tests that never call it.
type fakeClient struct{ client.Client }
