package children

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// TestExistingObjectIsNotTakenOver puts a ConfigMap with the name of a
// desired child in place before the parent exists, with no controller and
// no set label. The step does not apply over it, label it or prune it:
// ConfigMapReady and Ready are False with ReasonChildExists, the object is
// left exactly as it was, and deleting the parent leaves it in place. Once
// the user removes it, the set creates its own.
func TestExistingObjectIsNotTakenOver(t *testing.T) {
	step := NewStep("web", webApp, webKinds())
	e := start(t, reconciler(step))
	ctx := t.Context()
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "cm-0", Labels: map[string]string{"team": "theirs"}},
		Data: map[string]string{"value": "theirs"}}
	if err := e.c.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	w := e.create("mine", 2, 0)
	got := e.waitConditions("mine", map[string]cond{
		"ConfigMapReady":     {metav1.ConditionFalse, ReasonChildExists},
		conditions.TypeReady: {metav1.ConditionFalse, ReasonChildExists},
	})
	if c := conditions.Find(got.Status.Conditions, "ConfigMapReady"); c == nil || !strings.Contains(c.Message, "cm-0") {
		t.Errorf("ConfigMapReady = %+v, want its message to name cm-0", c)
	}
	var live corev1.ConfigMap
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(theirs), &live); err != nil {
		t.Fatal(err)
	}
	if live.ResourceVersion != theirs.ResourceVersion {
		t.Errorf("the existing ConfigMap was written: resourceVersion %s, want %s (labels %v, owners %v, data %v)",
			live.ResourceVersion, theirs.ResourceVersion, live.Labels, live.OwnerReferences, live.Data)
	}
	for _, mf := range live.ManagedFields {
		if mf.Manager == "widget-children" {
			t.Errorf("the existing ConfigMap has fields managed by the step: %+v", mf)
		}
	}

	// Deleting the parent leaves the ConfigMap it did not create.
	e.deleteAndWaitGone(w)
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(theirs), &live); err != nil {
		t.Fatalf("the existing ConfigMap is gone after the parent was deleted: %v", err)
	}
	if live.ResourceVersion != theirs.ResourceVersion {
		t.Errorf("the existing ConfigMap was written after the parent was deleted")
	}
}

// TestExistingObjectIsHealedWhenRemoved checks that a parent blocked by a
// ConfigMap it did not create converges once the user deletes that
// ConfigMap, without a change of the parent.
func TestExistingObjectIsHealedWhenRemoved(t *testing.T) {
	step := NewStep("web", webApp, webKinds())
	e := start(t, reconciler(step))
	ctx := t.Context()
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "cm-1"}, Data: map[string]string{"value": "theirs"}}
	if err := e.c.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	e.create("mine", 2, 0)
	e.waitConditions("mine", map[string]cond{conditions.TypeReady: {metav1.ConditionFalse, ReasonChildExists}})
	if err := e.c.Delete(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	e.waitConditions("mine", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "2", "cm-1": "2"})
}

// TestAdoptionIsExplicit takes over an existing ConfigMap with
// WithAdoption: it is applied over, labelled and owned.
func TestAdoptionIsExplicit(t *testing.T) {
	step := NewStep("web", webApp, webKinds(), WithAdoption())
	e := start(t, reconciler(step))
	ctx := t.Context()
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "cm-0"}, Data: map[string]string{"value": "old"}}
	if err := e.c.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	w := e.create("mine", 1, 0)
	e.waitConditions("mine", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "1"})
	var live corev1.ConfigMap
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(theirs), &live); err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(&live, w) || live.Labels[LabelOwner] != string(w.UID) {
		t.Errorf("adopted ConfigMap: owners %+v, labels %v, want it controlled and labelled", live.OwnerReferences, live.Labels)
	}
}

// TestUnownedCleanupReadsTheServer deletes a parent whose unowned child the
// cache never showed: Cleanup reads the API server, deletes the child, and
// only then releases the finalizer, so nothing is leaked.
func TestUnownedCleanupReadsTheServer(t *testing.T) {
	cp := shared.ControlPlane(t)
	elsewhere := bosuntest.Namespace(t, cp.Client)
	desired := func(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		return []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: elsewhere, Name: req.Object.Name}, Data: map[string]string{"value": "x"}}}, nil
	}
	step := NewUnownedStep("spread", desired, []Kind{Of(&corev1.ConfigMap{})})
	// The cache never shows ConfigMaps: every read of them through the
	// manager's client finds nothing.
	until := time.Now().Add(time.Hour)
	e := start(t, reconciler(step), func(c client.Client) client.Client { return blindReads(c, &until) })
	ctx := t.Context()
	w := e.create("spread", 0, 0)
	bosuntest.Eventually(t, func(ctx context.Context) error {
		return e.c.Get(ctx, client.ObjectKey{Namespace: elsewhere, Name: "spread"}, &corev1.ConfigMap{})
	})
	e.deleteAndWaitGone(w)
	err := e.c.Get(ctx, client.ObjectKey{Namespace: elsewhere, Name: "spread"}, &corev1.ConfigMap{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the unowned child outlived its parent (leaked): %v", err)
	}
}

// TestDesiredFuncPanicIsRecovered runs a desired-set function that panics
// for one parent: that parent shows Ready False with reason Panic and gets
// no child, and a sibling in the same controller converges.
func TestDesiredFuncPanicIsRecovered(t *testing.T) {
	desired := func(ctx context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		if req.Object.Spec.Value == 13 {
			panic("unlucky")
		}
		return webApp(ctx, req)
	}
	step := NewStep("web", desired, webKinds())
	e := start(t, reconciler(step))
	e.create("unlucky", 13, 0)
	e.create("fine", 1, 0)
	e.waitConditions("unlucky", map[string]cond{conditions.TypeReady: {metav1.ConditionFalse, conditions.ReasonPanic}})
	e.waitConditions("fine", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "1"})
}

