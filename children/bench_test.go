package children

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
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

// benchDeployment is a Deployment as the manager's cache holds one: a
// pod template with probes, resources and environment, the step's labels,
// annotations and managedFields entry, and the status of a completed
// roll-out.
func benchDeployment() *appsv1.Deployment {
	now := metav1.Now()
	labels := map[string]string{"app": "web"}
	return &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "shop", Generation: 4, ResourceVersion: "12345", UID: "f0e1d2c3-b4a5-4968-8776-655443322110", CreationTimestamp: now,
			Labels:      map[string]string{"app": "web", LabelSet: "web", LabelOwner: "0c7e5b1e-5d0b-4a43-9f49-7d1c1f1e1e1e"},
			Annotations: map[string]string{"deployment.kubernetes.io/revision": "4", annotationHash: "sha256:0123456789abcdef0123456789abcdef"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "test.bosun.dev/v1", Kind: "Widget", Name: "shop", UID: "0c7e5b1e-5d0b-4a43-9f49-7d1c1f1e1e1e",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "web", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "apps/v1", Time: &now,
				FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{},` +
					`"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`)}},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: labels},
			ProgressDeadlineSeconds: ptr.To[int32](600), RevisionHistoryLimit: ptr.To[int32](10),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxUnavailable: ptr.To(intstr.FromString("25%")), MaxSurge: ptr.To(intstr.FromString("25%"))}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: "registry.example/web:1.2.3",
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
					Env: []corev1.EnvVar{{Name: "MODE", Value: "prod"}, {Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{
						FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}},
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
						Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
					},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
						PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3},
					TerminationMessagePath: "/dev/termination-log", ImagePullPolicy: corev1.PullIfNotPresent,
				}}, RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: ptr.To[int64](30), DNSPolicy: corev1.DNSClusterFirst},
			},
		},
		Status: availableStatus(4, 3),
	}
}

// BenchmarkDefaultReadiness measures the readiness of a typed Deployment
// as the cache holds one (kstatus: DefaultReadiness, which gives kstatus
// the fields it reads), against two baselines run alongside: the rule
// bosun had before it used kstatus (handwritten: a few comparisons of
// typed fields), and kstatus given the whole object converted to
// unstructured (whole).
func BenchmarkDefaultReadiness(b *testing.B) {
	d := benchDeployment()
	b.Run("handwritten", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if ready, msg := handwrittenDeploymentReady(d); !ready {
				b.Fatal(msg)
			}
		}
	})
	b.Run("kstatus", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if ready, msg := DefaultReadiness(d); !ready {
				b.Fatal(msg)
			}
		}
	})
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
			if err != nil {
				b.Fatal(err)
			}
			res, err := status.Compute(&unstructured.Unstructured{Object: content})
			if err != nil || res.Status != status.CurrentStatus {
				b.Fatal(res, err)
			}
		}
	})
}

// handwrittenDeploymentReady is the readiness bosun gave Deployments
// before it used kstatus, the baseline of BenchmarkDefaultReadiness.
func handwrittenDeploymentReady(d *appsv1.Deployment) (bool, string) {
	want := ptr.Deref(d.Spec.Replicas, 1)
	switch {
	case d.Status.ObservedGeneration < d.Generation:
		return false, "the deployment controller has not seen the latest spec"
	case d.Status.UpdatedReplicas < want:
		return false, fmt.Sprintf("%d of %d replicas updated", d.Status.UpdatedReplicas, want)
	case d.Status.AvailableReplicas < want:
		return false, fmt.Sprintf("%d of %d replicas available", d.Status.AvailableReplicas, want)
	}
	return true, ""
}
