package memcached

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/unit"
	"github.com/bosunkit/bosun/children"
	"github.com/bosunkit/bosun/conditions"
	cachev1 "github.com/bosunkit/bosun/examples/memcached/api/v1alpha1"
)

// memcached returns Memcached cache in namespace web of size servers, as
// the API server defaults it.
func memcached(size int32) *cachev1.Memcached {
	return &cachev1.Memcached{
		ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "cache", UID: "ca5e", Generation: 1},
		Spec:       cachev1.MemcachedSpec{Size: size, Image: cachev1.DefaultImage, Port: cachev1.DefaultPort},
	}
}

// deployment returns what the Deployment of Memcached cache holds of
// replicas, labels and selector, for ExpectObjects; checkDeployment checks
// its container.
func deployment(replicas int32) *appsv1.Deployment {
	lbls := map[string]string{LabelName: "memcached", LabelMemcached: "cache"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "cache", Labels: lbls},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: lbls},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: lbls}},
		},
	}
}

// service returns what the Service of Memcached cache holds, on port.
func service(port int32) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "cache"},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: map[string]string{LabelName: "memcached", LabelMemcached: "cache"},
			Ports:    []corev1.ServicePort{{Name: PortName, Port: port, TargetPort: intstr.FromString(PortName)}},
		},
	}
}

// pod returns a pod named name of the Memcached named of, in namespace
// web.
func pod(name, of string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: name, Labels: map[string]string{LabelName: "memcached", LabelMemcached: of}}}
}

// rollout sets the status of the Deployment d as its controller would:
// it has seen the spec, and updated, replicas and ready are its counts.
func rollout(d *appsv1.Deployment, updated, replicas, ready int32) {
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation,
		Replicas:           replicas,
		UpdatedReplicas:    updated,
		ReadyReplicas:      ready,
		AvailableReplicas:  ready,
	}
}

// world is what one pass over a Memcached leaves behind, as the next pass
// finds it: the Memcached, its Deployment and its Service.
type world struct {
	m          *cachev1.Memcached
	deployment *appsv1.Deployment
	service    *corev1.Service
}

// objects returns the Deployment and the Service of w, and others.
func (w world) objects(others ...client.Object) []client.Object {
	return append([]client.Object{w.deployment.DeepCopy(), w.service.DeepCopy()}, others...)
}

// after runs one pass over m with given and returns the world it leaves.
func after(t *testing.T, m *cachev1.Memcached, given ...client.Object) world {
	t.Helper()
	out := unit.Reconcile(t, unit.Scheme(t, AddToScheme), NewReconciler(), unit.Case[*cachev1.Memcached]{Object: m, Given: given})
	if out.Err != nil || out.Object == nil {
		t.Fatalf("pass: %v", out.Err)
	}
	w := world{m: out.Object.DeepCopy(), deployment: &appsv1.Deployment{}, service: &corev1.Service{}}
	key := client.ObjectKey{Namespace: "web", Name: "cache"}
	if err := out.Client.Get(t.Context(), key, w.deployment); err != nil {
		t.Fatal(err)
	}
	if err := out.Client.Get(t.Context(), key, w.service); err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{w.m, w.deployment, w.service} {
		o.SetResourceVersion("")
	}
	return w
}

// wantStatus is a Case.Check: the Memcached's ready replicas and pods are
// those given.
func wantStatus(ready int32, pods ...string) func(bosuntest.TB, *unit.Outcome[*cachev1.Memcached]) {
	return func(t bosuntest.TB, out *unit.Outcome[*cachev1.Memcached]) {
		t.Helper()
		if out.Object == nil {
			t.Fatalf("the Memcached is gone")
		}
		type status struct {
			Ready int32
			Pods  []string
		}
		if diff := cmp.Diff(status{ready, pods}, status{out.Object.Status.ReadyReplicas, out.Object.Status.Pods}, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("status (-want +got):\n%s", diff)
		}
	}
}

