// Package v1 is a spoke version of the test kind Gadget; it converts to
// and from the hub, v2.
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Gadget is the v1 version of the test kind.
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   GadgetSpec   `json:"spec,omitempty"`
	Status GadgetStatus `json:"status,omitempty"`
}

// GadgetSpec is the desired state of a Gadget.
type GadgetSpec struct {
	// Replicas is shared with v2.
	Replicas *int32 `json:"replicas,omitempty"`
	// Ports is shared with v2, whose Port calls Number Port.
	Ports []Port `json:"ports,omitempty"`
	// Color exists only in v1.
	Color string `json:"color,omitempty"`
}

// Port is a named port.
type Port struct {
	Name   string `json:"name"`
	Number int32  `json:"number"`
}

// GadgetStatus is the observed state of a Gadget.
type GadgetStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

// DeepCopy returns a deep copy of g.
func (g *Gadget) DeepCopy() *Gadget {
	if g == nil {
		return nil
	}
	out := &Gadget{TypeMeta: g.TypeMeta}
	meta := &g.ObjectMeta
	meta.DeepCopyInto(&out.ObjectMeta)
	if g.Spec.Replicas != nil {
		r := *g.Spec.Replicas
		out.Spec.Replicas = &r
	}
	if g.Spec.Ports != nil {
		out.Spec.Ports = append([]Port{}, g.Spec.Ports...)
	}
	out.Spec.Color = g.Spec.Color
	out.Status.ObservedGeneration = g.Status.ObservedGeneration
	if g.Status.Conditions != nil {
		out.Status.Conditions = make([]metav1.Condition, len(g.Status.Conditions))
		for i := range g.Status.Conditions {
			g.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
		}
	}
	return out
}

// DeepCopyObject implements runtime.Object.
func (g *Gadget) DeepCopyObject() runtime.Object { return g.DeepCopy() }
