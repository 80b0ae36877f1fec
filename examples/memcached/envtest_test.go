package memcached

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/children"
	cachev1 "github.com/bosunkit/bosun/examples/memcached/api/v1alpha1"
)

// TestMemcachedLifecycle creates a Memcached of two servers on a control
// plane that runs the Deployment's pods: it becomes Ready once both pods
// are, with their names and the ready count in its status, its Deployment
// and Service owned by it and labelled as members of its set, at one apply
// each. A bigger size scales the Deployment and the status follows; a new
// image rolls it, and the status lists the new pods only.
func TestMemcachedLifecycle(t *testing.T) {
	e := start(t)
	ctx := t.Context()
	e.create("cache", 2)
	m, _ := e.waitReady("cache", 2, cachev1.DefaultImage)
	if m.Spec.Image != cachev1.DefaultImage || m.Spec.Port != cachev1.DefaultPort {
		t.Errorf("spec image %q, port %d; want the API server's defaults %q, %d", m.Spec.Image, m.Spec.Port, cachev1.DefaultImage, cachev1.DefaultPort)
	}
	// Each child is applied once; the status is written as the pods come.
	counts := e.writes.Counts()
	t.Logf("writes from creation to Ready with 2 pods: %v", counts)
	if counts["apply Deployment"] != 1 || counts["apply Service"] != 1 || counts["patch status Memcached"] == 0 || len(counts) != 3 {
		t.Errorf("writes to converge %v, want one apply of each child and status patches only", counts)
	}

	wantLabels := map[string]string{children.LabelSet: ControllerName, children.LabelOwner: string(m.UID), LabelName: "memcached", LabelMemcached: "cache"}
	var d appsv1.Deployment
	if err := e.c.Get(ctx, e.key("cache"), &d); err != nil {
		t.Fatalf("reading deployment: %v", err)
	}
	if !metav1.IsControlledBy(&d, m) {
		t.Errorf("Deployment owner references = %+v, want the Memcached as controller", d.OwnerReferences)
	}
	if diff := cmp.Diff(wantLabels, d.Labels); diff != "" {
		t.Errorf("Deployment labels (-want +got):\n%s", diff)
	}
	var svc corev1.Service
	if err := e.c.Get(ctx, e.key("cache"), &svc); err != nil {
		t.Fatalf("reading service: %v", err)
	}
	if !metav1.IsControlledBy(&svc, m) {
		t.Errorf("Service owner references = %+v, want the Memcached as controller", svc.OwnerReferences)
	}
	type port struct {
		Name   string
		Port   int32
		Target intstr.IntOrString
	}
	var ports []port
	for _, p := range svc.Spec.Ports {
		ports = append(ports, port{p.Name, p.Port, p.TargetPort})
	}
	if diff := cmp.Diff([]port{{PortName, cachev1.DefaultPort, intstr.FromString(PortName)}}, ports); diff != "" {
		t.Errorf("Service ports (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Labels(m), svc.Spec.Selector); diff != "" {
		t.Errorf("Service selector (-want +got):\n%s", diff)
	}

	// A bigger size: the Deployment scales, the status follows.
	e.patch("cache", func(m *cachev1.Memcached) { m.Spec.Size = 3 })
	m, before := e.waitReady("cache", 3, cachev1.DefaultImage)
	if m.Generation != 2 {
		t.Errorf("generation %d, want 2", m.Generation)
	}

	// A new image: the Deployment rolls, and the status lists only the
	// pods of the new image.
	const image = "memcached:1.6.38-alpine"
	e.patch("cache", func(m *cachev1.Memcached) { m.Spec.Image = image })
	m, after := e.waitReady("cache", 3, image)
	for name := range after {
		if _, old := before[name]; old {
			t.Errorf("pod %s of the old image still listed after the rollout: %v", name, m.Status.Pods)
		}
	}
}

// TestDeploymentDriftIsRestored changes the Deployment of a Ready
// Memcached behind the operator's back: its replicas, then its image.
// Each time the Deployment is put back as the Memcached has it, and the
// Memcached is Ready again with its size of pods of its image.
func TestDeploymentDriftIsRestored(t *testing.T) {
	e := start(t)
	e.create("drift", 2)
	e.waitReady("drift", 2, cachev1.DefaultImage)

	edits := []struct {
		name string
		edit func(*appsv1.Deployment)
	}{
		{"replicas", func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](4) }},
		{"image", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "memcached:latest" }},
	}
	for _, ed := range edits {
		var d appsv1.Deployment
		if err := e.c.Get(t.Context(), e.key("drift"), &d); err != nil {
			t.Fatal(err)
		}
		base := d.DeepCopy()
		ed.edit(&d)
		// A merge patch by another field manager, as kubectl edit makes.
		if err := e.c.Patch(t.Context(), &d, client.MergeFrom(base), client.FieldOwner("someone-else")); err != nil {
			t.Fatalf("editing the %s of the deployment: %v", ed.name, err)
		}
		edited := d.Generation
		bosuntest.Eventually(t, func(ctx context.Context) error {
			var got appsv1.Deployment
			if err := e.c.Get(ctx, e.key("drift"), &got); err != nil {
				return err
			}
			if got.Generation <= edited {
				return fmt.Errorf("deployment at generation %d, the edit made %d: not put back yet", got.Generation, edited)
			}
			if r, img := *got.Spec.Replicas, got.Spec.Template.Spec.Containers[0].Image; r != 2 || img != cachev1.DefaultImage {
				return fmt.Errorf("deployment has %d replicas of %s, want 2 of %s", r, img, cachev1.DefaultImage)
			}
			return nil
		}, bosuntest.Timeout(timeout))
		e.waitReady("drift", 2, cachev1.DefaultImage)
	}
}