// TestReconcile runs the Memcached reconciler on one Memcached in an
// in-memory client, which runs no deployment controller: the Deployment's
// status and the pods are given. It checks the children applied, the
// status and conditions reported, that a converged Memcached costs no
// write, that a Deployment changed behind the operator's back is put back,
// and how a failure shows.
func TestReconcile(t *testing.T) {
	cond := func(typ string, status metav1.ConditionStatus, reason conditions.Reason, message string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: string(reason), Message: message, ObservedGeneration: 1}
	}
	// notReady are the conditions while the Deployment rolls out: Ready
	// tells of Available, whose message is the Deployment's readiness.
	notReady := func(message string) []metav1.Condition {
		return []metav1.Condition{
			cond(cachev1.ConditionAvailable, metav1.ConditionFalse, cachev1.ReasonUpdating, message),
			cond(cachev1.ConditionDeploymentReady, metav1.ConditionFalse, "NotReady", "1 of 1 Deployment not ready: cache: "+message),
			cond(cachev1.ConditionServiceReady, metav1.ConditionTrue, "Ready", "1 Service ready"),
			cond(conditions.TypeReady, metav1.ConditionFalse, cachev1.ReasonUpdating, message),
		}
	}
	// unavailable are the conditions of a rolled-out Deployment whose pods
	// the status cannot list as they should be.
	unavailable := func(message string) []metav1.Condition {
		return []metav1.Condition{
			cond(cachev1.ConditionAvailable, metav1.ConditionFalse, cachev1.ReasonUpdating, message),
			cond(cachev1.ConditionDeploymentReady, metav1.ConditionTrue, "Ready", "1 Deployment ready"),
			cond(conditions.TypeReady, metav1.ConditionFalse, cachev1.ReasonUpdating, message),
		}
	}
	ready := []metav1.Condition{
		cond(cachev1.ConditionAvailable, metav1.ConditionTrue, cachev1.ReasonAvailable, "3 of 3 pods ready"),
		cond(cachev1.ConditionDeploymentReady, metav1.ConditionTrue, "Ready", "1 Deployment ready"),
		cond(cachev1.ConditionServiceReady, metav1.ConditionTrue, "Ready", "1 Service ready"),
		cond(conditions.TypeReady, metav1.ConditionTrue, conditions.ReasonSucceeded, ""),
	}
	// hashed returns a pod of Memcached cache named name, of the template
	// whose hash is hash.
	hashed := func(name, hash string) *corev1.Pod {
		p := pod(name, "cache")
		p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
		return p
	}

	// The world after the first pass, and the Deployment as its controller
	// leaves it: three pods of the latest template, which become ready.
	created := after(t, memcached(3))
	withPods := func(updated, replicas, ready int32) []client.Object {
		d := created.deployment.DeepCopy()
		rollout(d, updated, replicas, ready)
		return []client.Object{d, created.service.DeepCopy(), pod("cache-c", "cache"), pod("cache-a", "cache"), pod("cache-b", "cache")}
	}
	// A pod being deleted, and a pod of another Memcached: neither is
	// listed.
	going := pod("cache-old", "cache")
	going.DeletionTimestamp, going.Finalizers = ptr.To(metav1.Now()), []string{"test.bosun.dev/hold"}
	converged := after(t, created.m.DeepCopy(), append(withPods(3, 3, 3), going, pod("other-a", "other"))...)
	rollout(converged.deployment, 3, 3, 3)
	settled := converged.objects(pod("cache-c", "cache"), pod("cache-a", "cache"), pod("cache-b", "cache"))
	grown := converged.m.DeepCopy()
	grown.Spec.Size, grown.Generation = 5, 2

	stuck := created.deployment.DeepCopy()
	rollout(stuck, 1, 3, 1)
	stuck.Status.Conditions = []appsv1.DeploymentCondition{{
		Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded",
		Message: `ReplicaSet "cache-5d8f" has timed out progressing.`,
	}}

	unit.Run(t, unit.Scheme(t, AddToScheme), NewReconciler,
		unit.Case[*cachev1.Memcached]{
			Name:             "a new Memcached: a Deployment and a Service, no pod yet",
			Object:           memcached(3),
			ExpectWrites:     []string{"apply Deployment web/cache", "apply Service web/cache", "patch status Memcached web/cache"},
			ExpectEvents:     []string{"Normal " + string(children.ReasonChildrenChanged) + " set memcached: created 2, updated 0, deleted 0"},
			ExpectConditions: notReady("rolling out: 0 of 3 pods updated"),
			ExpectObjects:    []client.Object{deployment(3), service(cachev1.DefaultPort)},
			Check:            checks(wantStatus(0), checkDeployment(cachev1.DefaultImage, cachev1.DefaultPort)),
		},
		unit.Case[*cachev1.Memcached]{
			Name:          "an image and a port of its own",
			Object:        &cachev1.Memcached{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "cache", UID: "ca5e"}, Spec: cachev1.MemcachedSpec{Size: 1, Image: "memcached:1.6", Port: 11311}},
			ExpectWrites:  []string{"apply Deployment web/cache", "apply Service web/cache", "patch status Memcached web/cache"},
			ExpectObjects: []client.Object{deployment(1), service(11311)},
			Check:         checkDeployment("memcached:1.6", 11311),
		},
		unit.Case[*cachev1.Memcached]{
			Name:          "no image and no port (not defaulted by an API server): the defaults",
			Object:        &cachev1.Memcached{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "cache", UID: "ca5e"}, Spec: cachev1.MemcachedSpec{Size: 2}},
			ExpectWrites:  []string{"apply Deployment web/cache", "apply Service web/cache", "patch status Memcached web/cache"},
			ExpectObjects: []client.Object{deployment(2), service(cachev1.DefaultPort)},
			Check:         checkDeployment(cachev1.DefaultImage, cachev1.DefaultPort),
		},
		unit.Case[*cachev1.Memcached]{
			Name:             "two of three pods ready",
			Object:           created.m,
			Given:            withPods(3, 3, 2),
			ExpectWrites:     []string{"patch status Memcached web/cache"},
			ExpectConditions: notReady("waiting for 1 of 3 pods to be ready"),
			Check:            wantStatus(2, "cache-a", "cache-b", "cache-c"),
		},
		unit.Case[*cachev1.Memcached]{
			Name:             "a rollout under way",
			Object:           created.m,
			Given:            withPods(1, 3, 3),
			ExpectConditions: notReady("rolling out: 1 of 3 pods updated"),
			Check:            wantStatus(3, "cache-a", "cache-b", "cache-c"),
		},
		unit.Case[*cachev1.Memcached]{
			Name:             "an old pod still running",
			Object:           created.m,
			Given:            withPods(3, 4, 4),
			ExpectConditions: notReady("waiting for 1 of 4 pods to go"),
		},
		unit.Case[*cachev1.Memcached]{
			Name:             "a pod the cache does not show yet: not Available",
			Object:           created.m,
			Given:            withPods(3, 3, 3)[:4],
			ExpectConditions: unavailable("waiting for the pods to show: 2 of 3"),
			Check:            wantStatus(3, "cache-a", "cache-c"),
		},
		unit.Case[*cachev1.Memcached]{
			Name:             "pods of two templates in the cache: not Available",
			Object:           created.m,
			Given:            append(withPods(3, 3, 3)[:2], hashed("cache-a", "new"), hashed("cache-b", "new"), hashed("cache-c", "old")),
			ExpectConditions: unavailable("waiting for the pods of an earlier template to go"),
			Check:            wantStatus(3, "cache-a", "cache-b", "cache-c"),
		},
		unit.Case[*cachev1.Memcached]{
			Name:   "a rollout that made no progress: RolloutStuck",
			Object: created.m,
			Given:  []client.Object{stuck, created.service.DeepCopy(), pod("cache-a", "cache")},
			ExpectConditions: []metav1.Condition{
				cond(cachev1.ConditionAvailable, metav1.ConditionFalse, cachev1.ReasonRolloutStuck, `the rollout made no progress: ReplicaSet "cache-5d8f" has timed out progressing.`),
				cond(conditions.TypeReady, metav1.ConditionFalse, cachev1.ReasonRolloutStuck, `the rollout made no progress: ReplicaSet "cache-5d8f" has timed out progressing.`),
			},
			Check: wantStatus(1, "cache-a"),
		},
		unit.Case[*cachev1.Memcached]{
			Name:             "every pod ready: Ready, the ready replicas and the pods' names, not those going or of others",
			Object:           created.m,
			Given:            append(withPods(3, 3, 3), going, pod("other-a", "other")),
			ExpectWrites:     []string{"patch status Memcached web/cache"},
			ExpectNoEvents:   true,
			ExpectConditions: ready,
			Check:            wantStatus(3, "cache-a", "cache-b", "cache-c"),
		},
		unit.Case[*cachev1.Memcached]{
			Name:             "a converged Memcached writes nothing",
			Object:           converged.m,
			Given:            settled,
			ExpectNoWrites:   true,
			ExpectNoEvents:   true,
			ExpectConditions: ready,
			Check:            wantStatus(3, "cache-a", "cache-b", "cache-c"),
		},
		unit.Case[*cachev1.Memcached]{
			Name:          "a Deployment scaled behind the operator's back is put back",
			Object:        converged.m,
			Given:         edited(settled, func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](7) }),
			ExpectWrites:  []string{"apply Deployment web/cache"},
			ExpectEvents:  []string{"Normal " + string(children.ReasonChildrenChanged) + " set memcached: created 0, updated 1, deleted 0"},
			ExpectObjects: []client.Object{deployment(3)},
			Check:         checks(wantStatus(3, "cache-a", "cache-b", "cache-c"), checkDeployment(cachev1.DefaultImage, cachev1.DefaultPort)),
		},
		unit.Case[*cachev1.Memcached]{
			Name:   "a Deployment given another image behind the operator's back is put back",
			Object: converged.m,
			Given: edited(settled, func(d *appsv1.Deployment) {
				d.Spec.Template.Spec.Containers[0].Image = "memcached:latest"
			}),
			ExpectWrites: []string{"apply Deployment web/cache"},
			Check:        checkDeployment(cachev1.DefaultImage, cachev1.DefaultPort),
		},
		unit.Case[*cachev1.Memcached]{
			Name:          "a new size: the Deployment is scaled, the status waits for it",
			Object:        grown,
			Given:         settled,
			ExpectWrites:  []string{"apply Deployment web/cache", "patch status Memcached web/cache"},
			ExpectObjects: []client.Object{deployment(5)},
			ExpectConditions: []metav1.Condition{{
				Type: conditions.TypeReady, Status: metav1.ConditionFalse, Reason: string(cachev1.ReasonUpdating), ObservedGeneration: 2,
				Message: "rolling out: 3 of 5 pods updated",
			}},
			Check: wantStatus(3, "cache-a", "cache-b", "cache-c"),
		},
		unit.Case[*cachev1.Memcached]{
			Name:   "pods that cannot be listed: retried, the status kept",
			Object: converged.m,
			Given:  settled,
			Interceptor: interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				if _, ok := list.(*corev1.PodList); ok {
					return apierrors.NewInternalError(errors.New("etcd is down"))
				}
				return c.List(ctx, list, opts...)
			}},
			ExpectErr:    "listing the pods of deployment cache: Internal error occurred: etcd is down",
			ExpectWrites: []string{"patch status Memcached web/cache"},
			ExpectEvents: []string{"Warning " + string(conditions.ReasonError) + " listing the pods of deployment cache: Internal error occurred: etcd is down"},
			ExpectConditions: []metav1.Condition{cond(conditions.TypeReady, metav1.ConditionFalse, conditions.ReasonError,
				"listing the pods of deployment cache: Internal error occurred: etcd is down")},
			Check: wantStatus(3, "cache-a", "cache-b", "cache-c"),
		},
	)
}

