package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/conditions"
)

// Defaults of the optional fields of a MemcachedSpec. The API server fills
// them in (the CRD declares them as defaults); the operator falls back on
// them too, for a Memcached made without the API server's defaulting.
const (
	// DefaultImage is the memcached image run when Image is empty.
	DefaultImage = "memcached:1.6.26-alpine3.19"
	// DefaultPort is the port memcached listens on when Port is zero.
	DefaultPort int32 = 11211
)

// Condition types of a Memcached, besides Ready, which summarises them in
// this order: when more than one is False, Ready tells of Available.
const (
	// ConditionAvailable reports whether the Memcached serves as its spec
	// says: its Deployment has as many ready pods as spec.size, all of the
	// latest template and no other, and status.pods lists them.
	ConditionAvailable = "Available"
	// ConditionDeploymentReady reports whether the Deployment has rolled
	// out the current spec: as many ready pods as its replicas, each of
	// the latest template, and no other. The operator's children step
	// reports it, as it does ConditionServiceReady.
	ConditionDeploymentReady = "DeploymentReady"
	// ConditionServiceReady reports whether the Service exists.
	ConditionServiceReady = "ServiceReady"
)

// Reasons of the Available condition, which Ready takes when Available is
// not True.
const (
	// ReasonAvailable is the reason of a True Available.
	ReasonAvailable conditions.Reason = "Available"
	// ReasonCreating means the operator does not see the Deployment yet:
	// it has just made it.
	ReasonCreating conditions.Reason = "Creating"
	// ReasonUpdating means the Deployment's pods are being made, replaced
	// or removed. The operator watches the Deployment and its pods, and
	// sees the end of it by itself.
	ReasonUpdating conditions.Reason = "Updating"
	// ReasonRolloutStuck means the Deployment's rollout made no progress
	// within its deadline (its Progressing condition is False): pods that
	// cannot be placed or never become ready, a wrong image.
	ReasonRolloutStuck conditions.Reason = "RolloutStuck"
)

// MemcachedSpec is the desired state of a Memcached.
type MemcachedSpec struct {
	// Size is the number of memcached servers: the replicas of the
	// Deployment.
	//
	// +required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	Size int32 `json:"size"`
	// Image is the container image of the servers, without whitespace,
	// pinned by a tag or a digest: a bare name would run whatever the
	// registry calls latest at the time a pod starts, so that two servers
	// of one Memcached could run different versions.
	//
	// +optional
	// +kubebuilder:default="memcached:1.6.26-alpine3.19"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^\S+$`
	// +kubebuilder:validation:XValidation:rule="self.matches('^[^@]+(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}|@sha256:[a-f0-9]{64})$')",message="image must name a tag or a digest, such as memcached:1.6 or memcached@sha256:<64 hex digits>"
	Image string `json:"image,omitempty"`
	// Port is the port the servers listen on, and the port of the Service.
	// It cannot change once set: clients know the Memcached by its Service
	// and port, so a new port is a new Memcached.
	//
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="port is immutable; delete and recreate the Memcached to change it"
	// +kubebuilder:default=11211
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`
}

// MemcachedStatus is the observed state of a Memcached.
type MemcachedStatus struct {
	// ObservedGeneration is the metadata.generation the status describes.
	//
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are the latest observations of the Memcached: Available,
	// DeploymentReady, ServiceReady, and Ready, which summarises them.
	//
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
	// ReadyReplicas is the number of ready servers, as the Deployment's
	// status counts them.
	//
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// Pods are the names of the servers' pods that are not being deleted,
	// sorted.
	//
	// +optional
	// +listType=set
	Pods []string `json:"pods,omitempty"`
}

// Memcached asks the memcached operator to run a number of memcached
// servers: a Deployment of that many pods and a Service in front of them.
//
// The name of a Memcached names its Service, so it must be a DNS-1035
// label.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=mc,categories=bosun
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="the name of a Memcached names its Service: at most 63 lower-case letters, digits and '-', starting with a letter and ending with a letter or digit",fieldPath=".metadata"
// +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=`.spec.size`
// +kubebuilder:printcolumn:name="Ready Pods",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Memcached struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	//
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired state.
	//
	// +required
	Spec MemcachedSpec `json:"spec"`
	// Status is the observed state, written by the operator.
	//
	// +optional
	Status MemcachedStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions, for the bosun engine.
func (m *Memcached) GetConditions() []metav1.Condition { return m.Status.Conditions }

// SetConditions replaces the status conditions, for the bosun engine.
func (m *Memcached) SetConditions(c []metav1.Condition) { m.Status.Conditions = c }

// MemcachedList is a list of Memcacheds.
//
// +kubebuilder:object:root=true
type MemcachedList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	//
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Memcacheds.
	Items []Memcached `json:"items"`
}
