package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/conditions"
)

// ThemeKey is the key of a theme Secret that holds the style sheet embedded
// in every page of the Sites that name the Secret.
const ThemeKey = "css"

// Condition types of a Site, besides Ready, which summarises them. The
// operator's children step reports one per kind of child.
const (
	// ConditionConfigMapReady reports whether the ConfigMap of every page
	// exists and holds the page as last rendered.
	ConditionConfigMapReady = "ConfigMapReady"
	// ConditionServiceReady reports whether the Site's Service exists.
	ConditionServiceReady = "ServiceReady"
)

// Reasons of a False Ready condition that the operator sets when it cannot
// render the pages. Both wait for the theme Secret to change: the operator
// watches the Secrets that Sites name.
const (
	// ReasonThemeNotFound means spec.themeSecret names a Secret that does
	// not exist in the Site's namespace.
	ReasonThemeNotFound conditions.Reason = "ThemeNotFound"
	// ReasonInvalidTheme means the theme Secret exists but has no ThemeKey,
	// or holds a style sheet that cannot be embedded in a page.
	ReasonInvalidTheme conditions.Reason = "InvalidTheme"
)

// SiteSpec is the desired state of a Site.
type SiteSpec struct {
	// Title is the title of the site, shown on every page.
	//
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=200
	Title string `json:"title"`

	// Pages are the names of the pages, in the order the navigation lists
	// them. Each is a DNS-1123 label, and names the page's ConfigMap
	// (<site>-<page>) and its path (/<page>/).
	//
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Pages []string `json:"pages"`

	// ThemeSecret is the name of a Secret in the Site's namespace whose key
	// "css" holds a style sheet embedded in every page. Empty means no
	// theme.
	//
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ThemeSecret string `json:"themeSecret,omitempty"`
}

// SiteStatus is the observed state of a Site.
type SiteStatus struct {
	// ObservedGeneration is the metadata.generation the status describes.
	//
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions are the latest observations of the Site: ConfigMapReady,
	// ServiceReady, and Ready, which summarises them.
	//
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// URL is the in-cluster address of the site's Service, set once the
	// pages were rendered.
	//
	// +optional
	URL string `json:"url,omitempty"`

	// Pages is the number of pages rendered.
	//
	// +optional
	Pages int32 `json:"pages,omitempty"`
}

// Site asks the site operator to publish a small static web site: one
// ConfigMap per page and a Service.
//
// The name of a Site names its Service, so it must be a DNS-1035 label.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=ws,categories=bosun
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="the name of a Site names its Service: at most 63 lower-case letters, digits and '-', starting with a letter and ending with a letter or digit",fieldPath=".metadata"
// +kubebuilder:printcolumn:name="Title",type=string,JSONPath=`.spec.title`
// +kubebuilder:printcolumn:name="Pages",type=integer,JSONPath=`.status.pages`
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.url`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Site struct {
	metav1.TypeMeta `json:",inline"`

	// Standard object metadata.
	//
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	//
	// +required
	Spec SiteSpec `json:"spec"`

	// Status is the observed state, written by the operator.
	//
	// +optional
	Status SiteStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions, for the bosun engine.
func (s *Site) GetConditions() []metav1.Condition { return s.Status.Conditions }

// SetConditions replaces the status conditions, for the bosun engine.
func (s *Site) SetConditions(c []metav1.Condition) { s.Status.Conditions = c }

// SiteList is a list of Sites.
//
// +kubebuilder:object:root=true
type SiteList struct {
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	//
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the Sites.
	Items []Site `json:"items"`
}
