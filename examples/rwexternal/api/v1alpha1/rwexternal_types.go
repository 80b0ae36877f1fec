package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/conditions"
)

// Condition types of an RWExternal, besides Ready, which summarises them.
const (
	// ConditionInputReady reports whether the input Secret was read and can
	// be turned into output.
	ConditionInputReady = "InputReady"
	// ConditionOutputReady reports whether the output Secret holds the output
	// of the current input.
	ConditionOutputReady = "OutputReady"
)

// Reasons used on the InputReady condition.
const (
	// ReasonInputFound means the input Secret was read.
	ReasonInputFound conditions.Reason = "InputFound"
	// ReasonInputMissing means the input Secret does not exist. The operator
	// tries again when it appears.
	ReasonInputMissing conditions.Reason = "InputMissing"
	// ReasonKeyCollision means two keys of the input Secret differ only in
	// case, so their output keys would be the same.
	ReasonKeyCollision conditions.Reason = "KeyCollision"
)

// Reasons used on the OutputReady condition.
const (
	// ReasonOutputUpToDate means the output Secret holds the output of the
	// current input.
	ReasonOutputUpToDate conditions.Reason = "OutputUpToDate"
	// ReasonOutputMissing means the output Secret does not exist; under the
	// skip policy the operator only reports this.
	ReasonOutputMissing conditions.Reason = "OutputMissing"
	// ReasonOutputOutOfDate means the output Secret does not hold the output
	// of the current input; under the skip policy the operator only reports
	// this.
	ReasonOutputOutOfDate conditions.Reason = "OutputOutOfDate"
	// ReasonOutputNotOwned means a Secret with the output's name exists and
	// belongs to something else, so the operator leaves it alone.
	ReasonOutputNotOwned conditions.Reason = "OutputNotOwned"
)

// OutputSuffix is appended to an RWExternal's name to name its output
// Secret when spec.outputSecret is not set.
const OutputSuffix = "-output"

// RWExternalSpec is the desired state of an RWExternal.
//
// +kubebuilder:validation:XValidation:rule="has(self.outputSecret) == has(oldSelf.outputSecret) && (!has(self.outputSecret) || self.outputSecret == oldSelf.outputSecret)",message="outputSecret is immutable",fieldPath=".outputSecret"
type RWExternalSpec struct {
	// InputSecret is the name of the Secret, in the RWExternal's namespace,
	// that the operator reads.
	//
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	InputSecret string `json:"inputSecret"`

	// OutputSecret is the name of the Secret, in the RWExternal's namespace,
	// that the operator writes. Defaults to the RWExternal's name followed by
	// "-output". It cannot be changed once set.
	//
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	OutputSecret string `json:"outputSecret,omitempty"`
}

// RWExternalStatus is the observed state of an RWExternal.
type RWExternalStatus struct {
	// ObservedGeneration is the metadata.generation the status describes.
	//
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// OutputSecret is the name of the Secret the operator wrote the output
	// to.
	//
	// +optional
	OutputSecret string `json:"outputSecret,omitempty"`

	// Conditions are the latest observations of the RWExternal: InputReady,
	// OutputReady, and Ready, which summarises them.
	//
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// RWExternal asks the rwexternal operator to derive an output Secret from an
// input Secret.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=rwx,categories=bosun
// +kubebuilder:validation:XValidation:rule="has(self.spec.outputSecret) || self.metadata.name.size() <= 246",message="names longer than 246 characters need spec.outputSecret",fieldPath=".spec.outputSecret",reason="FieldValueRequired"
// +kubebuilder:printcolumn:name="Input",type=string,JSONPath=`.spec.inputSecret`
// +kubebuilder:printcolumn:name="Output",type=string,JSONPath=`.status.outputSecret`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type RWExternal struct {
	metav1.TypeMeta `json:",inline"`

	// Standard object metadata.
	//
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	//
	// +required
	Spec RWExternalSpec `json:"spec"`

	// Status is the observed state, written by the operator.
	//
	// +optional
	Status RWExternalStatus `json:"status,omitempty"`
}

// OutputSecretName returns the name of the output Secret: spec.outputSecret,
// else the RWExternal's name followed by OutputSuffix.
func (r *RWExternal) OutputSecretName() string {
	if r.Spec.OutputSecret != "" {
		return r.Spec.OutputSecret
	}
	return r.Name + OutputSuffix
}

// GetConditions returns the status conditions, for the bosun engine.
func (r *RWExternal) GetConditions() []metav1.Condition { return r.Status.Conditions }

// SetConditions replaces the status conditions, for the bosun engine.
func (r *RWExternal) SetConditions(c []metav1.Condition) { r.Status.Conditions = c }

// RWExternalList is a list of RWExternals.
//
// +kubebuilder:object:root=true
type RWExternalList struct {
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	//
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the RWExternals.
	Items []RWExternal `json:"items"`
}
