// Package v2 is the hub version of the test kind Gadget.
package v2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
)

// Gadget is the hub version of the test kind.
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   GadgetSpec   `json:"spec,omitempty"`
	Status GadgetStatus `json:"status,omitempty"`
}

// GadgetSpec is the desired state of a Gadget.
type GadgetSpec struct {
	// Replicas is shared with v1.
	Replicas *int32 `json:"replicas,omitempty"`
	// Ports is shared with v1.
	Ports []Port `json:"ports,omitempty"`
	// Schedule exists only in v2.
	Schedule *Schedule `json:"schedule,omitempty"`
}

// Port is a named port.
type Port struct {
	Name string `json:"name"`
	Port int32  `json:"port"`
}

// Schedule says when a Gadget runs.
type Schedule struct {
	Cron     string  `json:"cron"`
	TimeZone *string `json:"timeZone,omitempty"`
}

// GadgetStatus is the observed state of a Gadget.
type GadgetStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

// Hub marks v2 as the hub of conversion.
func (*Gadget) Hub() {}

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
	if g.Spec.Schedule != nil {
		out.Spec.Schedule = g.Spec.Schedule.DeepCopy()
	}
	out.Status.ObservedGeneration = g.Status.ObservedGeneration
	if g.Status.Conditions != nil {
		out.Status.Conditions = make([]metav1.Condition, len(g.Status.Conditions))
		for i := range g.Status.Conditions {
			g.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
		}
	}
	return out
}

// DeepCopy returns a deep copy of s.
func (s *Schedule) DeepCopy() *Schedule {
	if s == nil {
		return nil
	}
	out := &Schedule{Cron: s.Cron}
	if s.TimeZone != nil {
		tz := *s.TimeZone
		out.TimeZone = &tz
	}
	return out
}

// DeepCopyObject implements runtime.Object.
func (g *Gadget) DeepCopyObject() runtime.Object { return g.DeepCopy() }

var _ conversion.Hub = &Gadget{}
