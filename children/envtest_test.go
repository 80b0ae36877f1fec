package children

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// availableStatus is the status a deployment controller writes for a
// Deployment of the given generation once its n replicas are all updated
// and available: the counts, Available True and Progressing True with the
// reason NewReplicaSetAvailable (which kstatus waits for, since the API
// server gives every Deployment a progress deadline).
func availableStatus(generation int64, n int32) appsv1.DeploymentStatus {
	return appsv1.DeploymentStatus{
		ObservedGeneration: generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable", Message: "Deployment has minimum availability."},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable", Message: "ReplicaSet has successfully progressed."},
		},
	}
}

// markAvailable writes the status a deployment controller would write for
// a Deployment whose replicas are all up (the control plane runs no
// deployment controller), once the step has applied the Deployment.
func (e *env) markAvailable(name string) {
	e.t.Helper()
	e.setDeploymentStatus(name, func(d *appsv1.Deployment) appsv1.DeploymentStatus {
		return availableStatus(d.Generation, *d.Spec.Replicas)
	})
}

// setDeploymentStatus writes the status that st returns for the Deployment
// name as the API server has it, once the step has applied it.
func (e *env) setDeploymentStatus(name string, st func(d *appsv1.Deployment) appsv1.DeploymentStatus) {
	e.t.Helper()
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		d := &appsv1.Deployment{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: name}, d); err != nil {
			return fmt.Errorf("reading deployment %s: %w", name, err)
		}
		d.Status = st(d)
		if err := e.c.Status().Update(ctx, d); err != nil {
			return fmt.Errorf("updating deployment status: %w", err)
		}
		return nil
	}, bosuntest.Timeout(30*time.Second))
}

// TestChildrenLifecycle creates a Widget whose set holds ConfigMaps, a
// Deployment and a Service: they are created owned by it and labelled,
// Ready follows the Deployment's availability, a change of the spec
// updates exactly the children it changes, fewer ConfigMaps prune the
// others (but one annotated to be kept), and drift is undone.
func TestChildrenLifecycle(t *testing.T) {
	step := NewStep("web", webApp, webKinds())
	e := start(t, reconciler(step))
	ctx := t.Context()
	w := e.create("shop", 3, 2)

	notAvailable := map[string]cond{
		"ConfigMapReady":     {metav1.ConditionTrue, ReasonReady},
		"ServiceReady":       {metav1.ConditionTrue, ReasonReady},
		"DeploymentReady":    {metav1.ConditionFalse, ReasonNotReady},
		conditions.TypeReady: {metav1.ConditionFalse, ReasonNotReady},
	}
	e.waitConditions("shop", notAvailable)
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "3", "cm-1": "3", "cm-2": "3"})
	// The first passes write each child once and the status once.
	wantWrites := map[string]int{"apply ConfigMap": 3, "apply Deployment": 1, "apply Service": 1, "patch status Widget": 1}
	if diff := cmp.Diff(wantWrites, e.writes.Counts()); diff != "" {
		t.Errorf("writes to converge (-want +got):\n%s", diff)
	}
	var cm corev1.ConfigMap
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "cm-0"}, &cm); err != nil {
		t.Fatalf("reading cm-0: %v", err)
	}
	if !metav1.IsControlledBy(&cm, w) {
		t.Errorf("cm-0 owner references = %+v, want the Widget as controller", cm.OwnerReferences)
	}
	if diff := cmp.Diff(map[string]string{LabelSet: "web", LabelOwner: string(w.UID)}, cm.Labels); diff != "" {
		t.Errorf("cm-0 labels (-want +got):\n%s", diff)
	}
	var fieldManagers []string
	for _, mf := range cm.ManagedFields {
		fieldManagers = append(fieldManagers, string(mf.Operation)+" "+mf.Manager)
	}
	if diff := cmp.Diff([]string{"Apply widget-children"}, fieldManagers); diff != "" {
		t.Errorf("cm-0 field managers (-want +got):\n%s", diff)
	}

	// The Deployment becomes available: so does the Widget.
	e.markAvailable("web")
	ready := map[string]cond{
		"DeploymentReady":    {metav1.ConditionTrue, ReasonReady},
		conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded},
	}
	e.waitConditions("shop", ready)

	// A change of the spec that changes every ConfigMap and the
	// Deployment's replicas: those are applied, the Service is not. The
	// count starts once the passes that led to Ready have ended, and is
	// read once those of the change have.
	e.touch("shop", "before-change")
	e.writes.Reset()
	e.setSpec("shop", 4, 2)
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "4", "cm-1": "4", "cm-2": "4", "cm-3": "4"})
	e.waitConditions("shop", map[string]cond{"ConfigMapReady": {metav1.ConditionTrue, ReasonReady}})
	e.touch("shop", "after-change")
	if got := e.writes.Counts()["apply ConfigMap"]; got != 4 {
		t.Errorf("%d ConfigMap applies after the change, want 4: %v", got, e.writes.Writes())
	}
	if got := e.writes.Counts()["apply Service"] + e.writes.Counts()["apply Deployment"]; got != 0 {
		t.Errorf("%d applies of the unchanged Service and Deployment, want 0: %v", got, e.writes.Writes())
	}

	// Fewer ConfigMaps: the extra ones are pruned, but cm-3, annotated to
	// be kept, stays.
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "cm-3"}, &cm); err != nil {
		t.Fatalf("reading cm-3: %v", err)
	}
	base := cm.DeepCopy()
	cm.Annotations[AnnotationPrune] = "false"
	if err := e.c.Patch(ctx, &cm, client.MergeFrom(base)); err != nil {
		t.Fatalf("annotating cm-3: %v", err)
	}
	e.setSpec("shop", 1, 2)
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "1", "cm-3": "4"})

	// Drift: a value changed behind the step's back is put back, and a
	// label removed is restored.
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "cm-0"}, &cm); err != nil {
		t.Fatalf("reading cm-0: %v", err)
	}
	cm.Data["value"] = "tampered"
	if err := e.c.Update(ctx, &cm); err != nil {
		t.Fatalf("tampering with cm-0: %v", err)
	}
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "1", "cm-3": "4"})

	// No Deployment and Service any more: both are pruned, and the
	// condition says none is desired.
	e.setSpec("shop", 1, 0)
	bosuntest.Eventually(t, func(ctx context.Context) error {
		err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "web"}, &appsv1.Deployment{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("deployment web: %w, want it pruned", err)
		}
		err = e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "web"}, &corev1.Service{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("service web: %w, want it pruned", err)
		}
		return nil
	})
	got := e.waitConditions("shop", map[string]cond{"DeploymentReady": {metav1.ConditionTrue, ReasonReady}})
	if c := conditions.Find(got.Status.Conditions, "DeploymentReady"); c.Message != "no Deployment desired" {
		t.Errorf("DeploymentReady message = %q, want %q", c.Message, "no Deployment desired")
	}
}

