package children_test

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/children"
	"github.com/bosunkit/bosun/internal/testapi"
)

// A set of ConfigMaps, one per unit of spec.value, planned against a
// cluster that holds an older member of the set: Plan tells what Do would
// create, update and delete, and changes nothing.
func ExampleStep_Plan() {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = testapi.AddToScheme(scheme)

	desired := func(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		var objs []client.Object
		for i := range req.Object.Spec.Value {
			objs = append(objs, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("part-%d", i)},
				Data:       map[string]string{"of": fmt.Sprint(req.Object.Spec.Value)},
			})
		}
		return objs, nil
	}
	step := children.NewStep("parts", desired, []children.Kind{children.Of(&corev1.ConfigMap{})})

	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "w", UID: "1234"}, Spec: testapi.WidgetSpec{Value: 2}}
	member := func(name, of string) *corev1.ConfigMap {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, Labels: map[string]string{
				children.LabelSet: "parts", children.LabelOwner: "1234",
			}},
			Data: map[string]string{"of": of},
		}
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	c := fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(mapper).WithObjects(member("part-0", "3"), member("part-2", "3")).Build()

	plan, err := step.Plan(context.Background(), &bosun.Pass[*testapi.Widget]{Object: w, Client: c})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("create:", plan.Create)
	fmt.Println("update:", plan.Update)
	fmt.Println("delete:", plan.Delete)
	// Output:
	// create: [ConfigMap demo/part-1]
	// update: [ConfigMap demo/part-0]
	// delete: [ConfigMap demo/part-2]
}

// A Deployment per zone, rolled out one at a time: with MaxUnavailable 1
// and every zone ready, a change of the image updates zone-a in the next
// pass and holds the others until it is ready again.
func ExampleKind_maxUnavailable() {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = testapi.AddToScheme(scheme)

	zones := []string{"zone-a", "zone-b", "zone-c"}
	deployment := func(zone, image string) *appsv1.Deployment {
		labels := map[string]string{"zone": zone}
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: zone},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: image}}},
				},
			},
		}
	}
	desired := func(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		var objs []client.Object
		for _, z := range zones {
			objs = append(objs, deployment(z, fmt.Sprintf("registry.example/web:%d", req.Object.Spec.Value)))
		}
		return objs, nil
	}
	step := children.NewStep("zones", desired, []children.Kind{{Object: &appsv1.Deployment{}, MaxUnavailable: 1}})

	// The live zones run version 1, and are ready.
	var live []client.Object
	for _, z := range zones {
		d := deployment(z, "registry.example/web:1")
		d.Namespace = "demo"
		d.Labels = map[string]string{children.LabelSet: "zones", children.LabelOwner: "1234"}
		d.Status = appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
			}}
		live = append(live, d)
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(appsv1.SchemeGroupVersion.WithKind("Deployment"), meta.RESTScopeNamespace)
	c := fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(mapper).WithObjects(live...).Build()

	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "w", UID: "1234"}, Spec: testapi.WidgetSpec{Value: 2}}
	plan, err := step.Plan(context.Background(), &bosun.Pass[*testapi.Widget]{Object: w, Client: c})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("update:", plan.Update)
	fmt.Println("held:", plan.Held)
	// Output:
	// update: [Deployment demo/zone-a]
	// held: [Deployment demo/zone-b Deployment demo/zone-c]
}