// edited returns copies of objs with the Deployment among them changed by
// change.
func edited(objs []client.Object, change func(*appsv1.Deployment)) []client.Object {
	out := make([]client.Object, 0, len(objs))
	for _, o := range objs {
		o = o.DeepCopyObject().(client.Object)
		if d, ok := o.(*appsv1.Deployment); ok {
			change(d)
		}
		out = append(out, o)
	}
	return out
}

// checkDeployment is a Case.Check: the Deployment of Memcached cache has
// one container, memcached, of image, listening on port as its port and
// its command say.
func checkDeployment(image string, port int32) func(bosuntest.TB, *unit.Outcome[*cachev1.Memcached]) {
	return func(t bosuntest.TB, out *unit.Outcome[*cachev1.Memcached]) {
		t.Helper()
		var d appsv1.Deployment
		if err := out.Client.Get(context.Background(), client.ObjectKey{Namespace: "web", Name: "cache"}, &d); err != nil {
			t.Fatal(err)
		}
		type container struct {
			Name, Image string
			Command     []string
			Ports       []corev1.ContainerPort
		}
		var got []container
		for _, c := range d.Spec.Template.Spec.Containers {
			got = append(got, container{c.Name, c.Image, c.Command, c.Ports})
		}
		want := []container{{
			Name: ContainerName, Image: image,
			Command: []string{"memcached", fmt.Sprintf("--port=%d", port), "--memory-limit=64", "-o", "modern", "-v"},
			Ports:   []corev1.ContainerPort{{Name: PortName, ContainerPort: port}},
		}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("containers (-want +got):\n%s", diff)
		}
	}
}