// countPasses returns a client wrapper that counts the lists of
// ConfigMaps in n: each pass of a step that declares ConfigMaps makes one.
func countPasses(n *atomic.Int64) func(client.Client) client.Client {
	return func(c client.Client) client.Client {
		return interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
			List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				if _, ok := list.(*corev1.ConfigMapList); ok {
					n.Add(1)
				}
				return cl.List(ctx, list, opts...)
			},
		})
	}
}

// TestConvergedWritesNothing reconciles a converged Widget again: no write
// at all reaches the API server, although the Service was defaulted by the
// server (cluster IP, target port, protocol).
func TestConvergedWritesNothing(t *testing.T) {
	step := NewStep("web", webApp, webKinds())
	// Count the passes, to know that some happened.
	var lists atomic.Int64
	e := start(t, reconciler(step), countPasses(&lists))
	e.create("quiet", 2, 1)
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "2", "cm-1": "2"})
	e.markAvailable("web")
	e.waitConditions("quiet", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
	// The passes that converged the Widget have ended.
	e.touch("quiet", "settled")
	e.writes.Reset()
	passes := lists.Load()

	// Touching the Widget's labels brings a pass that has nothing to do;
	// each touch waits until that pass has ended.
	for i := range 3 {
		e.touch("quiet", fmt.Sprint(i))
	}
	if n := e.writes.Total(); n != 0 {
		t.Errorf("%d writes by passes over a converged Widget, want 0: %v", n, e.writes.Writes())
	}
	if lists.Load() == passes {
		t.Error("no pass ran after the Widget was touched: the test checked nothing")
	}
}

