package children

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// TestAdoptionRecheckBudget checks that, with WithAdoption, an unlabelled
// ConfigMap of a desired child's name is adopted (the recheck of the
// parent must not refuse a legitimate adoption), a child whose owner
// reference a user removed while the parent lives is owned again, and a
// converged pass (a touch of the parent) reads nothing from the API
// server: the recheck costs one read only in a pass that adopts.
func TestAdoptionRecheckBudget(t *testing.T) {
	cp := shared.ControlPlane(t)
	var parentReads atomic.Int64
	base, err := client.NewWithWatch(cp.Config, client.Options{Scheme: cp.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	counting := interceptor.NewClient(base, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*testapi.Widget); ok {
				parentReads.Add(1)
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	step := NewStep("web", webApp, webKinds(), WithAdoption())
	r := reconciler(step)
	r.APIReader = counting
	e := start(t, r)
	e.createConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "cm-1"}, Data: map[string]string{"value": "theirs"}})
	w := e.create("mine", 2, 0)
	ready := map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}}
	e.waitConditions("mine", ready)
	owned := func(name string) error {
		cm := &corev1.ConfigMap{}
		if err := e.c.Get(t.Context(), client.ObjectKey{Namespace: e.ns, Name: name}, cm); err != nil {
			return err
		}
		if ctl := metav1.GetControllerOf(cm); ctl == nil || ctl.UID != w.UID {
			return fmt.Errorf("%s has controller %v, want the Widget %s", name, ctl, w.UID)
		}
		return nil
	}
	bosuntest.Eventually(t, func(context.Context) error { return owned("cm-1") })
	t.Logf("parent reads after adoption: %d", parentReads.Load())

	// Converged: touches bring passes that change nothing.
	before := parentReads.Load()
	passes := e.passCount("mine")
	e.touch("mine", "1")
	e.touch("mine", "2")
	bosuntest.Eventually(t, func(context.Context) error {
		if e.passCount("mine") < passes+2 {
			return errors.New("the touches brought no passes yet")
		}
		return nil
	})
	if got := parentReads.Load() - before; got != 0 {
		t.Errorf("converged passes read the parent from the API server %d times, want 0", got)
	}

	// A user removes the owner reference of cm-0 while the parent lives:
	// the step owns it again (one read of the parent).
	cm := &corev1.ConfigMap{}
	if err := e.c.Get(t.Context(), client.ObjectKey{Namespace: e.ns, Name: "cm-0"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.OwnerReferences = nil
	if err := e.c.Update(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	before = parentReads.Load()
	bosuntest.Eventually(t, func(context.Context) error { return owned("cm-0") })
	if got := parentReads.Load() - before; got > 2 {
		t.Errorf("owning cm-0 again read the parent %d times, want at most 2", got)
	}
}
