package bucketapi

import (
	"bytes"
	"embed"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/bosunkit/bosun/managed/changelog"
)

// GroupVersion is the group and version of the Bucket kind.
var GroupVersion = schema.GroupVersion{Group: "managed.test.bosun.dev", Version: "v1"}

// AddToScheme registers Bucket and BucketList with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Bucket{}, &BucketList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// CRDs holds the generated CRD manifest of Bucket, at crd/.
//
//go:embed crd/*.yaml
var CRDs embed.FS

// BucketSpec is the desired state of a Bucket.
type BucketSpec struct {
	// Size is the size the external bucket should have.
	//
	// +optional
	Size int64 `json:"size,omitempty"`
	// Region is where the bucket lives. Left empty, the external system
	// chooses one and the controller fills it in (late initialisation).
	// Lower-case letters, digits and dashes.
	//
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z0-9-]*$`
	Region string `json:"region,omitempty"`
	// ConnectionSecret names the Secret, in the Bucket's namespace, that
	// receives the bucket's connection details. Empty means none.
	//
	// +optional
	ConnectionSecret string `json:"connectionSecret,omitempty"`
}

// BucketObservation is the bucket as the external system reports it.
type BucketObservation struct {
	// Size is the bucket's size.
	//
	// +optional
	Size int64 `json:"size,omitempty"`
	// Region is where the bucket lives.
	//
	// +optional
	Region string `json:"region,omitempty"`
	// Owner is the identity of the object the bucket is marked for, if
	// any.
	//
	// +optional
	Owner string `json:"owner,omitempty"`
}

// BucketStatus is the observed state of a Bucket.
type BucketStatus struct {
	// AtProvider is the bucket as the external system last reported it;
	// unset while there is none.
	//
	// +optional
	AtProvider *BucketObservation `json:"atProvider,omitempty"`
	// Changes are the last operations of the operator on the external
	// bucket, oldest first.
	//
	// +optional
	Changes []changelog.Entry `json:"changes,omitempty"`
	// ObservedGeneration is the metadata.generation the status describes.
	//
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are the latest observations of the Bucket.
	//
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Bucket is a test resource that stands for a bucket in an external system.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
type Bucket struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	//
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired state.
	//
	// +optional
	Spec BucketSpec `json:"spec,omitempty"`
	// Status is the observed state.
	//
	// +optional
	Status BucketStatus `json:"status,omitempty"`
}

// GetConditions returns the Bucket's conditions.
func (b *Bucket) GetConditions() []metav1.Condition { return b.Status.Conditions }

// SetConditions replaces the Bucket's conditions.
func (b *Bucket) SetConditions(c []metav1.Condition) { b.Status.Conditions = c }

// GetChangeLog returns the Bucket's change log.
func (b *Bucket) GetChangeLog() []changelog.Entry { return b.Status.Changes }

// SetChangeLog replaces the Bucket's change log.
func (b *Bucket) SetChangeLog(l []changelog.Entry) { b.Status.Changes = l }

// BucketList is a list of Buckets.
//
// +kubebuilder:object:root=true
type BucketList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	//
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Buckets.
	Items []Bucket `json:"items"`
}

// CRD returns the Bucket CustomResourceDefinition decoded from CRDs.
func CRD() (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := CRDs.ReadFile("crd/managed.test.bosun.dev_buckets.yaml")
	if err != nil {
		return nil, fmt.Errorf("bucketapi: reading crd: %w", err)
	}
	c := &apiextensionsv1.CustomResourceDefinition{}
	if err := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096).Decode(c); err != nil {
		return nil, fmt.Errorf("bucketapi: decoding crd: %w", err)
	}
	return c, nil
}