// TestPlan asks a step for its plan without applying it.
func TestPlan(t *testing.T) {
	step := NewStep("web", webApp, webKinds())
	e := start(t, reconciler(step))
	w := e.create("planned", 2, 0)
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "2", "cm-1": "2"})
	e.waitConditions("planned", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
	if err := e.c.Get(t.Context(), client.ObjectKeyFromObject(w), w); err != nil {
		t.Fatal(err)
	}

	// A Widget that wants one ConfigMap with another value and a
	// Deployment and Service: plan against the live objects.
	w.Spec.Value, w.Spec.Divisor = 1, 1
	cp := shared.ControlPlane(t)
	writes := &bosuntest.WriteCounter{}
	req := &bosun.Pass[*testapi.Widget]{Controller: "widget-children", Object: w, Original: w.DeepCopy(), Client: writes.Wrap(cp.Client)}
	plan, err := step.Plan(t.Context(), req)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	want := Plan{
		Create: []Ref{{"Deployment", e.ns, "web"}, {"Service", e.ns, "web"}},
		Update: []Ref{{"ConfigMap", e.ns, "cm-0"}},
		Delete: []Ref{{"ConfigMap", e.ns, "cm-1"}},
	}
	if diff := cmp.Diff(want, plan); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	if n := writes.Total(); n != 0 {
		t.Errorf("Plan made %d writes, want none: %v", n, writes.Writes())
	}
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "2", "cm-1": "2"})
}

// TestInvalidChildren returns a child of an undeclared kind, then two
// children with the same name, then a child the API server refuses: the
// Widget is Ready False with reason InvalidChildren, nothing is applied,
// and the step does not retry until the Widget changes.
func TestInvalidChildren(t *testing.T) {
	desired := func(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		if req.Object.Name == "clock" {
			// The clock of the windows below: no children, always valid.
			return nil, nil
		}
		switch req.Object.Spec.Value {
		case 1:
			return []client.Object{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}}, nil
		case 3:
			// The API server refuses the name.
			return []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "Not_A_Name"}}}, nil
		}
		return []client.Object{
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "same"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "same"}},
		}, nil
	}
	step := NewStep("bad", desired, []Kind{Of(&corev1.ConfigMap{})})
	e := start(t, reconciler(step))
	// The windows in which nothing may happen are measured in passes of
	// the Widget clock, as well as in time.
	e.create("clock", 0, 0)
	e.create("bad", 1, 0)
	e.waitConditions("clock", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
	w := e.waitConditions("bad", map[string]cond{conditions.TypeReady: {metav1.ConditionFalse, ReasonInvalidChildren}})
	if msg := conditions.Find(w.Status.Conditions, conditions.TypeReady).Message; !strings.Contains(msg, ErrUndeclaredKind.Error()) {
		t.Errorf("Ready message = %q, want it to mention %q", msg, ErrUndeclaredKind)
	}
	// Once the passes under way have ended, none follows: not in 2s, and
	// not in 10 passes of the clock.
	e.touch("bad", "invalid")
	e.writes.Reset()
	before := e.passCount("bad")
	e.window("clock", 2*time.Second, 10)
	if n := e.writes.Total(); n != 0 {
		t.Errorf("%d writes while the children stay invalid, want 0 (no retry loop): %v", n, e.writes.Writes())
	}
	if n := e.passCount("bad") - before; n != 0 {
		t.Errorf("%d passes in the window while the children stay invalid, want 0 (no retry loop)", n)
	}
	e.setSpec("bad", 2, 0)
	w = e.waitConditions("bad", map[string]cond{conditions.TypeReady: {metav1.ConditionFalse, ReasonInvalidChildren}})
	if msg := conditions.Find(w.Status.Conditions, conditions.TypeReady).Message; !strings.Contains(msg, "desired twice") {
		t.Errorf("Ready message = %q, want it to say a child is desired twice", msg)
	}
	if got := e.configMaps(e.ns); len(got) != 0 {
		t.Errorf("configmaps applied from an invalid set: %v", got)
	}

	// A child the API server refuses: terminal, tried once per change.
	e.setSpec("bad", 3, 0)
	w = e.waitConditions("bad", map[string]cond{conditions.TypeReady: {metav1.ConditionFalse, ReasonInvalidChildren}})
	if msg := conditions.Find(w.Status.Conditions, conditions.TypeReady).Message; !strings.Contains(msg, "applying ConfigMap") {
		t.Errorf("Ready message = %q, want it to say which apply failed", msg)
	}
	e.touch("bad", "refused")
	e.writes.Reset()
	before = e.passCount("bad")
	e.window("clock", 2*time.Second, 10)
	if n := e.writes.Total(); n != 0 {
		t.Errorf("%d writes while the API server refuses the child, want 0 (no retry loop): %v", n, e.writes.Writes())
	}
	if n := e.passCount("bad") - before; n != 0 {
		t.Errorf("%d passes in the window while the API server refuses the child, want 0 (no retry loop)", n)
	}
}

