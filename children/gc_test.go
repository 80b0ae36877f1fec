package children

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// The tests of this file need the garbage collector and the namespace
// controller of the shared control plane (Options.ControllerManager, set in
// main_test.go): without them, every one of them times out.

// gcTimeout bounds the waits on the garbage collector.
const gcTimeout = time.Minute

// namespaceTimeout bounds the waits on the namespace controller, which
// looks at a deleted namespace only after a few seconds, and again some
// seconds later while objects with finalizers remain.
const namespaceTimeout = 2 * time.Minute

// wantGone turns the error of reading what into the error of a wait for it
// to be gone: nil once it is not found.
func wantGone(what string, err error) error {
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("reading %s: %w", what, err)
	default:
		return fmt.Errorf("%s still exists", what)
	}
}

// member is a child of the web set, by kind and name, as the tests list
// them.
type member struct {
	Kind, Name string
	// Owned is whether it still has owner references.
	Owned bool
}

// members returns the objects in the test's namespace of the kinds of
// webApp that carry the set label.
func (e *env) members(ctx context.Context) ([]member, error) {
	var out []member
	for _, l := range []struct {
		kind string
		list client.ObjectList
	}{
		{"ConfigMap", &corev1.ConfigMapList{}}, {"Deployment", &appsv1.DeploymentList{}}, {"Service", &corev1.ServiceList{}},
	} {
		if err := e.c.List(ctx, l.list, client.InNamespace(e.ns), client.HasLabels{LabelSet}); err != nil {
			return nil, err
		}
		err := meta.EachListItem(l.list, func(obj runtime.Object) error {
			o, err := meta.Accessor(obj)
			if err != nil {
				return err
			}
			out = append(out, member{Kind: l.kind, Name: o.GetName(), Owned: len(o.GetOwnerReferences()) > 0})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// waitMembers waits until members is want.
func (e *env) waitMembers(want []member) {
	e.t.Helper()
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		got, err := e.members(ctx)
		if err != nil {
			return err
		}
		if diff := cmp.Diff(want, got); diff != "" {
			return fmt.Errorf("children (-want +got):\n%s", diff)
		}
		return nil
	}, bosuntest.Timeout(gcTimeout))
}

// TestGarbageCollectorCollectsChildren deletes a parent whose owned
// children are ConfigMaps, a Deployment and a Service, the last two of the
// parent's name. With the default (background) propagation the garbage
// collector deletes them after the parent is gone, and the passes their
// deletions bring make none of them again; with orphan propagation it
// keeps them and removes their owner references.
func TestGarbageCollectorCollectsChildren(t *testing.T) {
	tests := []struct {
		name string
		// opts are the options of the parent's delete.
		opts []client.DeleteOption
		want []member
	}{
		{name: "background", want: nil},
		{
			name: "orphan",
			opts: []client.DeleteOption{client.PropagationPolicy(metav1.DeletePropagationOrphan)},
			want: []member{
				{Kind: "ConfigMap", Name: "cm-0"}, {Kind: "ConfigMap", Name: "cm-1"},
				{Kind: "Deployment", Name: "web"}, {Kind: "Service", Name: "web"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step := NewStep("web", webApp, webKinds())
			e := start(t, reconciler(step))
			w := e.create("web", 2, 1)
			e.waitMembers([]member{
				{Kind: "ConfigMap", Name: "cm-0", Owned: true}, {Kind: "ConfigMap", Name: "cm-1", Owned: true},
				{Kind: "Deployment", Name: "web", Owned: true}, {Kind: "Service", Name: "web", Owned: true},
			})

			e.writes.Reset()
			if err := e.c.Delete(t.Context(), w, tt.opts...); err != nil {
				t.Fatal(err)
			}
			bosuntest.Eventually(t, func(ctx context.Context) error {
				return wantGone("the parent", e.c.Get(ctx, client.ObjectKeyFromObject(w), &testapi.Widget{}))
			}, bosuntest.Timeout(gcTimeout))
			e.waitMembers(tt.want)
			for _, wr := range e.writes.Writes() {
				switch wr.Verb {
				case bosuntest.VerbDelete:
					t.Errorf("the step deleted %s; the garbage collector should have", wr)
				case bosuntest.VerbApply, bosuntest.VerbCreate:
					t.Errorf("the step wrote %s after its parent's delete", wr)
				}
			}
		})
	}
}

// TestForegroundDeleteWaitsForChildren deletes a parent in the foreground
// while one child, which the step marks blockOwnerDeletion, is held by a
// finalizer of the test's: the garbage collector deletes the children, and
// the parent stays, with the foregroundDeletion finalizer, until the held
// child is gone.
func TestForegroundDeleteWaitsForChildren(t *testing.T) {
	const hold = "children.test.bosun.dev/hold"
	step := NewStep("web", webApp, webKinds())
	e := start(t, reconciler(step))
	ctx := t.Context()
	w := e.create("fg", 2, 0)
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "2", "cm-1": "2"})

	held := &corev1.ConfigMap{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "cm-0"}, held); err != nil {
		t.Fatal(err)
	}
	if refs := held.OwnerReferences; len(refs) != 1 || refs[0].BlockOwnerDeletion == nil || !*refs[0].BlockOwnerDeletion {
		t.Fatalf("cm-0 owner references = %+v, want one with blockOwnerDeletion", refs)
	}
	held.Finalizers = append(held.Finalizers, hold)
	if err := e.c.Update(ctx, held); err != nil {
		t.Fatal(err)
	}

	if err := e.c.Delete(ctx, w, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := wantGone("cm-1", e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "cm-1"}, &corev1.ConfigMap{})); err != nil {
			return err
		}
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(held), held); err != nil {
			return err
		}
		if held.DeletionTimestamp.IsZero() {
			return errors.New("cm-0 is not being deleted yet")
		}
		return nil
	}, bosuntest.Timeout(gcTimeout))
	parent := &testapi.Widget{}
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(w), parent); err != nil {
		t.Fatalf("the parent is gone while cm-0 blocks its deletion: %v", err)
	}
	if diff := cmp.Diff([]string{metav1.FinalizerDeleteDependents}, parent.Finalizers); diff != "" {
		t.Errorf("parent finalizers while it waits (-want +got):\n%s", diff)
	}

	held.Finalizers = nil
	if err := e.c.Update(ctx, held); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		return wantGone("the parent", e.c.Get(ctx, client.ObjectKeyFromObject(w), &testapi.Widget{}))
	}, bosuntest.Timeout(gcTimeout))
}

