package children

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/internal/testapi"
)

// entry is a managedFields entry of manager, with fields in the fieldsV1
// JSON form the API server writes.
func entry(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

// The managedFields below are those an API server wrote for the objects
// of these cases, as applied by the manager "me" and changed by "other".
const (
	serviceFields    = `{"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:name":{},"f:port":{},"f:targetPort":{}}},"f:selector":{}}}`
	containerFields  = `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:args":{},"f:image":{},"f:name":{},"f:resources":{}}}}}}}`
	containerNoArgs  = `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{},"f:resources":{}}}}}}}`
	otherEnvAndArgs  = `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:args":{},"f:env":{".":{},"k:{\"name\":\"X\"}":{".":{},"f:name":{},"f:value":{}}},"f:resources":{"f:limits":{".":{},"f:cpu":{}}}}}}}}}`
	otherEnvOnly     = `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:env":{".":{},"k:{\"name\":\"X\"}":{".":{},"f:name":{},"f:value":{}}}}}}}}}`
	configMapFields  = `{"f:data":{"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{"f:e":{}}}}`
	configMapLostA   = `{"f:data":{"f:b":{}},"f:metadata":{"f:labels":{"f:e":{}}}}`
	configMapLostE   = `{"f:data":{"f:a":{},"f:b":{}}}`
	otherTookA       = `{"f:data":{"f:a":{}}}`
	replicasFields   = `{"f:spec":{"f:replicas":{},"f:paused":{}}}`
	replicasLost     = `{"f:spec":{"f:paused":{}}}`
	otherTookReplica = `{"f:spec":{"f:replicas":{},"f:paused":{}}}`
)

// TestDriftReadsManagedFields compares applied forms with live children
// whose managedFields say which fields the step's manager still owns: a
// zero value it owns is in place whatever the server defaulted it to, one
// it lost must be in live as it is.
func TestDriftReadsManagedFields(t *testing.T) {
	service := map[string]any{"spec": map[string]any{
		"selector": map[string]any{"app": "x"},
		"ports":    []any{map[string]any{"name": "http", "port": int64(80), "targetPort": int64(0)}},
	}}
	liveService := map[string]any{"spec": map[string]any{
		"selector": map[string]any{"app": "x"},
		"ports":    []any{map[string]any{"name": "http", "port": int64(80), "protocol": "TCP", "targetPort": int64(80)}},
	}}
	container := func(extra map[string]any) map[string]any {
		c := map[string]any{"name": "web", "image": "i", "resources": map[string]any{}}
		for k, v := range extra {
			c[k] = v
		}
		return map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{c}}}}}
	}
	configMap := func(a, e any) map[string]any {
		m := map[string]any{"data": map[string]any{"b": "x"}, "metadata": map[string]any{"labels": map[string]any{}}}
		if a != nil {
			m["data"].(map[string]any)["a"] = a
		}
		if e != nil {
			m["metadata"].(map[string]any)["labels"].(map[string]any)["e"] = e
		}
		return m
	}
	scaled := func(replicas any, paused any) map[string]any {
		spec := map[string]any{}
		if replicas != nil {
			spec["replicas"] = replicas
		}
		if paused != nil {
			spec["paused"] = paused
		}
		return map[string]any{"spec": spec}
	}
	const apply, update = metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate
	tests := []struct {
		name          string
		desired, live map[string]any
		managed       []metav1.ManagedFieldsEntry
		want          bool
	}{
		{"zero target port owned, defaulted by the server", service, liveService,
			[]metav1.ManagedFieldsEntry{entry("me", apply, serviceFields)}, true},
		{"zero values owned", configMap("", ""), configMap("", ""),
			[]metav1.ManagedFieldsEntry{entry("me", apply, configMapFields)}, true},
		{"zero data value changed by another manager", configMap("", ""), configMap("zz", ""),
			[]metav1.ManagedFieldsEntry{entry("me", apply, configMapLostA), entry("other", update, otherTookA)}, false},
		{"zero data value set again to its zero value by another manager", configMap("", ""), configMap("", ""),
			[]metav1.ManagedFieldsEntry{entry("me", apply, configMapLostA), entry("other", update, otherTookA)}, true},
		{"zero label removed", configMap("", ""), configMap("", nil),
			[]metav1.ManagedFieldsEntry{entry("me", apply, configMapLostE)}, false},
		{"zero label changed, no entry of the manager", configMap("", ""), configMap("", "x"),
			[]metav1.ManagedFieldsEntry{entry("other", update, configMapFields)}, true},
		{"an Update entry of the manager is not its applied fields", configMap("", ""), configMap("zz", ""),
			[]metav1.ManagedFieldsEntry{entry("me", update, configMapFields)}, true},
		{"zero replicas owned", scaled(int64(0), false), scaled(int64(0), nil),
			[]metav1.ManagedFieldsEntry{entry("me", apply, replicasFields)}, true},
		{"zero replicas scaled by another manager", scaled(int64(0), false), scaled(int64(3), nil),
			[]metav1.ManagedFieldsEntry{entry("me", apply, replicasLost), entry("other", update, otherTookReplica)}, false},
		{"false set to true by another manager", scaled(nil, false), scaled(nil, true),
			[]metav1.ManagedFieldsEntry{entry("me", apply, `{"f:spec":{"f:replicas":{}}}`), entry("other", update, `{"f:spec":{"f:paused":{}}}`)}, false},
		{"non-zero value changed, whoever owns it", scaled(int64(2), nil), scaled(int64(0), nil),
			[]metav1.ManagedFieldsEntry{entry("me", apply, replicasFields)}, false},
		{"empty atomic list owned", container(map[string]any{"args": []any{}}), container(nil),
			[]metav1.ManagedFieldsEntry{entry("me", apply, containerFields)}, true},
		{"empty atomic list filled by another manager", container(map[string]any{"args": []any{}}), container(map[string]any{"args": []any{"a"}}),
			[]metav1.ManagedFieldsEntry{entry("me", apply, containerNoArgs), entry("other", update, otherEnvAndArgs)}, false},
		{"empty merged list others added to", container(map[string]any{"env": []any{}}),
			container(map[string]any{"env": []any{map[string]any{"name": "X", "value": "1"}}}),
			[]metav1.ManagedFieldsEntry{entry("me", apply, containerNoArgs), entry("other", update, otherEnvOnly)}, true},
		{"empty map others added to", container(nil), container(map[string]any{"resources": map[string]any{"limits": map[string]any{"cpu": "1"}}}),
			[]metav1.ManagedFieldsEntry{entry("me", apply, containerNoArgs), entry("other", update, otherEnvAndArgs)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &drift{managed: tt.managed, manager: "me"}
			got := d.upToDate(&unstructured.Unstructured{Object: tt.desired}, &unstructured.Unstructured{Object: tt.live})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("up to date (-want +got):\n%s", diff)
			}
		})
	}
}