// TestChildConflict desires a ConfigMap that another object controls: the
// step refuses to take it over, and still writes the other children of
// the set (one object in the way holds back no other child).
func TestChildConflict(t *testing.T) {
	step := NewStep("web", webApp, webKinds())
	e := start(t, reconciler(step))
	ctx := t.Context()
	other := e.create("other", 0, 0)
	taken := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "cm-0", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: testapi.GroupVersion.String(), Kind: "Widget", Name: other.Name, UID: other.UID, Controller: new(bool),
	}}}, Data: map[string]string{"value": "theirs"}}
	*taken.OwnerReferences[0].Controller = true
	if err := e.c.Create(ctx, taken); err != nil {
		t.Fatal(err)
	}
	e.create("mine", 2, 0)
	w := e.waitConditions("mine", map[string]cond{conditions.TypeReady: {metav1.ConditionFalse, ReasonChildConflict}})
	if msg := conditions.Find(w.Status.Conditions, conditions.TypeReady).Message; !strings.Contains(msg, "controlled by Widget other") {
		t.Errorf("Ready message = %q, want it to name the controller", msg)
	}
	e.waitConfigMaps(e.ns, map[string]string{"cm-1": "2"})
	var cm corev1.ConfigMap
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(taken), &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["value"] != "theirs" {
		t.Errorf("the other object's ConfigMap was changed: %v", cm.Data)
	}
}

// TestUnownedChildren keeps children in another namespace and a
// cluster-scoped one: they carry no owner reference, a change to one wakes
// the parent through the owner annotations, and they are deleted when the
// parent is.
func TestUnownedChildren(t *testing.T) {
	cp := shared.ControlPlane(t)
	elsewhere := bosuntest.Namespace(t, cp.Client)
	roleName := "widget-reader-" + elsewhere
	desired := func(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		return []client.Object{
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: elsewhere, Name: req.Object.Name}, Data: map[string]string{"value": "x"}},
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: roleName}, Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{testapi.GroupVersion.Group}, Resources: []string{"widgets"}, Verbs: []string{"get"},
			}}},
		}, nil
	}
	step := NewUnownedStep("spread", desired, []Kind{Of(&corev1.ConfigMap{}), Of(&rbacv1.ClusterRole{})})
	e := start(t, reconciler(step))
	ctx := t.Context()
	w := e.create("spread", 0, 0)
	e.waitConditions("spread", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
	var cm corev1.ConfigMap
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: elsewhere, Name: "spread"}, &cm); err != nil {
		t.Fatalf("reading the child in the other namespace: %v", err)
	}
	if len(cm.OwnerReferences) != 0 {
		t.Errorf("unowned child has owner references %+v", cm.OwnerReferences)
	}
	if got, want := cm.Annotations[annotationOwnerNamespace]+"/"+cm.Annotations[annotationOwnerName], e.ns+"/spread"; got != want {
		t.Errorf("owner annotations name %s, want %s", got, want)
	}
	var role rbacv1.ClusterRole
	if err := e.c.Get(ctx, client.ObjectKey{Name: roleName}, &role); err != nil {
		t.Fatalf("reading the cluster-scoped child: %v", err)
	}

	// Drift in the other namespace reaches the parent through the watch.
	cm.Data["value"] = "tampered"
	if err := e.c.Update(ctx, &cm); err != nil {
		t.Fatal(err)
	}
	e.waitConfigMaps(elsewhere, map[string]string{"spread": "x"})

	if err := e.c.Delete(ctx, w); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(w), &testapi.Widget{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("widget: %w, want it gone", err)
		}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: elsewhere, Name: "spread"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("configmap: %w, want it deleted", err)
		}
		if err := e.c.Get(ctx, client.ObjectKey{Name: roleName}, &rbacv1.ClusterRole{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("clusterrole: %w, want it deleted", err)
		}
		return nil
	})
}

