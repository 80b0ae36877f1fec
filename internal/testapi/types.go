package testapi

import (
	"bytes"
	"embed"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/bosunkit/bosun/controlplane"
)

// GroupVersion is the group and version of the Widget kind.
var GroupVersion = schema.GroupVersion{Group: "test.bosun.dev", Version: "v1"}

// AddToScheme registers Widget and WidgetList with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// CRDs holds the generated CRD manifest of Widget, at crd/.
//
//go:embed crd/*.yaml
var CRDs embed.FS

// WidgetSpec is the desired state of a Widget.
type WidgetSpec struct {
	// Value is a number the tests' steps work with.
	//
	// +optional
	Value int64 `json:"value,omitempty"`
	// Divisor divides Value; zero is refused by the steps that use it.
	//
	// +optional
	Divisor int64 `json:"divisor,omitempty"`
	// Mode is "fast" or "slow"; the API server refuses any other value,
	// which the tests use to make a write of the spec fail.
	//
	// +optional
	// +kubebuilder:validation:Enum=fast;slow
	Mode string `json:"mode,omitempty"`
}

// WidgetStatus is the observed state of a Widget.
type WidgetStatus struct {
	// ObservedGeneration is the metadata.generation the status describes.
	//
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Result is what the steps computed from the spec.
	//
	// +optional
	Result int64 `json:"result,omitempty"`
	// Pruned is left out of the schema the control plane installs (see
	// CRD), so the API server drops whatever a write puts there: a write
	// of it alone changes nothing on the server.
	//
	// +optional
	Pruned string `json:"pruned,omitempty"`
	// LastHandledReconcileAt is the value of the annotation
	// reconcile.bosun.dev/requested-at that the last pass handled.
	//
	// +optional
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`
	// Conditions are the latest observations of the Widget.
	//
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Widget is a test resource with a spec, a status subresource and
// conditions.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
type Widget struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	//
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired state.
	//
	// +optional
	Spec WidgetSpec `json:"spec,omitempty"`
	// Status is the observed state.
	//
	// +optional
	Status WidgetStatus `json:"status,omitempty"`
}

// GetConditions returns the Widget's conditions.
func (w *Widget) GetConditions() []metav1.Condition { return w.Status.Conditions }

// SetConditions replaces the Widget's conditions.
func (w *Widget) SetConditions(c []metav1.Condition) { w.Status.Conditions = c }

// WidgetList is a list of Widgets.
//
// +kubebuilder:object:root=true
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	//
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Widgets.
	Items []Widget `json:"items"`
}

// CRD returns the Widget CustomResourceDefinition decoded from CRDs, with
// status.pruned taken out of its schema.
func CRD() (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := CRDs.ReadFile("crd/test.bosun.dev_widgets.yaml")
	if err != nil {
		return nil, fmt.Errorf("testapi: reading crd: %w", err)
	}
	c := &apiextensionsv1.CustomResourceDefinition{}
	if err := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096).Decode(c); err != nil {
		return nil, fmt.Errorf("testapi: decoding crd: %w", err)
	}
	for i := range c.Spec.Versions {
		if s := c.Spec.Versions[i].Schema; s != nil && s.OpenAPIV3Schema != nil {
			status := s.OpenAPIV3Schema.Properties["status"]
			delete(status.Properties, "pruned")
			s.OpenAPIV3Schema.Properties["status"] = status
		}
	}
	return c, nil
}

// ControlPlaneOptions returns the options of a control plane for tests that
// reconcile Widgets: a scheme with the built-in kinds and Widget, and the
// Widget CRD installed.
func ControlPlaneOptions() (controlplane.Options, error) {
	return controlplane.OptionsFor(AddToScheme, func() ([]*apiextensionsv1.CustomResourceDefinition, error) {
		crd, err := CRD()
		return []*apiextensionsv1.CustomResourceDefinition{crd}, err
	})()
}
