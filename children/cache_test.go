package children

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
)

// TestCacheSetsOnlyOptions checks the selectors CacheSetsOnly puts in
// cache options: one per kind, narrowing one already there.
func TestCacheSetsOnlyOptions(t *testing.T) {
	team, err := labels.NewRequirement("team", selection.Equals, []string{"blue"})
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	o := cache.Options{ByObject: map[client.Object]cache.ByObject{cm: {Label: labels.NewSelector().Add(*team)}}}
	CacheSetsOnly(&o, &corev1.ConfigMap{}, &corev1.Secret{})
	got := map[string]string{}
	for obj, by := range o.ByObject {
		got[fmt.Sprintf("%T", obj)] = by.Label.String()
	}
	want := map[string]string{"*v1.ConfigMap": "bosun.dev/set,team=blue", "*v1.Secret": "bosun.dev/set"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("selectors (-want +got):\n%s", diff)
	}
}

// TestCacheSetsOnly runs the step on a cache of ConfigMaps limited to the
// children of sets: an unrelated ConfigMap is not cached, the set
// converges, a name taken by an object the set did not create is still
// found (ReasonChildExists), and the set heals once it is removed.
func TestCacheSetsOnly(t *testing.T) {
	step := NewStep("web", webApp, webKinds())
	e := startWith(t, reconciler(step), func(o *ctrl.Options) { CacheSetsOnly(&o.Cache, &corev1.ConfigMap{}) })
	ctx := t.Context()
	loose := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "loose"}}
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "cm-1"}, Data: map[string]string{"value": "theirs"}}
	for _, cm := range []*corev1.ConfigMap{loose, theirs} {
		if err := e.c.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	e.create("mine", 2, 0)
	e.waitConditions("mine", map[string]cond{conditions.TypeReady: {metav1.ConditionFalse, ReasonChildExists}})
	for _, cm := range []*corev1.ConfigMap{loose, theirs} {
		err := e.mgr.GetCache().Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("reading %s, which is no child, from the cache: %v, want not found", cm.Name, err)
		}
	}
	if err := e.c.Delete(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	e.waitConditions("mine", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "2", "cm-1": "2"})
	bosuntest.Eventually(t, func(ctx context.Context) error {
		var cm corev1.ConfigMap
		if err := e.mgr.GetCache().Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "cm-0"}, &cm); err != nil {
			return fmt.Errorf("the child cm-0 is not cached: %w", err)
		}
		return nil
	})
	var live corev1.ConfigMap
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(loose), &live); err != nil {
		t.Fatal(err)
	}
	if live.ResourceVersion != loose.ResourceVersion {
		t.Errorf("the unrelated ConfigMap was written")
	}
}
