package hello

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	hellov1 "github.com/bosunkit/bosun/examples/hello/api/v1alpha1"
)

func TestAddToScheme(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatalf("AddToScheme: %v", err)
	}
	for _, tt := range []struct {
		obj  runtime.Object
		want schema.GroupVersionKind
	}{
		{&hellov1.Greeting{}, hellov1.GroupVersion.WithKind("Greeting")},
		{&hellov1.GreetingList{}, hellov1.GroupVersion.WithKind("GreetingList")},
		{&corev1.ConfigMap{}, corev1.SchemeGroupVersion.WithKind("ConfigMap")},
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

// TestCRDs checks the embedded manifest against the API it must describe.
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
		Columns           []string
	}
	got := summary{Name: c.Name, Group: c.Spec.Group, Kind: c.Spec.Names.Kind, Scope: c.Spec.Scope}
	for _, v := range c.Spec.Versions {
		got.Versions = append(got.Versions, v.Name)
		got.Status = v.Subresources != nil && v.Subresources.Status != nil
		for _, col := range v.AdditionalPrinterColumns {
			got.Columns = append(got.Columns, col.Name+"="+col.JSONPath)
		}
	}
	want := summary{
		Name:     "greetings.hello.bosun.dev",
		Group:    hellov1.GroupVersion.Group,
		Kind:     "Greeting",
		Scope:    apiextensionsv1.NamespaceScoped,
		Versions: []string{hellov1.GroupVersion.Version},
		Status:   true,
		Columns: []string{
			`Ready=.status.conditions[?(@.type=="Ready")].status`,
			`Reason=.status.conditions[?(@.type=="Ready")].reason`,
			"Message=.status.message",
			"Age=.metadata.creationTimestamp",
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CRD (-want +got):\n%s", diff)
	}

	// The CEL rule on spec.template and the Go check must be the same rule,
	// and the default must be the one the controller falls back to.
	spec := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	tmpl := spec.Properties["template"]
	var rules []string
	for _, r := range tmpl.XValidations {
		rules = append(rules, r.Rule)
	}
	if diff := cmp.Diff([]string{"self.matches('" + hellov1.TemplatePattern + "')"}, rules); diff != "" {
		t.Errorf("template validation rules (-want +got):\n%s", diff)
	}
	if tmpl.Default == nil || string(tmpl.Default.Raw) != `"`+hellov1.DefaultTemplate+`"` {
		t.Errorf("template default = %v, want %q", tmpl.Default, hellov1.DefaultTemplate)
	}
	if got := spec.Properties["name"].MinLength; got == nil || *got != 1 {
		t.Errorf("name minLength = %v, want 1", got)
	}
	if diff := cmp.Diff([]string{"name"}, spec.Required); diff != "" {
		t.Errorf("spec required (-want +got):\n%s", diff)
	}
	conds := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties["conditions"]
	if conds.XListType == nil || *conds.XListType != "map" || !cmp.Equal(conds.XListMapKeys, []string{"type"}) {
		t.Errorf("status.conditions list type = %v keys %v, want map keyed by type", conds.XListType, conds.XListMapKeys)
	}

	// Each call hands out objects of its own.
	again, err := CRDs()
	if err != nil {
		t.Fatalf("CRDs: %v", err)
	}
	again[0].Name = "changed"
	if c.Name == "changed" {
		t.Error("CRDs returned shared objects")
	}
}

func TestSamples(t *testing.T) {
	samples := Samples("demo")
	if len(samples) < 2 {
		t.Fatalf("Samples returned %d objects, want at least 2", len(samples))
	}
	names := map[string]bool{}
	configMaps := map[string]bool{}
	for _, obj := range samples {
		g, ok := obj.(*hellov1.Greeting)
		if !ok {
			t.Fatalf("sample %T, want *v1alpha1.Greeting", obj)
		}
		if g.Namespace != "demo" {
			t.Errorf("sample %s namespace = %q, want demo", g.Name, g.Namespace)
		}
		if names[g.Name] {
			t.Errorf("sample name %s used twice", g.Name)
		}
		names[g.Name] = true
		cm := g.Spec.ConfigMapName
		if cm == "" {
			cm = g.Name
		}
		if configMaps[cm] {
			t.Errorf("configmap name %s used twice", cm)
		}
		configMaps[cm] = true
		if _, err := Render(g.Spec); err != nil {
			t.Errorf("sample %s: %v", g.Name, err)
		}
	}
	// Samples are fresh objects on every call.
	Samples("demo")[0].SetName("changed")
	if Samples("demo")[0].GetName() == "changed" {
		t.Error("Samples returned shared objects")
	}
}