// driftApp is the desired set of TestDriftIsRepaired: a ConfigMap and a
// Deployment named after the Widget, each with values at their zero value
// (an empty label and data value, zero replicas, a false bool) and others
// not.
func driftApp(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
	name := req.Object.Name
	labels := map[string]string{"app": name}
	return []client.Object{
		&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name, "tier": ""}},
			Data:       map[string]string{"value": "1", "empty": ""},
		},
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: appsv1.DeploymentSpec{
				Replicas:        ptr.To(int32(0)),
				MinReadySeconds: 5,
				Paused:          true,
				Selector:        &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{
						AutomountServiceAccountToken: ptr.To(false),
						Containers:                   []corev1.Container{{Name: "web", Image: "registry.example/web:1", Args: []string{"serve"}}},
					},
				},
			},
		},
	}, nil
}

// driftShape is what TestDriftIsRepaired checks of the children of a
// Widget.
type driftShape struct {
	Labels    map[string]string
	Data      map[string]string
	Replicas  *int32
	MinReady  int32
	Paused    bool
	Automount *bool
	Args      []string
}

// shape reads the children of the Widget name from the API server.
func (e *env) shape(ctx context.Context, name string) (driftShape, error) {
	var cm corev1.ConfigMap
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: name}, &cm); err != nil {
		return driftShape{}, err
	}
	var d appsv1.Deployment
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: name}, &d); err != nil {
		return driftShape{}, err
	}
	pod := d.Spec.Template.Spec
	var args []string
	if len(pod.Containers) > 0 {
		args = pod.Containers[0].Args
	}
	return driftShape{
		Labels: cm.Labels, Data: cm.Data, Replicas: d.Spec.Replicas, MinReady: d.Spec.MinReadySeconds,
		Paused: d.Spec.Paused, Automount: pod.AutomountServiceAccountToken, Args: args,
	}, nil
}