// checks is a Case.Check that runs each of checks.
func checks(checks ...func(bosuntest.TB, *unit.Outcome[*cachev1.Memcached])) func(bosuntest.TB, *unit.Outcome[*cachev1.Memcached]) {
	return func(t bosuntest.TB, out *unit.Outcome[*cachev1.Memcached]) {
		t.Helper()
		for _, c := range checks {
			c(t, out)
		}
	}
}

// TestDeploymentReadiness judges Deployments by their status.
func TestDeploymentReadiness(t *testing.T) {
	d := func(replicas int32, generation, observed int64, updated, current, ready int32) *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Generation: generation},
			Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(replicas)},
			Status:     appsv1.DeploymentStatus{ObservedGeneration: observed, UpdatedReplicas: updated, Replicas: current, ReadyReplicas: ready},
		}
	}
	tests := []struct {
		name    string
		obj     client.Object
		ready   bool
		message string
	}{
		{"every pod ready", d(3, 2, 2, 3, 3, 3), true, ""},
		{"none wanted", d(0, 1, 1, 0, 0, 0), true, ""},
		{"spec not seen yet", d(3, 2, 1, 3, 3, 3), false, "waiting for the deployment controller to see the latest spec"},
		{"rolling out", d(3, 2, 2, 1, 4, 3), false, "rolling out: 1 of 3 pods updated"},
		{"old pods left", d(3, 2, 2, 3, 5, 5), false, "waiting for 2 of 5 pods to go"},
		{"scaling down", d(1, 2, 2, 3, 3, 3), false, "waiting for 2 of 3 pods to go"},
		{"not all ready", d(3, 2, 2, 3, 3, 1), false, "waiting for 2 of 3 pods to be ready"},
		{"not a Deployment", &corev1.Service{}, false, "*v1.Service is not a Deployment"},
	}
	for _, tt := range tests {
		ready, message := DeploymentReadiness(tt.obj)
		if ready != tt.ready || message != tt.message {
			t.Errorf("%s: DeploymentReadiness = %t, %q; want %t, %q", tt.name, ready, message, tt.ready, tt.message)
		}
	}
}

