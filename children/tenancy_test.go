package children

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

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
// ConfigMap, without a change of the parent. Its backoff is still short
// here (one or two failures): TestBlockedChildHealsPromptly checks that
// the deletion, not the backoff, brings the pass.
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
// WithAdoption: it is applied over, labelled and owned; no longer
// desired, it is given back, with its maker's data, rather than deleted.
func TestAdoptionIsExplicit(t *testing.T) {
	step := NewStep("web", webApp, webKinds(), WithAdoption())
	e := start(t, reconciler(step))
	ctx := t.Context()
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "cm-0"}, Data: map[string]string{"value": "old", "theirs": "kept"}}
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

	// No longer desired, the adopted ConfigMap is given back, not
	// deleted: what the step applied goes, what its maker wrote stays.
	e.setSpec("mine", 0, 0)
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(theirs), &live); err != nil {
			return fmt.Errorf("the adopted ConfigMap, no longer desired: %w, want it given back", err)
		}
		if len(live.OwnerReferences) != 0 || len(live.Labels) != 0 || len(live.Annotations) != 0 {
			return fmt.Errorf("released ConfigMap: owners %+v, labels %v, annotations %v, want none", live.OwnerReferences, live.Labels, live.Annotations)
		}
		if want := map[string]string{"theirs": "kept"}; !maps.Equal(live.Data, want) {
			return fmt.Errorf("released ConfigMap holds %v, want %v", live.Data, want)
		}
		return nil
	})
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

// racer is a client wrapper that, on the first write (create or apply) of
// the ConfigMap name once armed, first makes a ConfigMap of that name on
// the API server with c, deleting the one there first when replace is
// set: the object another team makes in the moment between the step's
// read and its write.
type racer struct {
	c       client.Client
	name    string
	replace bool
	armed   atomic.Bool
	// made is the other team's ConfigMap, once made.
	made atomic.Pointer[corev1.ConfigMap]
}

// race makes the other team's ConfigMap before a write of the ConfigMap
// ns/name, if r is armed.
func (r *racer) race(ctx context.Context, kind, ns, name string) error {
	if kind != "ConfigMap" || name != r.name || !r.armed.CompareAndSwap(true, false) {
		return nil
	}
	if r.replace {
		ours := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if err := r.c.Delete(ctx, ours); err != nil {
			return err
		}
	}
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"team": "theirs"}},
		Data: map[string]string{"value": "theirs"}}
	if err := r.c.Create(ctx, theirs); err != nil {
		return err
	}
	r.made.Store(theirs)
	return nil
}

// wrap is the client wrapper.
func (r *racer) wrap(inner client.Client) client.Client {
	return interceptor.NewClient(inner.(client.WithWatch), interceptor.Funcs{
		Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			kind := obj.GetObjectKind().GroupVersionKind().Kind
			if _, ok := obj.(*corev1.ConfigMap); ok {
				kind = "ConfigMap"
			}
			if err := r.race(ctx, kind, obj.GetNamespace(), obj.GetName()); err != nil {
				return err
			}
			return cl.Create(ctx, obj, opts...)
		},
		Apply: func(ctx context.Context, cl client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			if u, ok := obj.(interface {
				GetKind() string
				GetNamespace() string
				GetName() string
			}); ok {
				if err := r.race(ctx, u.GetKind(), u.GetNamespace(), u.GetName()); err != nil {
					return err
				}
			}
			return cl.Apply(ctx, obj, opts...)
		},
	})
}

// untouched checks that the other team's ConfigMap the racer made keeps
// its resourceVersion, data, labels and owner references, and holds no
// field of the step's manager.
func (r *racer) untouched(e *env, when string) {
	e.t.Helper()
	theirs := r.made.Load()
	if theirs == nil {
		e.t.Fatalf("%s: the step wrote no %s: the race did not happen", when, r.name)
	}
	var live corev1.ConfigMap
	if err := e.c.Get(e.t.Context(), client.ObjectKeyFromObject(theirs), &live); err != nil {
		e.t.Fatalf("%s: the other team's ConfigMap: %v", when, err)
	}
	type shape struct {
		ResourceVersion string
		Data            map[string]string
		Labels          map[string]string
		Owners          []metav1.OwnerReference
	}
	want := shape{theirs.ResourceVersion, theirs.Data, theirs.Labels, nil}
	got := shape{live.ResourceVersion, live.Data, live.Labels, live.OwnerReferences}
	if diff := cmp.Diff(want, got); diff != "" {
		e.t.Errorf("%s: the other team's ConfigMap was written (-want +got):\n%s", when, diff)
	}
	for _, mf := range live.ManagedFields {
		if mf.Manager == "widget-children" {
			e.t.Errorf("%s: the other team's ConfigMap has fields of the step's manager: %s %s", when, mf.Operation, mf.FieldsV1)
		}
	}
}

