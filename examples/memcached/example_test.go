package memcached_test

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/examples/memcached"
	cachev1 "github.com/bosunkit/bosun/examples/memcached/api/v1alpha1"
)

// Desired returns the children of a Memcached; the children step applies
// them.
func ExampleDesired() {
	m := &cachev1.Memcached{
		ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "cache"},
		Spec:       cachev1.MemcachedSpec{Size: 3},
	}
	objs, err := memcached.Desired(context.Background(), &bosun.Pass[*cachev1.Memcached]{Object: m})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, obj := range objs {
		switch o := obj.(type) {
		case *appsv1.Deployment:
			c := o.Spec.Template.Spec.Containers[0]
			fmt.Printf("Deployment %s: %d x %s, port %d, selector %v\n", o.Name, *o.Spec.Replicas, c.Image, c.Ports[0].ContainerPort, o.Spec.Selector.MatchLabels)
		case *corev1.Service:
			fmt.Printf("Service %s: port %d to %s\n", o.Name, o.Spec.Ports[0].Port, o.Spec.Ports[0].TargetPort.String())
		}
	}
	// Output:
	// Deployment cache: 3 x memcached:1.6.26-alpine3.19, port 11211, selector map[app.kubernetes.io/name:memcached cache.example.bosun.dev/memcached:cache]
	// Service cache: port 11211 to memcached
}

// DeploymentReadiness judges a Memcached's Deployment from its status, as
// the DeploymentReady condition reports it.
func ExampleDeploymentReadiness() {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Generation: 2},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](3)},
		Status:     appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 1},
	}
	fmt.Println(memcached.DeploymentReadiness(d))
	d.Status.ReadyReplicas = 3
	fmt.Println(memcached.DeploymentReadiness(d))
	// Output:
	// false waiting for 2 of 3 pods to be ready
	// true
}

// Samples are the Memcacheds that `bosun demo` creates.
func ExampleSamples() {
	for _, obj := range memcached.Samples("demo") {
		m := obj.(*cachev1.Memcached)
		fmt.Printf("%s/%s size %d\n", m.Namespace, m.Name, m.Spec.Size)
	}
	// Output:
	// demo/memcached-sample size 3
}
