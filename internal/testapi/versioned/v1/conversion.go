package v1

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/conversion"

	testapi "github.com/bosunkit/bosun/internal/testapi/versioned"
	v2 "github.com/bosunkit/bosun/internal/testapi/versioned/v2"
)

// ConvertTo converts g to the hub, keeping Color in an annotation of the hub.
func (g *Gadget) ConvertTo(dst conversion.Hub) error {
	hub, ok := dst.(*v2.Gadget)
	if !ok {
		return fmt.Errorf("convert v1 Gadget to %T: not the hub", dst)
	}
	*hub = v2.Gadget{}
	meta := &g.ObjectMeta
	meta.DeepCopyInto(&hub.ObjectMeta)
	if g.Spec.Replicas != nil {
		r := *g.Spec.Replicas
		hub.Spec.Replicas = &r
	}
	for _, p := range g.Spec.Ports {
		hub.Spec.Ports = append(hub.Spec.Ports, v2.Port{Name: p.Name, Port: p.Number})
	}
	hub.Status.ObservedGeneration = g.Status.ObservedGeneration
	hub.Status.Conditions = g.DeepCopy().Status.Conditions
	// Restore what only the hub has, and drop the annotation that kept it.
	if s, ok := hub.Annotations[testapi.ScheduleAnnotation]; ok {
		hub.Spec.Schedule = &v2.Schedule{}
		if err := json.Unmarshal([]byte(s), hub.Spec.Schedule); err != nil {
			return fmt.Errorf("convert v1 Gadget to v2: annotation %s: %w", testapi.ScheduleAnnotation, err)
		}
		delete(hub.Annotations, testapi.ScheduleAnnotation)
	}
	// Keep what only v1 has.
	if g.Spec.Color != "" {
		if hub.Annotations == nil {
			hub.Annotations = map[string]string{}
		}
		hub.Annotations[testapi.ColorAnnotation] = g.Spec.Color
	}
	return nil
}

// ConvertFrom converts the hub to g, keeping Schedule in an annotation of g.
func (g *Gadget) ConvertFrom(src conversion.Hub) error {
	hub, ok := src.(*v2.Gadget)
	if !ok {
		return fmt.Errorf("convert %T to v1 Gadget: not the hub", src)
	}
	*g = Gadget{}
	meta := &hub.ObjectMeta
	meta.DeepCopyInto(&g.ObjectMeta)
	if hub.Spec.Replicas != nil {
		r := *hub.Spec.Replicas
		g.Spec.Replicas = &r
	}
	for _, p := range hub.Spec.Ports {
		g.Spec.Ports = append(g.Spec.Ports, Port{Name: p.Name, Number: p.Port})
	}
	g.Status.ObservedGeneration = hub.Status.ObservedGeneration
	g.Status.Conditions = hub.DeepCopy().Status.Conditions
	// Restore what only v1 has, and drop the annotation that kept it.
	if c, ok := g.Annotations[testapi.ColorAnnotation]; ok {
		g.Spec.Color = c
		delete(g.Annotations, testapi.ColorAnnotation)
	}
	// Keep what only the hub has.
	if hub.Spec.Schedule != nil {
		b, err := json.Marshal(hub.Spec.Schedule)
		if err != nil {
			return fmt.Errorf("convert v2 Gadget to v1: schedule: %w", err)
		}
		if g.Annotations == nil {
			g.Annotations = map[string]string{}
		}
		g.Annotations[testapi.ScheduleAnnotation] = string(b)
	}
	return nil
}

var _ conversion.Convertible = &Gadget{}