// TestChildCreatedMeanwhileIsNotTakenOver lets another team create a
// ConfigMap with the name of a desired child after the step found no such
// object and before it writes the child: the step's write creates only,
// so it fails on the existing object instead of taking it over. The other
// team's ConfigMap keeps its resourceVersion, data, labels and owner
// references and holds no field of the step's manager, the parent is
// Ready False with ReasonChildExists, and deleting the parent leaves the
// ConfigMap in place.
func TestChildCreatedMeanwhileIsNotTakenOver(t *testing.T) {
	step := NewStep("web", webApp, webKinds())
	r := &racer{c: shared.ControlPlane(t).Client, name: "cm-0"}
	r.armed.Store(true)
	e := start(t, reconciler(step), r.wrap)
	w := e.create("mine", 2, 0)
	e.waitConditions("mine", map[string]cond{
		"ConfigMapReady":     {metav1.ConditionFalse, ReasonChildExists},
		conditions.TypeReady: {metav1.ConditionFalse, ReasonChildExists},
	})
	r.untouched(e, "blocked")
	e.deleteAndWaitGone(w)
	r.untouched(e, "after the parent was deleted")
}

// TestChildReplacedMeanwhileIsNotWritten lets another team delete a child
// the step is about to update and make its own ConfigMap of that name, in
// the moment between the step's read and its write: the step's apply
// carries the UID of the child it read, so it fails instead of taking the
// new object over. The other team's ConfigMap is left as it is and the
// parent is Ready False with ReasonChildExists.
func TestChildReplacedMeanwhileIsNotWritten(t *testing.T) {
	step := NewStep("web", webApp, webKinds())
	r := &racer{c: shared.ControlPlane(t).Client, name: "cm-0", replace: true}
	e := start(t, reconciler(step), r.wrap)
	w := e.create("mine", 2, 0)
	e.waitConditions("mine", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
	// A change of the spec changes every ConfigMap: the apply of cm-0
	// meets the other team's.
	r.armed.Store(true)
	e.setSpec("mine", 3, 0)
	e.waitConditions("mine", map[string]cond{
		"ConfigMapReady":     {metav1.ConditionFalse, ReasonChildExists},
		conditions.TypeReady: {metav1.ConditionFalse, ReasonChildExists},
	})
	r.untouched(e, "blocked")
	e.deleteAndWaitGone(w)
	r.untouched(e, "after the parent was deleted")
}

// slowRetries is a rate limiter whose first retry of an object comes
// after ten minutes, and that counts the retries it delays: the backoff of
// a controller whose parent has already failed many times.
type slowRetries struct {
	workqueue.TypedRateLimiter[reconcile.Request]
	delayed atomic.Int64
}

func newSlowRetries() *slowRetries {
	return &slowRetries{TypedRateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](10*time.Minute, time.Hour)}
}

// When counts the retry and delays it by ten minutes or more.
func (l *slowRetries) When(r reconcile.Request) time.Duration {
	l.delayed.Add(1)
	return l.TypedRateLimiter.When(r)
}

