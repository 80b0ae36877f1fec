package testapi

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the group and version of the Target kind.
var GroupVersion = schema.GroupVersion{Group: "cronjob.bosun.dev", Version: "v1"}

// AddToScheme registers Target and TargetList with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Target{}, &TargetList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// Phase is a string type of its own, for references to named string types.
type Phase string

// TargetSpec is the desired state of a Target.
type TargetSpec struct {
	// Schedule is a cron expression.
	Schedule string `json:"schedule"`
	// ServiceName names the Service that fronts the Target's jobs.
	//
	// +optional
	ServiceName string `json:"serviceName,omitempty"`
	// Suspend stops the Target from starting jobs.
	//
	// +optional
	Suspend *bool `json:"suspend,omitempty"`
	// HistoryLimit is how many finished jobs to keep.
	//
	// +optional
	HistoryLimit int32 `json:"historyLimit,omitempty"`
	// ConfigNamespace names the namespace that holds the Target's
	// settings, for states read outside the Target's namespace.
	//
	// +optional
	ConfigNamespace string `json:"configNamespace,omitempty"`
	// Template holds settings for the jobs.
	//
	// +optional
	Template TemplateSpec `json:"template,omitempty"`
}

// TemplateSpec holds settings for a Target's jobs.
type TemplateSpec struct {
	// Queue names the queue the jobs run on.
	//
	// +optional
	Queue string `json:"queue,omitempty"`
}

// TargetStatus is the observed state of a Target.
type TargetStatus struct {
	// Phase summarises the Target's state.
	//
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// LastScheduleTime is when a job was last started.
	//
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
	// Conditions are the latest observations of the Target; the bosun
	// engine writes them when it reconciles a Target.
	//
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Target is a test resource shaped like a CronJob, with conditions so that
// the bosun engine can reconcile it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
type Target struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	//
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired state.
	//
	// +optional
	Spec TargetSpec `json:"spec,omitempty"`
	// Status is the observed state.
	//
	// +optional
	Status TargetStatus `json:"status,omitempty"`
}

// GetConditions returns the Target's conditions.
func (t *Target) GetConditions() []metav1.Condition { return t.Status.Conditions }

// SetConditions replaces the Target's conditions.
func (t *Target) SetConditions(c []metav1.Condition) { t.Status.Conditions = c }

// TargetList is a list of Targets.
//
// +kubebuilder:object:root=true
type TargetList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	//
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Targets.
	Items []Target `json:"items"`
}
