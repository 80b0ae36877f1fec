package explore_test

import (
	"encoding/json"
	"fmt"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/explore"
	"github.com/bosunkit/bosun/controlplane"
)

// probeSpec is the schema of the spec of the Probe kind: a field of each
// type and bound the generator reads.
var probeSpec = apiextensionsv1.JSONSchemaProps{
	Type:     "object",
	Required: []string{"size"},
	Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"size":  {Type: "integer", Minimum: ptr.To(1.0), Maximum: ptr.To(10.0)},
		"name":  {Type: "string", MinLength: ptr.To[int64](2), MaxLength: ptr.To[int64](8)},
		"text":  {Type: "string"},
		"mode":  {Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"Fast"`)}, {Raw: []byte(`"Slow"`)}}},
		"ratio": {Type: "number", Minimum: ptr.To(0.0), Maximum: ptr.To(1.0), ExclusiveMaximum: true},
		"tags": {Type: "array", MaxItems: ptr.To[int64](3), XListType: ptr.To("set"),
			Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string", MinLength: ptr.To[int64](1)}}},
		"ports": {Type: "array", MinItems: ptr.To[int64](1), MaxItems: ptr.To[int64](4),
			Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "integer", Minimum: ptr.To(1.0), Maximum: ptr.To(65535.0)}}},
		"labels": {Type: "object",
			AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}},
		"limit":  {XIntOrString: true},
		"since":  {Type: "string", Format: "date-time"},
		"note":   {Type: "string", MaxLength: ptr.To[int64](10), Nullable: true},
		"paused": {Type: "boolean"},
		"nested": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"depth": {Type: "integer", Minimum: ptr.To(0.0), ExclusiveMinimum: true},
			"id":    {Type: "string", Pattern: "^[a-z]+$", Default: &apiextensionsv1.JSON{Raw: []byte(`"abc"`)}},
		}},
	},
}

var probeGVK = schema.GroupVersionKind{Group: "explore.test.bosun.dev", Version: "v1", Kind: "Probe"}

// probeCRD returns the CRD of the Probe kind.
func probeCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "probes." + probeGVK.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: probeGVK.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "probes", Singular: "probe", Kind: probeGVK.Kind, ListKind: probeGVK.Kind + "List"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: probeGVK.Version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec":   probeSpec,
						"status": {Type: "object", XPreserveUnknownFields: ptr.To(true)},
					},
				}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
}

var shared = bosuntest.Shared{Options: func() (controlplane.Options, error) {
	return controlplane.Options{CRDs: []*apiextensionsv1.CustomResourceDefinition{probeCRD()}}, nil
}}

func TestMain(m *testing.M) { shared.Main(m) }

// TestChangesAreAdmitted checks on a real API server that every change the
// generator reads off a schema of each type and bound is admitted, and
// stored as written: an object made with each is created, and its spec
// holds the value.
func TestChangesAreAdmitted(t *testing.T) {
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	base := map[string]any{"size": int64(1)}
	changes := explore.Changes(&probeSpec)
	if len(changes) < 40 {
		t.Fatalf("%d changes of the Probe's spec, want at least 40", len(changes))
	}
	for i, c := range changes {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(probeGVK)
		obj.SetNamespace(ns)
		obj.SetName(fmt.Sprintf("probe-%d", i))
		spec := c.Apply(base)
		obj.Object["spec"] = spec
		if err := cp.Client.Create(t.Context(), obj); err != nil {
			t.Errorf("%s: refused: %v", c, err)
			continue
		}
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(probeGVK)
		if err := cp.Client.Get(t.Context(), client.ObjectKeyFromObject(obj), got); err != nil {
			t.Fatal(err)
		}
		if c.Class == explore.Removed {
			// A removed field may come back as its default.
			continue
		}
		// The field changed holds the value; others may hold defaults.
		path := append([]string{"spec"}, c.Path...)
		v, found, err := unstructured.NestedFieldNoCopy(got.Object, path...)
		want, _ := json.Marshal(c.Value)
		stored, _ := json.Marshal(v)
		if err != nil || !found || string(want) != string(stored) {
			t.Errorf("%s: stored %s (found %v, %v), want %s", c, stored, found, err, want)
		}
	}
}
