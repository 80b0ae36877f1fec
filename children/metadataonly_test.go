package children

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/conditions"
)

// TestMetadataOnlyKind keeps ConfigMaps of a kind watched and cached as
// metadata only: they are made, found ready (Present), and passes over
// the converged set write nothing; a value changed by hand, a key removed
// by hand and the set's label removed are each put back, though the cache
// holds no value to compare (the step's field manager no longer owns the
// field); a child no longer desired is pruned.
func TestMetadataOnlyKind(t *testing.T) {
	kinds := []Kind{{Object: &corev1.ConfigMap{}, MetadataOnly: true}, Of(&appsv1.Deployment{}), Of(&corev1.Service{})}
	step := NewStep("web", webApp, kinds)
	e := start(t, reconciler(step))
	ctx := t.Context()
	e.create("mine", 2, 0)
	e.waitConditions("mine", map[string]cond{
		"ConfigMapReady":     {metav1.ConditionTrue, ReasonReady},
		conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded},
	})
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "2", "cm-1": "2"})
	e.touch("mine", "converged")
	e.writes.Reset()
	e.touch("mine", "quiet-1")
	e.touch("mine", "quiet-2")
	if n := e.writes.Total(); n != 0 {
		t.Errorf("%d writes by passes over a converged set of metadata-only children, want 0: %v", n, e.writes.Writes())
	}

	edit := func(name string, change func(*corev1.ConfigMap)) {
		t.Helper()
		cm := &corev1.ConfigMap{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: name}, cm); err != nil {
			t.Fatal(err)
		}
		change(cm)
		if err := e.c.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	edit("cm-0", func(cm *corev1.ConfigMap) { cm.Data["value"] = "tampered" })
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "2", "cm-1": "2"})
	edit("cm-1", func(cm *corev1.ConfigMap) { delete(cm.Data, "value") })
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "2", "cm-1": "2"})
	edit("cm-1", func(cm *corev1.ConfigMap) { delete(cm.Labels, LabelSet) })
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "2", "cm-1": "2"})

	e.setSpec("mine", 1, 0)
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "1"})
}