// TestNamespaceDeletionReleasesObjects deletes the namespace of Widgets
// whose reconciler keeps children in another namespace and so holds a
// finalizer on them: the namespace controller deletes the Widgets, the
// operator cleans up their children elsewhere and releases them, and the
// namespace disappears.
func TestNamespaceDeletionReleasesObjects(t *testing.T) {
	cp := shared.ControlPlane(t)
	elsewhere := bosuntest.Namespace(t, cp.Client)
	desired := func(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		name := req.Object.Namespace + "-" + req.Object.Name
		return []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: elsewhere, Name: name}, Data: map[string]string{"value": "x"}}}, nil
	}
	step := NewUnownedStep("spread", desired, []Kind{Of(&corev1.ConfigMap{})})
	e := start(t, reconciler(step))
	ctx := t.Context()
	names := []string{"a", "b"}
	want := map[string]string{}
	for _, n := range names {
		e.create(n, 1, 0)
		e.waitConditions(n, map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
		want[e.ns+"-"+n] = "x"
	}
	e.waitConfigMaps(elsewhere, want)
	for _, n := range names {
		w := &testapi.Widget{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: n}, w); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{finalizer}, w.Finalizers); diff != "" {
			t.Fatalf("widget %s finalizers (-want +got):\n%s", n, diff)
		}
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}
	if err := e.c.Delete(ctx, ns); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		err := e.c.Get(ctx, client.ObjectKeyFromObject(ns), ns)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		var widgets testapi.WidgetList
		if err := e.c.List(ctx, &widgets, client.InNamespace(e.ns)); err != nil {
			return err
		}
		return fmt.Errorf("namespace %s is %s with %d Widgets left", e.ns, ns.Status.Phase, len(widgets.Items))
	}, bosuntest.Timeout(namespaceTimeout))
	e.waitConfigMaps(elsewhere, map[string]string{})
}