// TestDeletionCascades deletes a Ready Memcached: the garbage collector
// removes its Deployment and Service, which carry owner references to it,
// and after the Deployment its ReplicaSets and their pods. The operator
// has no finalizer to remove.
func TestDeletionCascades(t *testing.T) {
	e := start(t)
	e.create("gone", 2)
	m, _ := e.waitReady("gone", 2, cachev1.DefaultImage)
	if len(m.Finalizers) != 0 {
		t.Errorf("finalizers %v, want none", m.Finalizers)
	}
	var rss appsv1.ReplicaSetList
	if err := e.c.List(t.Context(), &rss, client.InNamespace(e.ns), client.MatchingLabels{LabelMemcached: "gone"}); err != nil || len(rss.Items) == 0 {
		t.Fatalf("the Deployment's ReplicaSets: %d, error %v; want some", len(rss.Items), err)
	}

	if err := e.c.Delete(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		var left []string
		if err := e.c.Get(ctx, e.key("gone"), &cachev1.Memcached{}); !apierrors.IsNotFound(err) {
			left = append(left, fmt.Sprintf("the Memcached (%v)", err))
		}
		for _, obj := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}} {
			if err := e.c.Get(ctx, e.key("gone"), obj); !apierrors.IsNotFound(err) {
				left = append(left, fmt.Sprintf("%T (%v)", obj, err))
			}
		}
		for _, list := range []client.ObjectList{&appsv1.ReplicaSetList{}, &corev1.PodList{}} {
			if err := e.c.List(ctx, list, client.InNamespace(e.ns), client.MatchingLabels{LabelMemcached: "gone"}); err != nil {
				return err
			}
			if n := len(itemsOf(list)); n > 0 {
				left = append(left, fmt.Sprintf("%d of %T", n, list))
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("still there: %s", strings.Join(left, ", "))
		}
		return nil
	}, bosuntest.Timeout(timeout))
}

// itemsOf returns the names of the items of a ReplicaSetList or PodList.
func itemsOf(list client.ObjectList) []string {
	var names []string
	switch l := list.(type) {
	case *appsv1.ReplicaSetList:
		for _, i := range l.Items {
			names = append(names, i.Name)
		}
	case *corev1.PodList:
		for _, i := range l.Items {
			names = append(names, i.Name)
		}
	}
	return names
}