// TestReconcilerIsValid checks the configuration the way setup does.
func TestReconcilerIsValid(t *testing.T) {
	r := NewReconciler()
	r.Client = fake.NewClientBuilder().WithScheme(unit.Scheme(t, AddToScheme)).Build()
	if err := r.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if r.Name != ControllerName || r.Finalizer != "" {
		t.Errorf("name %q, finalizer %q; want %q and none: owned children need no cleanup", r.Name, r.Finalizer, ControllerName)
	}
}

func TestAddToScheme(t *testing.T) {
	s := unit.Scheme(t, AddToScheme)
	for _, tt := range []struct {
		obj  runtime.Object
		want schema.GroupVersionKind
	}{
		{&cachev1.Memcached{}, cachev1.GroupVersion.WithKind("Memcached")},
		{&cachev1.MemcachedList{}, cachev1.GroupVersion.WithKind("MemcachedList")},
		{&appsv1.Deployment{}, appsv1.SchemeGroupVersion.WithKind("Deployment")},
		{&corev1.Pod{}, corev1.SchemeGroupVersion.WithKind("Pod")},
	} {
		gvks, _, err := s.ObjectKinds(tt.obj)
		if err != nil {
			t.Errorf("ObjectKinds(%T): %v", tt.obj, err)
			continue
		}
		if diff := cmp.Diff([]schema.GroupVersionKind{tt.want}, gvks); diff != "" {
			t.Errorf("ObjectKinds(%T) (-want +got):\n%s", tt.obj, diff)
		}
	}
}