// TestBlockedChildHealsPromptly blocks the ConfigMap cm-1 of a parent with
// an object the set may not take over, on a controller whose retries come
// ten minutes after a failure, and then removes the blocking object or
// releases it: the step watches what blocks a child, so the parent
// converges within seconds, not after its backoff (or never, for a
// ChildConflict, which is not retried). Under CacheSetsOnly the blocking
// object is not in the cache, and the step looks it up on the API server
// every few seconds instead.
func TestBlockedChildHealsPromptly(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		// setsOnly limits the cache of ConfigMaps with CacheSetsOnly.
		setsOnly bool
		// block makes the object that blocks cm-1.
		block func(e *env) *corev1.ConfigMap
		// reason is the reason of Ready while cm-1 is blocked.
		reason conditions.Reason
		// unblock deletes or releases the blocking object.
		unblock func(e *env, blocker *corev1.ConfigMap)
	}{
		{
			name: "an object the set did not create, deleted", block: unlabelled, reason: ReasonChildExists, unblock: deleteObject,
		},
		{
			name: "an object the set did not create, deleted, under CacheSetsOnly", setsOnly: true,
			block: unlabelled, reason: ReasonChildExists, unblock: deleteObject,
		},
		{
			name: "an object controlled by another, deleted", block: controlled, reason: ReasonChildConflict, unblock: deleteObject,
		},
		{
			name: "an object controlled by another, released, with adoption", opts: []Option{WithAdoption()},
			block: controlled, reason: ReasonChildConflict, unblock: release,
		},
		{
			name: "a member of another set, deleted, under CacheSetsOnly", setsOnly: true,
			block: otherSet, reason: ReasonChildConflict, unblock: deleteObject,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step := NewStep("web", webApp, webKinds(), tt.opts...)
			retries := newSlowRetries()
			h := harness{build: func(b *bosun.Builder[*testapi.Widget]) *bosun.Builder[*testapi.Widget] {
				return b.WithOptions(controller.Options{RateLimiter: retries})
			}}
			if tt.setsOnly {
				h.configure = func(o *ctrl.Options) { CacheSetsOnly(&o.Cache, &corev1.ConfigMap{}) }
			}
			e := startHarness(t, reconciler(step), h)
			blocker := tt.block(e)
			e.create("mine", 2, 0)
			e.waitConditions("mine", map[string]cond{conditions.TypeReady: {metav1.ConditionFalse, tt.reason}})
			if tt.reason == ReasonChildExists {
				// The failure is retried, after ten minutes.
				bosuntest.Eventually(t, func(context.Context) error {
					if retries.delayed.Load() == 0 {
						return errors.New("the blocked parent is not waiting on its backoff yet")
					}
					return nil
				})
			}
			tt.unblock(e, blocker)
			e.waitConditions("mine", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
			e.waitConfigMaps(e.ns, map[string]string{"cm-0": "2", "cm-1": "2"})
		})
	}
}

// unlabelled makes a ConfigMap cm-1 with no controller and no set label.
func unlabelled(e *env) *corev1.ConfigMap {
	e.t.Helper()
	return e.createConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "cm-1"}, Data: map[string]string{"value": "theirs"}})
}

// controlled makes a ConfigMap cm-1 that the ConfigMap holder controls.
func controlled(e *env) *corev1.ConfigMap {
	e.t.Helper()
	holder := e.createConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "holder"}})
	return e.createConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "cm-1",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: holder.Name, UID: holder.UID, Controller: ptr.To(true)}}},
		Data: map[string]string{"value": "theirs"}})
}

// otherSet makes a ConfigMap cm-1 labelled for the set of another parent.
func otherSet(e *env) *corev1.ConfigMap {
	e.t.Helper()
	return e.createConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "cm-1",
		Labels: map[string]string{LabelSet: "web", LabelOwner: "5b0b7b4e-0000-4000-8000-000000000002"}},
		Data: map[string]string{"value": "theirs"}})
}

// createConfigMap creates cm and returns it.
func (e *env) createConfigMap(cm *corev1.ConfigMap) *corev1.ConfigMap {
	e.t.Helper()
	if err := e.c.Create(e.t.Context(), cm); err != nil {
		e.t.Fatalf("creating configmap %s: %v", cm.Name, err)
	}
	return cm
}

// deleteObject deletes the blocking object.
func deleteObject(e *env, blocker *corev1.ConfigMap) {
	e.t.Helper()
	if err := e.c.Delete(e.t.Context(), blocker); err != nil {
		e.t.Fatal(err)
	}
}

// release removes the owner references of the blocking object, as its
// controller does when it lets go of it.
func release(e *env, blocker *corev1.ConfigMap) {
	e.t.Helper()
	base := blocker.DeepCopy()
	blocker.OwnerReferences = nil
	if err := e.c.Patch(e.t.Context(), blocker, client.MergeFrom(base)); err != nil {
		e.t.Fatal(err)
	}
}