// TestOwnedChildMustStayInNamespace desires an owned child in another
// namespace: refused with InvalidChildren.
func TestOwnedChildMustStayInNamespace(t *testing.T) {
	desired := func(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		return []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: req.Object.Name}}}, nil
	}
	step := NewStep("away", desired, []Kind{Of(&corev1.ConfigMap{})})
	e := start(t, reconciler(step))
	e.create("away", 0, 0)
	w := e.waitConditions("away", map[string]cond{conditions.TypeReady: {metav1.ConditionFalse, ReasonInvalidChildren}})
	if msg := conditions.Find(w.Status.Conditions, conditions.TypeReady).Message; !strings.Contains(msg, "NewUnownedStep") {
		t.Errorf("Ready message = %q, want it to point to NewUnownedStep", msg)
	}
}

// TestGenerating builds a reconciler from one function that returns the
// children and sets the status; when it fails, its status edits are
// discarded and Ready says why.
func TestGenerating(t *testing.T) {
	generate := func(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		w := req.Object
		w.Status.Result = w.Spec.Value * 10
		if w.Spec.Divisor < 0 {
			return nil, conditions.Terminal("NegativeDivisor", errors.New("divisor is negative"))
		}
		return []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "gen"}, Data: map[string]string{"value": fmt.Sprint(w.Spec.Value)}}}, nil
	}
	r := Generating("gen", []Kind{Of(&corev1.ConfigMap{})}, generate)
	e := start(t, r)
	e.create("gen", 2, 0)
	w := e.waitConditions("gen", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
	if w.Status.Result != 20 {
		t.Errorf("status.result = %d, want 20", w.Status.Result)
	}
	e.waitConfigMaps(e.ns, map[string]string{"gen": "2"})

	e.setSpec("gen", 5, -1)
	w = e.waitConditions("gen", map[string]cond{conditions.TypeReady: {metav1.ConditionFalse, "NegativeDivisor"}})
	if w.Status.Result != 20 {
		t.Errorf("status.result = %d after a failed call, want the earlier 20", w.Status.Result)
	}
	e.waitConfigMaps(e.ns, map[string]string{"gen": "2"})
}

// blindReads hides ConfigMaps from the reads of the client it wraps until
// the time in until, like a cache that lags behind the writes.
func blindReads(c client.Client, until *time.Time) client.Client {
	return interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok && time.Now().Before(*until) {
				return apierrors.NewNotFound(corev1.Resource("configmaps"), key.Name)
			}
			return cl.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*corev1.ConfigMapList); ok && time.Now().Before(*until) {
				return nil
			}
			return cl.List(ctx, list, opts...)
		},
	})
}

// lag hides ConfigMaps from the reads of the clients it wraps for d from
// the first read of one, like a cache that lags behind the writes. Counting
// from the first read rather than from a moment the test picks, the passes
// of the lag come within it however slowly the controller starts.
type lag struct {
	d     time.Duration
	mu    sync.Mutex
	first time.Time
}

// blind reports whether a read of ConfigMaps now is to find none.
func (l *lag) blind() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.first.IsZero() {
		l.first = time.Now()
	}
	return time.Since(l.first) < l.d
}

// over reports why the reads do not see the ConfigMaps yet, or nil when
// they do.
func (l *lag) over() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.first.IsZero():
		return errors.New("no ConfigMap read yet")
	case time.Since(l.first) < l.d:
		return fmt.Errorf("reads blind for %s more", l.d-time.Since(l.first))
	}
	return nil
}

func (l *lag) wrap(c client.Client) client.Client {
	return interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok && l.blind() {
				return apierrors.NewNotFound(corev1.Resource("configmaps"), key.Name)
			}
			return cl.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*corev1.ConfigMapList); ok && l.blind() {
				return nil
			}
			return cl.List(ctx, list, opts...)
		},
	})
}

