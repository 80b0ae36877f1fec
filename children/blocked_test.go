package children

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// takenBy returns a ConfigMap name in ns controlled by the Widget other.
func takenBy(ns, name string, other *testapi.Widget) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: []metav1.OwnerReference{{
		APIVersion: testapi.GroupVersion.String(), Kind: "Widget", Name: other.Name, UID: other.UID, Controller: ptr.To(true),
	}}}, Data: map[string]string{"value": "theirs"}}
}

// TestKindConditionsWhileBlocked: a pass with a child in the way now
// applies the other children, but skips reportKinds; the engine still
// stamps the kinds' conditions (step-owned) with the current generation.
// A Deployment created in that pass, not available, is then reported
// DeploymentReady True for the generation that created it.
func TestKindConditionsWhileBlocked(t *testing.T) {
	step := NewStep("web", webApp, webKinds())
	e := start(t, reconciler(step))
	ctx := t.Context()
	e.create("mine", 1, 0)
	e.waitConditions("mine", map[string]cond{
		"DeploymentReady":    {metav1.ConditionTrue, ReasonReady},
		conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded},
	})
	// Someone else's ConfigMap holds the name of cm-1, and the spec now
	// wants cm-1 and a Deployment.
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "cm-1"}, Data: map[string]string{"value": "theirs"}}
	if err := e.c.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	e.setSpec("mine", 2, 1)
	bosuntest.Eventually(t, func(ctx context.Context) error {
		return e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "web"}, &appsv1.Deployment{})
	}, bosuntest.Timeout(30*time.Second))
	w := e.waitConditions("mine", map[string]cond{conditions.TypeReady: {metav1.ConditionFalse, ReasonChildExists}})
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
		t.Fatal(err)
	}
	// The Deployment exists and nothing made it available: its kind's
	// condition must not say it is ready for this generation.
	if c := conditions.Find(w.Status.Conditions, "DeploymentReady"); c == nil || (c.Status == metav1.ConditionTrue && c.ObservedGeneration == w.Generation) {
		t.Errorf("DeploymentReady = %+v for generation %d, while the Deployment web that generation's passes created is not available", c, w.Generation)
	}
}

// TestConflictFoundByTheApplyHoldsBackTheOthers: an object another
// Widget controls is made under the name of cm-0 between the pass's read
// and its apply (forced in the client). The pass learns of the conflict
// in applyChildren (reportTaken), which still aborts the pass: cm-1 is
// never applied, and ChildConflict is terminal, so nothing retries.
func TestConflictFoundByTheApplyHoldsBackTheOthers(t *testing.T) {
	step := NewStep("web", webApp, webKinds())
	var e *env
	var other *testapi.Widget
	var fired atomic.Bool
	wrap := func(c client.Client) client.Client {
		return interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
			Apply: func(ctx context.Context, cl client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
				if applyName(obj) == "cm-0" && fired.CompareAndSwap(false, true) {
					taken := takenBy(e.ns, "cm-0", other)
					if err := e.c.Create(ctx, taken); err != nil {
						return fmt.Errorf("test: creating the object in the way: %w", err)
					}
					// Let the manager's cache and the watch handlers see
					// it before the pass goes on.
					for {
						if err := e.mgr.GetCache().Get(ctx, client.ObjectKeyFromObject(taken), &corev1.ConfigMap{}); err == nil {
							break
						}
						time.Sleep(20 * time.Millisecond)
					}
					time.Sleep(300 * time.Millisecond)
				}
				return cl.Apply(ctx, obj, opts...)
			},
		})
	}
	e = start(t, reconciler(step), wrap)
	other = e.create("other", 0, 0)
	e.create("mine", 2, 0)
	e.waitConditions("mine", map[string]cond{conditions.TypeReady: {metav1.ConditionFalse, ReasonChildConflict}})
	if !fired.Load() {
		t.Fatal("test: the object in the way was not made")
	}
	// One object in the way holds back no other child.
	e.waitConfigMaps(e.ns, map[string]string{"cm-1": "2"})
}

