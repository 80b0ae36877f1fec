package children_test

import (
	"context"
	"fmt"

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
