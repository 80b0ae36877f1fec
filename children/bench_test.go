package children

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/internal/testapi"
)

// benchDesired returns n ConfigMaps of a few keys each.
func benchDesired(n int) DesiredFunc[*testapi.Widget] {
	return func(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		objs := make([]client.Object, n)
		for i := range objs {
			objs[i] = &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "cm-" + strconv.Itoa(i), Labels: map[string]string{"app": req.Object.Name}},
				Data:       map[string]string{"a": "1", "b": "2", "config.yaml": "key: value\nother: 3\n"},
			}
		}
		return objs, nil
	}
}

// convergedRequest returns a request for a Widget whose n ConfigMaps are
// in the fake client exactly as the step would have applied them.
func convergedRequest(b *testing.B, step *Step[*testapi.Widget]) *bosun.Pass[*testapi.Widget] {
	b.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	if err := testapi.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "w", UID: "bench-uid"}}
	empty := fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(mapper).Build()
	req := &bosun.Pass[*testapi.Widget]{Controller: "bench", Object: w, Client: empty}
	p := &pass{}
	if err := preparePass(context.Background(), step, req, p); err != nil {
		b.Fatal(err)
	}
	var live []client.Object
	for _, c := range p.children {
		cm := &corev1.ConfigMap{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(c.applied.Object, cm); err != nil {
			b.Fatal(err)
		}
		live = append(live, cm)
	}
	req.Client = fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(mapper).WithObjects(live...).Build()
	return req
}

// BenchmarkConvergedPass measures a pass of the children step over a
// parent whose n ConfigMaps are all up to date (Plan: the desired set,
// stamping and hashing, a cache read and a comparison per child, and the
// list of members for pruning), against a hand-written check that reads
// each ConfigMap from the same client and compares its data and labels.
// Both read from a fake client, which copies objects as the manager's
// cache does.
func BenchmarkConvergedPass(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		desired := benchDesired(n)
		step := NewStep("bench", desired, []Kind{Of(&corev1.ConfigMap{})})
		req := convergedRequest(b, step)
		ctx := context.Background()

		b.Run(fmt.Sprintf("handwritten/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				objs, _ := desired(ctx, req)
				for _, o := range objs {
					want := o.(*corev1.ConfigMap)
					var got corev1.ConfigMap
					if err := req.Client.Get(ctx, client.ObjectKey{Namespace: "bench", Name: want.Name}, &got); err != nil {
						b.Fatal(err)
					}
					if !reflect.DeepEqual(want.Data, got.Data) || got.Labels["app"] != want.Labels["app"] {
						b.Fatal("not converged")
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/child")
		})
		b.Run(fmt.Sprintf("step/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				plan, err := step.Plan(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				if !plan.Empty() {
					b.Fatalf("plan %+v, want nothing to do", plan)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/child")
		})
	}
}
