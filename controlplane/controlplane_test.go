package controlplane_test

import (
	"bytes"
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/bosunkit/bosun/controlplane"
)

var widgetGVR = schema.GroupVersionResource{Group: "test.bosun.dev", Version: "v1", Resource: "widgets"}

// widgetCRD is a small namespaced CRD with an integer spec.size.
func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: widgetGVR.Resource + "." + widgetGVR.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: widgetGVR.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList",
			},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: widgetGVR.Version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{
					OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
						Type: "object",
						Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"spec": {
								Type:       "object",
								Properties: map[string]apiextensionsv1.JSONSchemaProps{"size": {Type: "integer"}},
							},
						},
					},
				},
			}},
		},
	}
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of two
// processes' output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Len()
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestStart(t *testing.T) {
	ctx := t.Context()
	var output syncBuffer
	cp, err := controlplane.Start(ctx, controlplane.Options{
		CRDs:           []*apiextensionsv1.CustomResourceDefinition{widgetCRD()},
		Progress:       os.Stderr,
		Output:         &output,
		APIServerFlags: map[string][]string{"service-cluster-ip-range": {"10.77.0.0/24"}},
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	if diff := cmp.Diff([]string{widgetCRD().Name}, crdNames(cp.CRDs)); diff != "" {
		t.Errorf("installed CRDs (-want +got):\n%s", diff)
	}
	if output.Len() == 0 {
		t.Error("Options.Output received nothing from kube-apiserver and etcd")
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "controlplane-test"}}
	if err := cp.Client.Create(ctx, ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	widget := &unstructured.Unstructured{}
	widget.SetGroupVersionKind(widgetGVR.GroupVersion().WithKind("Widget"))
	widget.SetNamespace(ns.Name)
	widget.SetName("w1")
	if err := unstructured.SetNestedField(widget.Object, int64(3), "spec", "size"); err != nil {
		t.Fatal(err)
	}
	if err := cp.Client.Create(ctx, widget); err != nil {
		t.Fatalf("creating widget: %v", err)
	}

	// The extra kube-apiserver flag took effect.
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "s"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}
	if err := cp.Client.Create(ctx, svc); err != nil {
		t.Fatalf("creating service: %v", err)
	}
	if ip, err := netip.ParseAddr(svc.Spec.ClusterIP); err != nil || !netip.MustParsePrefix("10.77.0.0/24").Contains(ip) {
		t.Errorf("service cluster IP = %q, want one in 10.77.0.0/24 set through APIServerFlags", svc.Spec.ClusterIP)
	}

	// Kubeconfig works with plain client-go.
	kubeconfig, err := cp.Kubeconfig()
	if err != nil {
		t.Fatalf("Kubeconfig: %v", err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatalf("parsing kubeconfig: %v", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	nsList, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing namespaces through the kubeconfig: %v", err)
	}
	if !containsNamespace(nsList.Items, ns.Name) {
		t.Errorf("namespaces listed through the kubeconfig lack %s", ns.Name)
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		info, err := cs.Discovery().ServerVersion()
		if err != nil {
			t.Fatalf("server version: %v", err)
		}
		if info.GitVersion != controlplane.KubernetesVersion {
			t.Errorf("server version = %q, want %q", info.GitVersion, controlplane.KubernetesVersion)
		}
	}

	// WriteKubeconfig writes a private file that kubectl-style loading reads.
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(path); err != nil {
		t.Fatalf("WriteKubeconfig: %v", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("kubeconfig file mode = %v, %v; want -rw-------", fi.Mode().Perm(), err)
	}
	fileCfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("loading written kubeconfig: %v", err)
	}
	dyn, err := dynamic.NewForConfig(fileCfg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := dyn.Resource(widgetGVR).Namespace(ns.Name).Get(ctx, "w1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting widget through the written kubeconfig: %v", err)
	}
	if size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size"); size != 3 {
		t.Errorf("widget spec.size = %d, want 3", size)
	}

	if err := cp.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := cp.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	stopped, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := cp.Client.List(stopped, &corev1.NamespaceList{}); err == nil {
		t.Error("the API server still answers after Stop")
	}
}

func TestStartReportsProcessOutput(t *testing.T) {
	_, err := controlplane.Start(t.Context(), controlplane.Options{
		APIServerFlags: map[string][]string{"no-such-flag": {"x"}},
		StartTimeout:   20 * time.Second,
	})
	if err == nil {
		t.Fatal("Start with an unknown kube-apiserver flag succeeded")
	}
	t.Logf("the error reads:\n%v", err)
	for _, want := range []string{"last lines of kube-apiserver's output", "unknown flag: --no-such-flag", "last lines of etcd's output", "how to fix"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
}

func TestStartMissingCRDPath(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-crds-here")
	_, err := controlplane.Start(t.Context(), controlplane.Options{CRDPaths: []string{missing}})
	if err == nil {
		t.Fatal("Start with a missing CRD path succeeded")
	}
	if !strings.Contains(err.Error(), missing) {
		t.Errorf("error does not name the missing path %s:\n%v", missing, err)
	}
}

func crdNames(crds []*apiextensionsv1.CustomResourceDefinition) []string {
	var names []string
	for _, c := range crds {
		names = append(names, c.Name)
	}
	return names
}

func containsNamespace(items []corev1.Namespace, name string) bool {
	for _, ns := range items {
		if ns.Name == name {
			return true
		}
	}
	return false
}
