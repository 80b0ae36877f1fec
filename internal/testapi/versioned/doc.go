// Package versioned holds a kind, Gadget of convert.test.bosun.dev, in two
// versions for the tests of packages conversion and webhook: v2 is the hub
// and v1 a spoke (and the storage version of CRD). Each version has a field
// the other lacks (v1 a Color, v2 a Schedule), and the spoke keeps it in an
// annotation of the other version across a conversion.
package versioned

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Annotation keys under which a v1 Gadget and its v2 hub keep the field
// the other version lacks.
const (
	ColorAnnotation    = "test.bosun.dev/v1-color"
	ScheduleAnnotation = "test.bosun.dev/v2-schedule"
)

// Group is the API group of Gadget.
const Group = "convert.test.bosun.dev"

// CRD returns Gadget's CustomResourceDefinition: namespaced, versions v1
// (stored) and v2, both served with a status subresource, and a schema that
// keeps any spec and status (the tests' conversions decide what they hold).
// Its conversion is left for envtest to point at the test's webhook server.
func CRD() *apiextensionsv1.CustomResourceDefinition {
	keep := apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}
	version := func(name string, storage bool) apiextensionsv1.CustomResourceDefinitionVersion {
		return apiextensionsv1.CustomResourceDefinitionVersion{
			Name: name, Served: true, Storage: storage,
			Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type:       "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": keep, "status": keep},
			}},
		}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets." + Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Kind: "Gadget", ListKind: "GadgetList", Plural: "gadgets", Singular: "gadget",
			},
			Scope:    apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{version("v1", true), version("v2", false)},
		},
	}
}