// TestNamespaceDeletedWhenTestEnds checks that bosuntest.Namespace deletes
// its namespace when its test ends, since the namespace controller runs.
func TestNamespaceDeletedWhenTestEnds(t *testing.T) {
	cp := shared.ControlPlane(t)
	var ns string
	t.Run("user", func(t *testing.T) {
		ns = bosuntest.Namespace(t, cp.Client)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "left-behind"}}
		if err := cp.Client.Create(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
	})
	bosuntest.Eventually(t, func(ctx context.Context) error {
		got := &corev1.Namespace{}
		err := cp.Client.Get(ctx, client.ObjectKey{Name: ns}, got)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("namespace %s is %s", ns, got.Status.Phase)
	}, bosuntest.Timeout(namespaceTimeout))
}

// TestMassDeletionHoldsUnownedChildren deletes the namespace of 8
// Widgets whose children live in another namespace, where the garbage
// collector cannot take them, under a mass-deletion breaker of count 3:
// at most 3 Widgets' children are deleted, the other Widgets are held
// (DeletionHeld) with their children kept, and once they are annotated
// bosun.dev/allow-mass-deletion=true, every child goes and the namespace
// with them.
func TestMassDeletionHoldsUnownedChildren(t *testing.T) {
	cp := shared.ControlPlane(t)
	elsewhere := bosuntest.Namespace(t, cp.Client)
	desired := func(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		name := req.Object.Namespace + "-" + req.Object.Name
		return []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: elsewhere, Name: name}, Data: map[string]string{"value": "x"}}}, nil
	}
	r := reconciler(NewUnownedStep("spread", desired, []Kind{Of(&corev1.ConfigMap{})}))
	r.Options.MassDeletion.Count = 3
	e := start(t, r)
	ctx := t.Context()
	want := map[string]string{}
	for i := range 8 {
		n := fmt.Sprintf("w%d", i)
		e.create(n, 1, 0)
		want[e.ns+"-"+n] = "x"
	}
	e.waitConfigMaps(elsewhere, want)

	if err := e.c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}); err != nil {
		t.Fatal(err)
	}
	var held []string
	bosuntest.Eventually(t, func(ctx context.Context) error {
		var widgets testapi.WidgetList
		if err := e.c.List(ctx, &widgets, client.InNamespace(e.ns)); err != nil {
			return err
		}
		held = held[:0]
		for _, w := range widgets.Items {
			c := conditions.Find(w.Status.Conditions, conditions.TypeDeletionBlocked)
			if w.DeletionTimestamp == nil || c == nil || c.Reason != string(conditions.ReasonDeletionHeld) {
				return fmt.Errorf("widget %s neither gone nor held: DeletionBlocked %v", w.Name, c)
			}
			held = append(held, w.Name)
		}
		return nil
	}, bosuntest.Timeout(namespaceTimeout))
	if len(held) < 8-3 {
		t.Errorf("%d Widgets held, want at least %d: the breaker lets at most 3 cleanups go on", len(held), 8-3)
	}
	var cms corev1.ConfigMapList
	if err := e.c.List(ctx, &cms, client.InNamespace(elsewhere)); err != nil {
		t.Fatal(err)
	}
	kept := map[string]bool{}
	for _, cm := range cms.Items {
		kept[cm.Name] = true
	}
	for _, n := range held {
		if !kept[e.ns+"-"+n] {
			t.Errorf("widget %s held but its child deleted", n)
		}
	}

	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"true"}}}`, bosun.AnnotationAllowMassDeletion)
	for _, n := range held {
		w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: n}}
		if err := e.c.Patch(ctx, w, client.RawPatch(types.MergePatchType, patch)); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		return wantGone("the namespace", e.c.Get(ctx, client.ObjectKey{Name: e.ns}, &corev1.Namespace{}))
	}, bosuntest.Timeout(namespaceTimeout))
	e.waitConfigMaps(elsewhere, map[string]string{})
}
