package v2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the group and version of this Gadget.
var GroupVersion = schema.GroupVersion{Group: "convert.test.bosun.dev", Version: "v2"}

// AddToScheme registers Gadget and GadgetList of this version with s.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Gadget{}, &GadgetList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// GadgetList is a list of Gadgets.
type GadgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Gadget `json:"items"`
}

// DeepCopyObject implements runtime.Object.
func (l *GadgetList) DeepCopyObject() runtime.Object {
	out := &GadgetList{TypeMeta: l.TypeMeta}
	l.DeepCopyInto(&out.ListMeta)
	for i := range l.Items {
		out.Items = append(out.Items, *l.Items[i].DeepCopy())
	}
	return out
}
