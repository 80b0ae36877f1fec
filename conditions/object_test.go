package conditions_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/conditions"
)

// widget is a typical custom resource: a status struct with conditions and an
// observed generation.
type widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            widgetStatus `json:"status,omitempty"`
}

type widgetStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

func (w *widget) DeepCopyObject() runtime.Object {
	c := *w
	c.ObjectMeta = *w.DeepCopy()
	c.Status.Conditions = append([]metav1.Condition(nil), w.Status.Conditions...)
	return &c
}

func (w *widget) GetConditions() []metav1.Condition { return w.Status.Conditions }

func (w *widget) SetConditions(c []metav1.Condition) { w.Status.Conditions = c }

var _ conditions.Object = &widget{}

// pointerStatus keeps its status behind a pointer, with a named int64 type.
type pointerStatus struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	Status *struct{ ObservedGeneration generation }
}

type generation int64

func (p *pointerStatus) DeepCopyObject() runtime.Object { c := *p; return &c }

// narrowGeneration has an ObservedGeneration of the wrong kind.
type narrowGeneration struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	Status struct{ ObservedGeneration int32 }
}

func (n *narrowGeneration) DeepCopyObject() runtime.Object { c := *n; return &c }

// textStatus has a Status that is not a struct.
type textStatus struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	Status string
}

func (s *textStatus) DeepCopyObject() runtime.Object { c := *s; return &c }

// setter records the observed generation through its own method, outside Status.
type setter struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	observed int64
	Status   struct{ ObservedGeneration int64 }
}

func (s *setter) DeepCopyObject() runtime.Object { c := *s; return &c }

func (s *setter) SetObservedGeneration(gen int64) { s.observed = gen }

var _ conditions.ObservedGenerationSetter = &setter{}

func TestSetObservedGeneration(t *testing.T) {
	w := &widget{}
	ps := &pointerStatus{Status: &struct{ ObservedGeneration generation }{}}
	psNil := &pointerStatus{}
	dep := &appsv1.Deployment{}
	s := &setter{}
	tests := []struct {
		name   string
		obj    client.Object
		wantOK bool
		got    func() int64 // where the generation should land, nil when nowhere
	}{
		{"status struct", w, true, func() int64 { return w.Status.ObservedGeneration }},
		{"built-in type with the field", dep, true, func() int64 { return dep.Status.ObservedGeneration }},
		{"status pointer with a named int64", ps, true, func() int64 { return int64(ps.Status.ObservedGeneration) }},
		{"nil status pointer", psNil, false, nil},
		{"method preferred to the field", s, true, func() int64 { return s.observed }},
		{"no status field", &corev1.ConfigMap{}, false, nil},
		{"status without the field", &corev1.Namespace{}, false, nil},
		{"field of the wrong kind", &narrowGeneration{}, false, nil},
		{"status not a struct", &textStatus{}, false, nil},
		{"nil object pointer", (*widget)(nil), false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Twice: the second call goes through the per-type cache.
			for _, gen := range []int64{7, 9} {
				if ok := conditions.SetObservedGeneration(tt.obj, gen); ok != tt.wantOK {
					t.Fatalf("SetObservedGeneration(%d) = %v, want %v", gen, ok, tt.wantOK)
				}
				if tt.got != nil {
					if diff := cmp.Diff(gen, tt.got()); diff != "" {
						t.Errorf("observed generation mismatch (-want +got):\n%s", diff)
					}
				}
			}
		})
	}
	if s.Status.ObservedGeneration != 0 {
		t.Errorf("setter's Status.ObservedGeneration = %d, want 0: the method must be used instead", s.Status.ObservedGeneration)
	}
}