// TestConvergedMemcachedWritesNothing reconciles a Ready Memcached again,
// by touching a label on it: each pass reads the children and the pods
// from the cache and writes nothing, although the API server defaulted
// fields of the Deployment and the Service and the controllers of the
// control plane keep the Deployment's status.
//
// The count begins once the controller's cache holds the children and
// the pods as they are, and a pass that began after that has ended.
func TestConvergedMemcachedWritesNothing(t *testing.T) {
	e := start(t)
	e.create("quiet", 3)
	_, pods := e.waitReady("quiet", 3, cachev1.DefaultImage)
	e.waitCached("quiet", pods)
	e.touch("quiet", "settled")
	e.writes.Reset()

	// Each touch waits for the pass that saw it to end.
	for i := range 3 {
		e.touch("quiet", fmt.Sprint(i))
	}
	if n := e.writes.Total(); n != 0 {
		t.Errorf("%d writes by passes over a converged Memcached, want 0: %v", n, e.writes.Writes())
	}
}

// TestValidation checks the rules the API server enforces on Memcacheds,
// and the defaults it fills in.
func TestValidation(t *testing.T) {
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	tests := []struct {
		name string
		spec cachev1.MemcachedSpec
		// want is a part of the error; empty means the Memcached is valid.
		want string
	}{
		{name: "none", spec: cachev1.MemcachedSpec{Size: 0}},
		{name: "ten", spec: cachev1.MemcachedSpec{Size: 10, Image: "memcached:1", Port: 1}},
		{name: strings.Repeat("a", 63), spec: cachev1.MemcachedSpec{Size: 1, Port: 65535}},
		{name: "negative", spec: cachev1.MemcachedSpec{Size: -1}, want: "spec.size"},
		{name: "eleven", spec: cachev1.MemcachedSpec{Size: 11}, want: "spec.size"},
		{name: "port-too-big", spec: cachev1.MemcachedSpec{Size: 1, Port: 65536}, want: "spec.port"},
		{name: "image-with-space", spec: cachev1.MemcachedSpec{Size: 1, Image: "memcached :1"}, want: "spec.image"},
		{name: "my.cache", spec: cachev1.MemcachedSpec{Size: 1}, want: "names its Service"},
		{name: "1cache", spec: cachev1.MemcachedSpec{Size: 1}, want: "names its Service"},
		{name: strings.Repeat("a", 64), spec: cachev1.MemcachedSpec{Size: 1}, want: "names its Service"},
	}
	for _, tt := range tests {
		m := &cachev1.Memcached{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tt.name}, Spec: tt.spec}
		err := cp.Client.Create(t.Context(), m)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Memcached %s: %v, want it accepted", tt.name, err)
		case tt.want != "" && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Memcached %s: error = %v, want Invalid mentioning %q", tt.name, err, tt.want)
		case tt.want == "" && (m.Spec.Image == "" || m.Spec.Port == 0):
			t.Errorf("Memcached %s: image %q, port %d; want them defaulted", tt.name, m.Spec.Image, m.Spec.Port)
		}
	}
}

// TestSamplesBecomeReady creates the demo's samples and waits, as the
// demo does, until each is Ready with its pods.
func TestSamplesBecomeReady(t *testing.T) {
	e := start(t)
	for _, obj := range Samples(e.ns) {
		if err := e.c.Create(t.Context(), obj); err != nil {
			t.Fatalf("creating sample %s: %v", obj.GetName(), err)
		}
	}
	for _, obj := range Samples(e.ns) {
		m := obj.(*cachev1.Memcached)
		_, pods := e.waitReady(m.Name, m.Spec.Size, cachev1.DefaultImage)
		t.Logf("sample %s: pods %v", m.Name, slices.Sorted(maps.Keys(pods)))
	}
}
