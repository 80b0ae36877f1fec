package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/conditions"
)

// DefaultTemplate is the template a Greeting uses when spec.template is not
// set. The API server fills it in as the field's default.
const DefaultTemplate = "Hello, %s!"

// TemplatePattern is the regular expression every template must match: text
// with exactly one %s verb, where any other percent sign is written as %%.
// The CRD enforces it with a CEL rule that uses the same expression, so a
// template the API server accepts always renders cleanly with fmt.Sprintf.
const TemplatePattern = `^([^%]|%%)*%s([^%]|%%)*$`

// Condition types of a Greeting.
const (
	// ConditionPublished reports whether the Greeting's ConfigMap holds the
	// greeting rendered from the current spec. The operator's one step owns
	// it.
	ConditionPublished = "Published"
	// ConditionReady summarises the others, as the bosun engine keeps it
	// (conditions.TypeReady): True with reason Succeeded when Published is
	// True, else False with the reason and message of Published, or of the
	// error that ended the last reconcile.
	ConditionReady = conditions.TypeReady
)

// Reasons used on the Published condition, which Ready copies when
// Published is False.
const (
	// ReasonPublished means the ConfigMap holds the rendered greeting.
	ReasonPublished conditions.Reason = "Published"
	// ReasonInvalidTemplate means spec.template does not contain exactly one
	// %s verb, so no greeting can be rendered.
	ReasonInvalidTemplate conditions.Reason = "InvalidTemplate"
	// ReasonConfigMapNotOwned means a ConfigMap with the wanted name exists
	// but belongs to something else, so the operator leaves it alone.
	ReasonConfigMapNotOwned conditions.Reason = "ConfigMapNotOwned"
)

// ConfigMapKey is the key under which the ConfigMap stores the greeting.
const ConfigMapKey = "greeting"

// GreetingSpec is the desired state of a Greeting.
//
// +kubebuilder:validation:XValidation:rule="has(self.configMapName) == has(oldSelf.configMapName) && (!has(self.configMapName) || self.configMapName == oldSelf.configMapName)",message="configMapName is immutable",fieldPath=".configMapName"
type GreetingSpec struct {
	// Name is who to greet.
	//
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Name string `json:"name"`

	// Template is the greeting with one %s where the name goes; write %% for
	// a literal percent sign. Defaults to "Hello, %s!".
	//
	// +optional
	// +kubebuilder:default="Hello, %s!"
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.matches('^([^%]|%%)*%s([^%]|%%)*$')",message="template must contain exactly one %s; write %% for a literal percent sign"
	Template string `json:"template,omitempty"`

	// ConfigMapName is the name of the ConfigMap that receives the greeting.
	// Defaults to the Greeting's own name. It cannot be changed once set.
	//
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ConfigMapName string `json:"configMapName,omitempty"`
}

// GreetingStatus is the observed state of a Greeting.
type GreetingStatus struct {
	// ObservedGeneration is the metadata.generation the status describes.
	//
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Message is the rendered greeting, as written to the ConfigMap. It is
	// empty while the template is invalid or the ConfigMap's name is taken.
	//
	// +optional
	Message string `json:"message,omitempty"`

	// Conditions are the latest observations of the Greeting: Published,
	// true once the ConfigMap holds the greeting of the observed
	// generation, and Ready, which summarises it.
	//
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// Greeting asks the hello operator to keep a greeting in a ConfigMap.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=greet,categories=bosun
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.message`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Greeting struct {
	metav1.TypeMeta `json:",inline"`

	// Standard object metadata.
	//
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	//
	// +required
	Spec GreetingSpec `json:"spec"`

	// Status is the observed state, written by the operator.
	//
	// +optional
	Status GreetingStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions, for the bosun engine.
func (g *Greeting) GetConditions() []metav1.Condition { return g.Status.Conditions }

// SetConditions replaces the status conditions, for the bosun engine.
func (g *Greeting) SetConditions(c []metav1.Condition) { g.Status.Conditions = c }

// GreetingList is a list of Greetings.
//
// +kubebuilder:object:root=true
type GreetingList struct {
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	//
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the Greetings.
	Items []Greeting `json:"items"`
}