// intrude changes the object obj names, read afresh, with change, as the
// field manager "intruder" writing with an update (not an apply), which
// takes the fields it changes from their owner.
func (e *env) intrude(obj client.Object, change func(client.Object)) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := e.c.Get(e.t.Context(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change(obj)
		return e.c.Update(e.t.Context(), obj, client.FieldOwner("intruder"))
	})
	if err != nil {
		e.t.Fatalf("changing %s: %v", obj.GetName(), err)
	}
}

// TestDriftIsRepaired changes, as another field manager, fields of
// children the step applied: to their zero value, from their zero value
// to another, or removed. Each change is undone on the next pass; fields
// the step does not set, which another manager added, are left alone; and
// passes over children that are as desired write nothing.
func TestDriftIsRepaired(t *testing.T) {
	tests := []struct {
		name   string
		obj    func(ns, name string) client.Object
		change func(client.Object)
	}{
		{"label set to its zero value", configMapNamed, func(o client.Object) { o.(*corev1.ConfigMap).Labels["app"] = "" }},
		{"data value set to its zero value", configMapNamed, func(o client.Object) { o.(*corev1.ConfigMap).Data["value"] = "" }},
		{"data value removed", configMapNamed, func(o client.Object) { delete(o.(*corev1.ConfigMap).Data, "value") }},
		{"empty label set", configMapNamed, func(o client.Object) { o.(*corev1.ConfigMap).Labels["tier"] = "gold" }},
		{"empty label removed", configMapNamed, func(o client.Object) { delete(o.(*corev1.ConfigMap).Labels, "tier") }},
		{"empty data value set", configMapNamed, func(o client.Object) { o.(*corev1.ConfigMap).Data["empty"] = "x" }},
		{"int set to zero", deploymentNamed, func(o client.Object) { o.(*appsv1.Deployment).Spec.MinReadySeconds = 0 }},
		{"zero replicas scaled up", deploymentNamed, func(o client.Object) { o.(*appsv1.Deployment).Spec.Replicas = ptr.To(int32(2)) }},
		{"bool set to false", deploymentNamed, func(o client.Object) { o.(*appsv1.Deployment).Spec.Paused = false }},
		{"false set to true", deploymentNamed, func(o client.Object) {
			o.(*appsv1.Deployment).Spec.Template.Spec.AutomountServiceAccountToken = ptr.To(true)
		}},
		{"list emptied", deploymentNamed, func(o client.Object) { o.(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Args = nil }},
	}
	step := NewStep("drift", driftApp, []Kind{Of(&corev1.ConfigMap{}), Of(&appsv1.Deployment{})})
	// seen records, per Widget, the "touch" label of the last pass that
	// went past the children step.
	var seen sync.Map
	r := &bosun.Reconciler[*testapi.Widget]{Name: "widget-children", Steps: []bosun.Step[*testapi.Widget]{
		step,
		bosun.NewStep("seen", func(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
			seen.Store(req.Object.Name, req.Object.Labels["touch"])
			return ctrl.Result{}, nil
		}),
	}}
	e := start(t, r)
	ctx := t.Context()
	want := map[string]driftShape{}
	for i := range tests {
		e.create(fmt.Sprintf("w%d", i), 0, 0)
	}
	for i := range tests {
		name := fmt.Sprintf("w%d", i)
		bosuntest.Eventually(t, func(ctx context.Context) error {
			s, err := e.shape(ctx, name)
			want[name] = s
			return err
		}, bosuntest.Timeout(30*time.Second))
	}
	if diff := cmp.Diff(driftShape{
		Labels:   map[string]string{"app": "w0", "tier": "", LabelSet: "drift", LabelOwner: want["w0"].Labels[LabelOwner]},
		Data:     map[string]string{"value": "1", "empty": ""},
		Replicas: ptr.To(int32(0)), MinReady: 5, Paused: true, Automount: ptr.To(false), Args: []string{"serve"},
	}, want["w0"]); diff != "" {
		t.Fatalf("children as applied (-want +got):\n%s", diff)
	}

	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("w%d", i)
			e.intrude(tt.obj(e.ns, name), tt.change)
			bosuntest.Eventually(t, func(ctx context.Context) error {
				got, err := e.shape(ctx, name)
				if err != nil {
					return err
				}
				if diff := cmp.Diff(want[name], got); diff != "" {
					return fmt.Errorf("children not repaired (-want +got):\n%s", diff)
				}
				return nil
			}, bosuntest.Timeout(30*time.Second))
		})
	}

	// Another manager adds a label and a data value the step does not
	// set, and marks the Deployment: they stay, and the step writes
	// nothing, here or on any other Widget, when every Widget is touched.
	e.intrude(configMapNamed(e.ns, "w0"), func(o client.Object) {
		cm := o.(*corev1.ConfigMap)
		cm.Labels["team"] = "blue"
		cm.Data["extra"] = "theirs"
	})
	e.intrude(deploymentNamed(e.ns, "w0"), func(o client.Object) {
		o.(*appsv1.Deployment).Spec.RevisionHistoryLimit = ptr.To(int32(0))
	})
	// touch labels every Widget with touch=mark and waits until a pass of
	// each has seen it.
	touch := func(mark string) {
		t.Helper()
		for i := range tests {
			w := &testapi.Widget{}
			if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: fmt.Sprintf("w%d", i)}, w); err != nil {
				t.Fatal(err)
			}
			base := w.DeepCopy()
			w.Labels = map[string]string{"touch": mark}
			if err := e.c.Patch(ctx, w, client.MergeFrom(base)); err != nil {
				t.Fatal(err)
			}
		}
		bosuntest.Eventually(t, func(context.Context) error {
			for i := range tests {
				name := fmt.Sprintf("w%d", i)
				if v, _ := seen.Load(name); v != mark {
					return fmt.Errorf("no pass of %s saw touch=%s yet", name, mark)
				}
			}
			return nil
		}, bosuntest.Timeout(30*time.Second))
	}
	touch("1")
	e.writes.Reset()
	touch("2")
	if n := e.writes.Total(); n != 0 {
		t.Errorf("%d writes by passes over Widgets whose children are as desired, want 0: %v", n, e.writes.Writes())
	}
	var cm corev1.ConfigMap
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "w0"}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Labels["team"] != "blue" || cm.Data["extra"] != "theirs" {
		t.Errorf("another manager's fields were changed: labels %v, data %v", cm.Labels, cm.Data)
	}
	var d appsv1.Deployment
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "w0"}, &d); err != nil {
		t.Fatal(err)
	}
	if d.Spec.RevisionHistoryLimit == nil || *d.Spec.RevisionHistoryLimit != 0 {
		t.Errorf("another manager's revisionHistoryLimit 0 became %v", d.Spec.RevisionHistoryLimit)
	}
}