func TestCRDs(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatalf("CRDs: %v", err)
	}
	if len(crds) != 1 {
		t.Fatalf("CRDs returned %d definitions, want 1", len(crds))
	}
	c := crds[0]
	type summary struct {
		Name, Group, Kind string
		Scope             apiextensionsv1.ResourceScope
		Versions          []string
		Status            bool
		Fields            []string
		Columns           []string
	}
	got := summary{Name: c.Name, Group: c.Spec.Group, Kind: c.Spec.Names.Kind, Scope: c.Spec.Scope}
	for _, v := range c.Spec.Versions {
		got.Versions = append(got.Versions, v.Name)
		got.Status = v.Subresources != nil && v.Subresources.Status != nil
		props := v.Schema.OpenAPIV3Schema.Properties
		for _, part := range []string{"spec", "status"} {
			for name, p := range props[part].Properties {
				got.Fields = append(got.Fields, part+"."+name+":"+p.Type)
			}
		}
		for _, col := range v.AdditionalPrinterColumns {
			got.Columns = append(got.Columns, col.Name)
		}
	}
	want := summary{
		Name:     "memcacheds.cache.example.bosun.dev",
		Group:    cachev1.GroupVersion.Group,
		Kind:     "Memcached",
		Scope:    apiextensionsv1.NamespaceScoped,
		Versions: []string{cachev1.GroupVersion.Version},
		Status:   true,
		Fields: []string{
			"spec.image:string", "spec.port:integer", "spec.size:integer",
			"status.conditions:array", "status.observedGeneration:integer", "status.pods:array", "status.readyReplicas:integer",
		},
		Columns: []string{"Size", "Ready Pods", "Image", "Ready", "Reason", "Age"},
	}
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("CRD (-want +got):\n%s", diff)
	}
}

// TestSamples checks that the sample of config/samples is the one Samples
// returns, and that one pass of the reconciler over it makes its
// Deployment and Service.
func TestSamples(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("config", "samples", "cache_v1alpha1_memcached.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var fromYAML cachev1.Memcached
	if err := yaml.UnmarshalStrict(data, &fromYAML); err != nil {
		t.Fatalf("config/samples: %v", err)
	}
	fromYAML.Namespace = "web"
	objs := Samples("web")
	if len(objs) != 1 {
		t.Fatalf("%d samples, want 1", len(objs))
	}
	s, ok := objs[0].(*cachev1.Memcached)
	if !ok {
		t.Fatalf("sample %T, want *v1alpha1.Memcached", objs[0])
	}
	if diff := cmp.Diff(&fromYAML, s); diff != "" {
		t.Errorf("Samples and config/samples differ (-yaml +Samples):\n%s", diff)
	}
	s.UID = "5a3"
	unit.Run(t, unit.Scheme(t, AddToScheme), NewReconciler, unit.Case[*cachev1.Memcached]{
		Name:         s.Name,
		Object:       s,
		ExpectWrites: []string{"apply Deployment web/memcached-sample", "apply Service web/memcached-sample", "patch status Memcached web/memcached-sample"},
	})
	Samples("web")[0].SetName("changed")
	if Samples("web")[0].GetName() == "changed" {
		t.Error("Samples returned shared objects")
	}
}

// TestLimitPodCache: the manager caches only pods that carry
// LabelMemcached.
func TestLimitPodCache(t *testing.T) {
	var o ctrl.Options
	LimitPodCache(&o)
	for obj, by := range o.Cache.ByObject {
		if _, ok := obj.(*corev1.Pod); !ok {
			t.Errorf("cache options for %T, want only pods", obj)
			continue
		}
		for pl, want := range map[string]bool{
			LabelMemcached + "=cache": true,
			LabelMemcached + "=":      true,
			LabelName + "=memcached":  false,
			"":                        false,
		} {
			set := labels.Set{}
			if k, v, ok := strings.Cut(pl, "="); ok {
				set[k] = v
			}
			if got := by.Label.Matches(set); got != want {
				t.Errorf("pod labelled %q cached: %t, want %t", pl, got, want)
			}
		}
	}
	if len(o.Cache.ByObject) != 1 {
		t.Errorf("%d cache options, want 1", len(o.Cache.ByObject))
	}
}