// TestQuietWhileBlocked: a set converged but for one child whose
// name someone else's object holds. Its passes are retried with backoff;
// they must write nothing (no child applied again, no status rewritten).
func TestQuietWhileBlocked(t *testing.T) {
	step := NewStep("web", webApp, webKinds())
	e := start(t, reconciler(step))
	ctx := t.Context()
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "cm-0"}, Data: map[string]string{"value": "theirs"}}
	if err := e.c.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	e.create("mine", 3, 1)
	e.waitConditions("mine", map[string]cond{conditions.TypeReady: {metav1.ConditionFalse, ReasonChildExists}})
	e.waitConfigMaps(e.ns, map[string]string{"cm-1": "3", "cm-2": "3"})
	e.markAvailable("web")
	e.waitConditions("mine", map[string]cond{"DeploymentReady": {metav1.ConditionTrue, ReasonReady}})
	// A clock of its own brings the window's passes; the blocked Widget
	// has only its backoff's.
	e.create("clock", 0, 0)
	e.writes.Reset()
	base := e.passCount("mine")
	e.window("clock", 15*time.Second, 10)
	passes := e.passCount("mine") - base
	t.Logf("%d passes in 15s while blocked; writes %v", passes, e.writes.Counts())
	for _, w := range e.writes.Writes() {
		if w.Name != "clock" && w.Namespace == e.ns {
			t.Errorf("a write by the passes of a set blocked by one object, want none: %+v", w)
		}
	}
	if passes > 15 {
		t.Errorf("%d passes in 15s of a set blocked by one object, want a backoff", passes)
	}
}

// TestReleaseOfAnAdoptedDeployment adopts a Deployment someone made
// with another image, then no longer desires it: it should be given back
// (owner reference and set labels gone), with an image to run.
func TestReleaseOfAnAdoptedDeployment(t *testing.T) {
	step := NewStep("web", webApp, webKinds(), WithAdoption())
	e := start(t, reconciler(step))
	ctx := t.Context()
	theirs := theirDeployment(e.ns, "web", map[string]string{"app": "mine"})
	if err := e.c.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	w := e.create("mine", 1, 1)
	var live appsv1.Deployment
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(theirs), &live); err != nil {
			return err
		}
		if !metav1.IsControlledBy(&live, w) {
			return errors.New("not adopted yet")
		}
		return nil
	}, bosuntest.Timeout(30*time.Second))
	t.Logf("adopted: image %q", live.Spec.Template.Spec.Containers[0].Image)

	e.setSpec("mine", 1, 0)
	// The checks read with the test's context: the last one's message
	// is the state, not the deadline.
	bosuntest.Eventually(t, func(context.Context) error {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(theirs), &live); err != nil {
			return fmt.Errorf("the adopted Deployment, no longer desired: %w, want it given back", err)
		}
		if len(live.OwnerReferences) != 0 || live.Labels[LabelSet] != "" {
			wl := &testapi.Widget{}
			_ = e.c.Get(ctx, client.ObjectKeyFromObject(w), wl)
			return fmt.Errorf("the Deployment is not given back: owners %v, labels %v; Widget Ready: %+v",
				live.OwnerReferences, live.Labels, conditions.Find(wl.Status.Conditions, conditions.TypeReady))
		}
		return nil
	}, bosuntest.Timeout(30*time.Second))
	if img := live.Spec.Template.Spec.Containers[0].Image; img == "" {
		t.Errorf("the released Deployment has no image (its maker's %q was taken over, then given up): it cannot run", theirs.Spec.Template.Spec.Containers[0].Image)
	}
	e.waitConditions("mine", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
}