// configMapNamed and deploymentNamed return an empty object with a key.
func configMapNamed(ns, name string) client.Object {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func deploymentNamed(ns, name string) client.Object {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// emptyArgsApp is the desired set of TestEmptyListFilledByAnotherManagerIsRepaired:
// a Deployment, built unstructured so that its container's empty args
// list is applied, named after the Widget.
func emptyArgsApp(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
	name := req.Object.Name
	labels := map[string]any{"app": name}
	return []client.Object{&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"replicas": int64(0),
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{map[string]any{
					"name": "web", "image": "registry.example/web:1", "args": []any{},
				}}},
			},
		},
	}}}, nil
}

// TestEmptyListFilledByAnotherManagerIsRepaired applies a Deployment whose
// container's args are an empty list, through the lean cache of package
// operator (tuning.LeanCache), and lets another field manager fill the list
// with an update: the step sees, through the other manager's managedFields
// entry in the cache, that the atomic list was replaced, and empties it
// again.
func TestEmptyListFilledByAnotherManagerIsRepaired(t *testing.T) {
	step := NewStep("args", emptyArgsApp, []Kind{Of(&appsv1.Deployment{})})
	e := start(t, reconciler(step))
	e.create("w", 0, 0)
	args := func(ctx context.Context) ([]string, error) {
		var d appsv1.Deployment
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "w"}, &d); err != nil {
			return nil, err
		}
		return d.Spec.Template.Spec.Containers[0].Args, nil
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		_, err := args(ctx)
		return err
	}, bosuntest.Timeout(30*time.Second))
	e.intrude(deploymentNamed(e.ns, "w"), func(o client.Object) {
		o.(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Args = []string{"--debug"}
	})
	bosuntest.Eventually(t, func(ctx context.Context) error {
		got, err := args(ctx)
		if err != nil {
			return err
		}
		if len(got) != 0 {
			return fmt.Errorf("args = %q, want them emptied again", got)
		}
		return nil
	}, bosuntest.Timeout(30*time.Second))
}
