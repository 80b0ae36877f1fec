package controlplane_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/bosunkit/bosun/controlplane"
)

// With KUBEBUILDER_ASSETS set, Binaries builds nothing and checks that the
// directory holds both binaries.
func ExampleBinaries() {
	old, had := os.LookupEnv("KUBEBUILDER_ASSETS")
	defer func() {
		if had {
			os.Setenv("KUBEBUILDER_ASSETS", old)
		} else {
			os.Unsetenv("KUBEBUILDER_ASSETS")
		}
	}()

	empty, err := os.MkdirTemp("", "assets")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(empty)
	os.Setenv("KUBEBUILDER_ASSETS", empty)

	_, err = controlplane.Binaries(context.Background(), controlplane.Options{Progress: os.Stdout})
	fmt.Println(errors.Is(err, controlplane.ErrMissingBinary))
	// Output:
	// true
}

// Start a control plane with a CRD, use its client, and hand a kubeconfig to
// kubectl.
func ExampleStart() {
	ctx := context.Background()
	cp, err := controlplane.Start(ctx, controlplane.Options{
		CRDPaths: []string{"config/crd"},
		Progress: os.Stderr,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		if err := cp.Stop(); err != nil {
			log.Print(err)
		}
	}()

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}
	if err := cp.Client.Create(ctx, ns); err != nil {
		log.Fatal(err)
	}
	if err := cp.WriteKubeconfig("kubeconfig"); err != nil {
		log.Fatal(err)
	}
	fmt.Println("kubectl --kubeconfig kubeconfig get namespaces")
}

// With ControllerManager set, the garbage collector and the namespace
// controller run: deleting a namespace deletes what it holds, then the
// namespace itself.
func ExampleOptions_controllerManager() {
	ctx := context.Background()
	cp, err := controlplane.Start(ctx, controlplane.Options{ControllerManager: true, Progress: os.Stderr})
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		if err := cp.Stop(); err != nil {
			log.Print(err)
		}
	}()

	controllers, err := controlplane.RunningControllers(ctx, cp.Client)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(controllers)

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "short-lived"}}
	if err := cp.Client.Create(ctx, ns); err != nil {
		log.Fatal(err)
	}
	if err := cp.Client.Delete(ctx, ns); err != nil {
		log.Fatal(err)
	}
	// The namespace goes within seconds; without ControllerManager it
	// would stay Terminating.
}

// With Nodes set as well, pods run: a Deployment's pods are placed on the
// simulated nodes and become Ready, and the Deployment reports them, as in a
// cluster. A Job's pods succeed unless their template carries
// PodExitCodeLabel.
func ExampleOptions_nodes() {
	ctx := context.Background()
	cp, err := controlplane.Start(ctx, controlplane.Options{ControllerManager: true, Nodes: 2, Progress: os.Stderr})
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		if err := cp.Stop(); err != nil {
			log.Print(err)
		}
	}()

	labels := map[string]string{"app": "web"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
	if err := cp.Client.Create(ctx, deploy); err != nil {
		log.Fatal(err)
	}
	// Within a second or two deploy.Status.ReadyReplicas is 3.
}