// TestLaggingCache runs the step on a client whose reads do not show the
// ConfigMaps it applied for three seconds from the first pass: the passes
// in that time read them from the API server (or wait for the cache)
// instead of applying the same ConfigMaps again.
func TestLaggingCache(t *testing.T) {
	l := &lag{d: 3 * time.Second}
	step := NewStep("web", webApp, webKinds())
	e := start(t, reconciler(step), l.wrap)
	e.create("lag", 2, 0)
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "2", "cm-1": "2"})
	e.waitConditions("lag", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
	// Once the reads see the ConfigMaps again, a pass that loaded the
	// Widget after that has ended, and with it every pass in the lag.
	bosuntest.Eventually(t, func(context.Context) error { return l.over() }, bosuntest.Timeout(30*time.Second))
	e.touch("lag", "after-lag")
	if got := e.writes.Counts()["apply ConfigMap"]; got != 2 {
		t.Errorf("%d ConfigMap applies, want 2 (one each): %v", got, e.writes.Writes())
	}
	if !e.logged("cache behind the children's writes, looking again") && !e.logged("child not in the cache yet, read from the API server") {
		t.Error("no pass waited for the cache: the test did not exercise the lag")
	}
}

// frozen shows, for d from freeze, the ConfigMaps as they were at freeze
// to the reads of the clients it wraps, like a cache that missed the watch
// events of the writes since (until its next relist). Other ConfigMaps
// read as they are.
type frozen struct {
	mu    sync.Mutex
	until time.Time
	cms   map[client.ObjectKey]*corev1.ConfigMap
}

// freeze takes the ConfigMaps of ns as c reads them now, for d.
func (f *frozen) freeze(t *testing.T, c client.Client, ns string, d time.Duration) {
	t.Helper()
	var l corev1.ConfigMapList
	if err := c.List(t.Context(), &l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cms = map[client.ObjectKey]*corev1.ConfigMap{}
	for i := range l.Items {
		f.cms[client.ObjectKeyFromObject(&l.Items[i])] = l.Items[i].DeepCopy()
	}
	f.until = time.Now().Add(d)
}

// old returns the frozen copy of the ConfigMap key, while the freeze lasts.
func (f *frozen) old(key client.ObjectKey) (*corev1.ConfigMap, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cm, ok := f.cms[key]
	if !ok || !time.Now().Before(f.until) {
		return nil, false
	}
	return cm.DeepCopy(), true
}

// over reports why the freeze still lasts, or nil once it is over.
func (f *frozen) over() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if left := time.Until(f.until); left > 0 {
		return fmt.Errorf("reads frozen for %s more", left)
	}
	return nil
}

func (f *frozen) wrap(c client.Client) client.Client {
	return interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if cm, ok := obj.(*corev1.ConfigMap); ok {
				if old, ok := f.old(key); ok {
					old.DeepCopyInto(cm)
					return nil
				}
			}
			return cl.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := cl.List(ctx, list, opts...); err != nil {
				return err
			}
			if l, ok := list.(*corev1.ConfigMapList); ok {
				for i := range l.Items {
					if old, ok := f.old(client.ObjectKeyFromObject(&l.Items[i])); ok {
						l.Items[i] = *old
					}
				}
			}
			return nil
		},
	})
}

// TestCacheBehindAnApplyPastTheGrace runs the step on a client whose reads
// show the ConfigMaps as they were before a spec change for longer than
// cacheGrace after the step applied the change, as a cache that missed
// the watch events of the applies does until its next relist: the passes
// after the grace read the children from the API server, find them as
// applied, and do not apply them again.
func TestCacheBehindAnApplyPastTheGrace(t *testing.T) {
	f := &frozen{}
	step := NewStep("web", webApp, webKinds())
	e := start(t, reconciler(step), f.wrap)
	e.create("stale", 2, 0)
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "2", "cm-1": "2"})
	e.waitConditions("stale", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})
	f.freeze(t, e.c, e.ns, cacheGrace+4*cacheRetry)
	e.setSpec("stale", 3, 0)
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "3", "cm-1": "3", "cm-2": "3"})
	// Once the freeze is over, a pass that loaded the Widget after it
	// has ended, and with it every pass of the freeze.
	bosuntest.Eventually(t, func(context.Context) error { return f.over() }, bosuntest.Timeout(time.Minute))
	e.touch("stale", "after-freeze")
	// Two creates, then two updates and a create.
	if got := e.writes.Counts()["apply ConfigMap"]; got != 5 {
		t.Errorf("%d ConfigMap applies, want 5 (one per change of a ConfigMap): %v", got, e.writes.Writes())
	}
	if !e.logged("cache behind the child's apply for longer than the grace, read it from the API server") {
		t.Error("no pass read a child from the API server: the test did not outlast the grace")
	}
}
