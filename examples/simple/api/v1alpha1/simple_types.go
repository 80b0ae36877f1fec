package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/conditions"
)

// ConditionDivisorValid is the condition type that reports whether
// spec.divisor can divide: True unless it is zero.
const ConditionDivisorValid = "DivisorValid"

// Reasons used on the DivisorValid condition. A False DivisorValid also
// becomes the reason of the Ready condition.
const (
	// ReasonNonZeroDivisor means the divisor is not zero.
	ReasonNonZeroDivisor conditions.Reason = "NonZeroDivisor"
	// ReasonZeroDivisor means the divisor is zero, so nothing is computed
	// until the spec changes.
	ReasonZeroDivisor conditions.Reason = "ZeroDivisor"
)

// SimpleSpec is the desired state of a Simple: a division to compute.
type SimpleSpec struct {
	// Dividend is the number divided.
	//
	// +optional
	Dividend int64 `json:"dividend,omitempty"`

	// Divisor is the number Dividend is divided by. Zero is accepted by the
	// API server and refused by the operator through the DivisorValid
	// condition.
	//
	// +optional
	Divisor int64 `json:"divisor,omitempty"`
}

// SimpleStatus is the observed state of a Simple.
type SimpleStatus struct {
	// ObservedGeneration is the metadata.generation the status describes.
	//
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Quotient is Dividend / Divisor, truncated towards zero. It is absent
	// while the divisor is zero.
	//
	// +optional
	Quotient *int64 `json:"quotient,omitempty"`

	// Remainder is Dividend % Divisor; it has the sign of Dividend. It is
	// absent while the divisor is zero.
	//
	// +optional
	Remainder *int64 `json:"remainder,omitempty"`

	// Conditions are the latest observations of the Simple: DivisorValid,
	// and Ready, which summarises it.
	//
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// Simple asks the simple operator to divide two numbers.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=simp,categories=bosun
// +kubebuilder:printcolumn:name="Dividend",type=integer,JSONPath=`.spec.dividend`
// +kubebuilder:printcolumn:name="Divisor",type=integer,JSONPath=`.spec.divisor`
// +kubebuilder:printcolumn:name="Quotient",type=integer,JSONPath=`.status.quotient`
// +kubebuilder:printcolumn:name="Remainder",type=integer,JSONPath=`.status.remainder`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Simple struct {
	metav1.TypeMeta `json:",inline"`

	// Standard object metadata.
	//
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	//
	// +optional
	Spec SimpleSpec `json:"spec,omitempty"`

	// Status is the observed state, written by the operator.
	//
	// +optional
	Status SimpleStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions, for the bosun engine.
func (s *Simple) GetConditions() []metav1.Condition { return s.Status.Conditions }

// SetConditions replaces the status conditions, for the bosun engine.
func (s *Simple) SetConditions(c []metav1.Condition) { s.Status.Conditions = c }

// SimpleList is a list of Simples.
//
// +kubebuilder:object:root=true
type SimpleList struct {
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	//
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the Simples.
	Items []Simple `json:"items"`
}
