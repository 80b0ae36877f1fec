package testapi

import (
	"bytes"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// AddGadgetToScheme registers Gadget and GadgetList with a scheme. It is
// apart from AddToScheme because the control plane of ControlPlaneOptions
// does not install the Gadget CRD: only the tests that need a kind the API
// server does not serve yet add it, and install GadgetCRD themselves.
func AddGadgetToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Gadget{}, &GadgetList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// GadgetSpec is the desired state of a Gadget.
type GadgetSpec struct {
	// Value is a number the tests' steps work with.
	//
	// +optional
	Value int64 `json:"value,omitempty"`
}

// GadgetStatus is the observed state of a Gadget.
type GadgetStatus struct {
	// ObservedGeneration is the metadata.generation the status describes.
	//
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Result is what the steps computed from the spec.
	//
	// +optional
	Result int64 `json:"result,omitempty"`
	// Conditions are the latest observations of the Gadget.
	//
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Gadget is a test resource of an optional API: its CRD is installed by
// the tests that use it, while a manager already runs, to show controllers
// that start once their kind is served.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
type Gadget struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	//
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired state.
	//
	// +optional
	Spec GadgetSpec `json:"spec,omitempty"`
	// Status is the observed state.
	//
	// +optional
	Status GadgetStatus `json:"status,omitempty"`
}

// GetConditions returns the Gadget's conditions.
func (g *Gadget) GetConditions() []metav1.Condition { return g.Status.Conditions }

// SetConditions replaces the Gadget's conditions.
func (g *Gadget) SetConditions(c []metav1.Condition) { g.Status.Conditions = c }

// GadgetList is a list of Gadgets.
//
// +kubebuilder:object:root=true
type GadgetList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	//
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Gadgets.
	Items []Gadget `json:"items"`
}

// GadgetCRD returns the Gadget CustomResourceDefinition decoded from CRDs.
func GadgetCRD() (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := CRDs.ReadFile("crd/test.bosun.dev_gadgets.yaml")
	if err != nil {
		return nil, fmt.Errorf("testapi: reading the gadget crd: %w", err)
	}
	c := &apiextensionsv1.CustomResourceDefinition{}
	if err := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096).Decode(c); err != nil {
		return nil, fmt.Errorf("testapi: decoding the gadget crd: %w", err)
	}
	return c, nil
}