// TestRollOutCountsABlockedChild: four zones under MaxUnavailable 1;
// zone-d, newly desired, is held by someone else's Deployment (not ready),
// and the template of the others changes at the same time. A child the
// set cannot have is as unavailable as a missing one, which pace counts
// as down: the others should wait. Before the change the pass stopped at
// the conflict; now holdBack never sees zone-d and zone-a goes down too.
func TestRollOutCountsABlockedChild(t *testing.T) {
	zones := []string{"zone-a", "zone-b", "zone-c"}
	all := zoneDeployments(append(zones, "zone-d")...)
	three := zoneDeployments(zones...)
	desired := func(ctx context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		if req.Object.Spec.Divisor > 0 {
			return all(ctx, req)
		}
		return three(ctx, req)
	}
	step := NewStep("zones", desired, []Kind{{Object: &appsv1.Deployment{}, MaxUnavailable: 1}})
	e := start(t, reconciler(step))
	ctx := t.Context()
	e.create("zones", 1, 0)
	e.waitImages(tags(zones, 0, "", "1"))
	for _, z := range zones {
		e.markAvailable(z)
	}
	e.waitConditions("zones", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
	theirs := theirDeployment(e.ns, "zone-d", map[string]string{"zone": "zone-d"})
	if err := e.c.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	e.setSpec("zones", 2, 1)
	e.waitConditions("zones", map[string]cond{conditions.TypeReady: {metav1.ConditionFalse, ReasonChildExists}})
	e.touch("zones", "blocked")
	if got := e.images(); got["zone-a"] != "1" {
		t.Errorf("zone-a was updated (images %v) while zone-d, desired, is held by someone else's Deployment that is not ready: 2 of 4 Deployments unavailable under MaxUnavailable 1", got)
	}
}

// TestUnownedChildWithoutLabelsIsNotAdopted: an unowned step with
// WithAdoption made a ConfigMap; someone strips the set labels from it.
// The step finds it by name, cannot tell it is its own (isOurs looks only
// at the labels for an unowned step, though the owner annotations are
// still there), marks it adopted, and once it is no longer desired gives
// it back instead of deleting it: an object bosun created is left behind.
func TestUnownedChildWithoutLabelsIsNotAdopted(t *testing.T) {
	desired := func(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		if req.Object.Spec.Value == 0 {
			return nil, nil
		}
		return []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: req.Object.Namespace, Name: "made"}, Data: map[string]string{"value": "x"}}}, nil
	}
	step := NewUnownedStep("spread", desired, []Kind{Of(&corev1.ConfigMap{})}, WithAdoption())
	e := start(t, reconciler(step))
	ctx := t.Context()
	e.create("spread", 1, 0)
	e.waitConditions("spread", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
	var cm corev1.ConfigMap
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "made"}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Annotations[annotationAdopted] != "" {
		t.Fatalf("a ConfigMap the step created is marked adopted: %v", cm.Annotations)
	}
	// Someone strips the set's labels.
	base := cm.DeepCopy()
	delete(cm.Labels, LabelSet)
	delete(cm.Labels, LabelOwner)
	if err := e.c.Patch(ctx, &cm, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(&cm), &cm); err != nil {
			return err
		}
		if cm.Labels[LabelSet] == "" {
			return errors.New("labels not put back yet")
		}
		return nil
	}, bosuntest.Timeout(30*time.Second))
	if cm.Annotations[annotationAdopted] != "" {
		t.Errorf("the step's own ConfigMap, its labels stripped, was taken over as someone else's: annotations %v", cm.Annotations)
	}
	e.setSpec("spread", 0, 0)
	bosuntest.Eventually(t, func(ctx context.Context) error {
		err := e.c.Get(ctx, client.ObjectKeyFromObject(&cm), &cm)
		if err == nil && cm.DeletionTimestamp.IsZero() {
			return fmt.Errorf("the ConfigMap the step created, no longer desired, is still there (labels %v, annotations %v), want it deleted", cm.Labels, cm.Annotations)
		}
		return client.IgnoreNotFound(err)
	}, bosuntest.Timeout(20*time.Second))
}

// TestQuietAroundAdoption: converged passes over an adopted child
// write nothing (the mark does not drift), nor do those after its release.
func TestQuietAroundAdoption(t *testing.T) {
	step := NewStep("web", webApp, webKinds(), WithAdoption())
	e := start(t, reconciler(step))
	ctx := t.Context()
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "cm-1"}, Data: map[string]string{"value": "old", "theirs": "kept"}}
	if err := e.c.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	e.create("mine", 2, 0)
	e.waitConditions("mine", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "2", "cm-1": "2"})
	e.touch("mine", "converged")
	e.writes.Reset()
	for i := range 3 {
		e.touch("mine", fmt.Sprint("adopted-", i))
	}
	if n := e.writes.Total(); n != 0 {
		t.Errorf("%d writes by passes over a converged set with an adopted child, want 0: %v", n, e.writes.Writes())
	}
	e.setSpec("mine", 1, 0)
	bosuntest.Eventually(t, func(ctx context.Context) error {
		var cm corev1.ConfigMap
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(theirs), &cm); err != nil {
			return err
		}
		if cm.Labels[LabelSet] != "" {
			return errors.New("not released yet")
		}
		return nil
	})
	e.waitConditions("mine", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
	e.touch("mine", "released")
	e.writes.Reset()
	for i := range 3 {
		e.touch("mine", fmt.Sprint("released-", i))
	}
	if n := e.writes.Total(); n != 0 {
		t.Errorf("%d writes by passes after the release, want 0: %v", n, e.writes.Writes())
	}
}

// theirDeployment is a Deployment someone else makes in ns, named name,
// of pods labelled lbls running their image.
func theirDeployment(ns, name string, lbls map[string]string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: lbls},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbls},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example/theirs:0"}}},
			},
		},
	}
}

// applyName returns the name of the object of an apply.
func applyName(obj runtime.ApplyConfiguration) string {
	switch o := obj.(type) {
	case interface{ GetName() string }:
		return o.GetName()
	case interface{ GetName() *string }:
		return ptr.Deref(o.GetName(), "")
	}
	return ""
}