// TestChildOfAnotherParentIsAConflict puts a ConfigMap with the name of a
// desired child in place, labelled for the same set but for another
// parent's UID and with no controller: the step reports ChildConflict and
// leaves it exactly as it is, also when the parent is deleted.
func TestChildOfAnotherParentIsAConflict(t *testing.T) {
	step := NewStep("web", webApp, webKinds())
	e := start(t, reconciler(step))
	ctx := t.Context()
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "cm-0",
		Labels: map[string]string{LabelSet: "web", LabelOwner: "5b0b7b4e-0000-4000-8000-000000000001"}},
		Data: map[string]string{"value": "theirs"}}
	if err := e.c.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	w := e.create("mine", 1, 0)
	e.waitConditions("mine", map[string]cond{conditions.TypeReady: {metav1.ConditionFalse, ReasonChildConflict}})
	e.deleteAndWaitGone(w)
	var live corev1.ConfigMap
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(theirs), &live); err != nil {
		t.Fatalf("the other parent's ConfigMap is gone: %v", err)
	}
	if live.ResourceVersion != theirs.ResourceVersion {
		t.Errorf("the other parent's ConfigMap was written: labels %v, owners %v, data %v", live.Labels, live.OwnerReferences, live.Data)
	}
}

// TestPruneSparesObjectsControlledByAnother labels a ConfigMap with the
// set's labels and this parent's UID while another object controls it:
// the step never created it, so a pass that prunes does not delete it.
func TestPruneSparesObjectsControlledByAnother(t *testing.T) {
	step := NewStep("web", webApp, webKinds())
	e := start(t, reconciler(step))
	ctx := t.Context()
	w := e.create("mine", 1, 0)
	e.waitConditions("mine", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
	holder := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "holder"}}
	if err := e.c.Create(ctx, holder); err != nil {
		t.Fatal(err)
	}
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "theirs",
		Labels:          map[string]string{LabelSet: "web", LabelOwner: string(w.UID)},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: holder.Name, UID: holder.UID, Controller: ptr.To(true)}}},
		Data: map[string]string{"value": "theirs"}}
	if err := e.c.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	// A change of the spec makes a pass that applies and prunes; its status
	// is written after both.
	e.setSpec("mine", 2, 0)
	e.waitConditions("mine", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "2", "cm-1": "2", "theirs": "theirs"})
	var live corev1.ConfigMap
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(theirs), &live); err != nil {
		t.Fatalf("the ConfigMap another object controls was pruned: %v", err)
	}
	if live.ResourceVersion != theirs.ResourceVersion {
		t.Errorf("the ConfigMap another object controls was written: labels %v, owners %v", live.Labels, live.OwnerReferences)
	}
}

// TestGeneratePanicIsRecovered runs a Generating reconciler whose generate
// function sets the status and then panics for one parent: that parent
// shows Ready False with reason Panic, its status edit is not saved and it
// gets no child; a sibling converges.
func TestGeneratePanicIsRecovered(t *testing.T) {
	generate := func(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		w := req.Object
		w.Status.Result = w.Spec.Value * 10
		if w.Spec.Value == 13 {
			panic("unlucky")
		}
		return []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "gen-" + w.Name}, Data: map[string]string{"value": fmt.Sprint(w.Spec.Value)}}}, nil
	}
	r := Generating("gen", []Kind{Of(&corev1.ConfigMap{})}, generate)
	e := start(t, r)
	e.create("unlucky", 13, 0)
	e.create("fine", 2, 0)
	w := e.waitConditions("unlucky", map[string]cond{conditions.TypeReady: {metav1.ConditionFalse, conditions.ReasonPanic}})
	if w.Status.Result != 0 {
		t.Errorf("status.result = %d after a panic, want the edit discarded", w.Status.Result)
	}
	w = e.waitConditions("fine", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
	if w.Status.Result != 20 {
		t.Errorf("sibling status.result = %d, want 20", w.Status.Result)
	}
	e.waitConfigMaps(e.ns, map[string]string{"gen-fine": "2"})
}

// TestExistingObjectUnseenByTheCacheIsNotTakenOver runs the step on a
// cache that never shows ConfigMaps, with a ConfigMap of a desired child's
// name already on the server: the step checks the server before it
// creates, reports ChildExists and leaves the object as it is.
func TestExistingObjectUnseenByTheCacheIsNotTakenOver(t *testing.T) {
	step := NewStep("web", webApp, webKinds())
	until := time.Now().Add(time.Hour)
	e := start(t, reconciler(step), func(c client.Client) client.Client { return blindReads(c, &until) })
	ctx := t.Context()
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "cm-0"}, Data: map[string]string{"value": "theirs"}}
	if err := e.c.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	e.create("mine", 1, 0)
	e.waitConditions("mine", map[string]cond{conditions.TypeReady: {metav1.ConditionFalse, ReasonChildExists}})
	var live corev1.ConfigMap
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(theirs), &live); err != nil {
		t.Fatal(err)
	}
	if live.ResourceVersion != theirs.ResourceVersion {
		t.Errorf("the existing ConfigMap was written: labels %v, owners %v, data %v", live.Labels, live.OwnerReferences, live.Data)
	}
}

// deleteAndWaitGone deletes the Widget w and waits until it is gone, its
// finalizer released.
func (e *env) deleteAndWaitGone(w *testapi.Widget) {
	e.t.Helper()
	if err := e.c.Delete(e.t.Context(), w); err != nil {
		e.t.Fatal(err)
	}
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(w), &testapi.Widget{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("widget: %w, want it gone", err)
		}
		return nil
	})
}
