package chart_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bosunkit/bosun/cmd/bosun/internal/chart"
	"github.com/bosunkit/bosun/internal/manifests"
)

// render writes the chart of an example's config/default and renders it
// through Helm's engine with vals into namespace; it returns the
// manifests' objects and the rendered ones.
func render(t *testing.T, example, namespace string, vals map[string]any) (kustomized, rendered []*unstructured.Unstructured) {
	t.Helper()
	_, objs, err := manifests.Build(filepath.Join("..", "..", "..", "..", "examples", example, "config", "default"))
	if err != nil {
		t.Fatal(err)
	}
	rendered, _ = renderObjects(t, objs, namespace, vals)
	return objs, rendered
}

// byKey indexes objects by kind, namespace and name.
func byKey(objs []*unstructured.Unstructured) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, o := range objs {
		out[o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName()] = o.Object
	}
	return out
}

// TestDefaultsRenderTheManifests: with its default values, in the
// manifests' namespace, the chart renders the objects it was made of, but
// for their Namespace (helm install --create-namespace makes it) and the
// CRDs' keep annotation.
func TestDefaultsRenderTheManifests(t *testing.T) {
	for _, example := range []string{"cronjob", "memcached", "hello"} {
		t.Run(example, func(t *testing.T) {
			objs, rendered := render(t, example, example+"-system", nil)
			want := wantDefaults(objs, example+"-system", example+"-system")
			if diff := cmp.Diff(byKey(want), byKey(rendered)); diff != "" {
				t.Errorf("the chart's defaults against the manifests (-manifests +chart):\n%s", diff)
			}
		})
	}
}

// TestValues: each value changes what it says and nothing else, and the
// release namespace replaces every reference to the manifests'.
func TestValues(t *testing.T) {
	vals := map[string]any{
		"image":          map[string]any{"repository": "registry.example/cronjob", "tag": "v2", "pullPolicy": "Always"},
		"replicas":       3,
		"resources":      map[string]any{"limits": map[string]any{"memory": "1Gi"}},
		"leaderElection": map[string]any{"enabled": false},
		"metrics":        map[string]any{"enabled": false},
		"certManager":    map[string]any{"enabled": false},
		"crds":           map[string]any{"keep": false},
	}
	_, rendered := render(t, "cronjob", "shop", vals)
	var text strings.Builder
	for _, o := range rendered {
		if o.GetNamespace() != "" && o.GetNamespace() != "shop" {
			t.Errorf("%s %s is in namespace %s, want the release's", o.GetKind(), o.GetName(), o.GetNamespace())
		}
		if o.GetAPIVersion() == "cert-manager.io/v1" {
			t.Errorf("%s %s is rendered with certManager.enabled false", o.GetKind(), o.GetName())
		}
		for k := range o.GetAnnotations() {
			if strings.HasPrefix(k, "cert-manager.io/") || k == "helm.sh/resource-policy" {
				t.Errorf("%s %s has the annotation %s", o.GetKind(), o.GetName(), k)
			}
		}
		if o.GetKind() == "Service" && strings.Contains(o.GetName(), "metrics") {
			t.Errorf("the metrics Service %s is rendered with metrics.enabled false", o.GetName())
		}
		b, err := o.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		text.Write(b)
	}
	if strings.Contains(text.String(), "cronjob-system") {
		t.Errorf("the manifests' namespace is left in the rendered objects:\n%s", text.String())
	}
	var dep *unstructured.Unstructured
	for _, o := range rendered {
		if o.GetKind() == "Deployment" {
			dep = o
		}
	}
	if dep == nil {
		t.Fatal("no Deployment rendered")
	}
	replicas, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas")
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	c := containers[0].(map[string]any)
	got := map[string]any{"replicas": replicas, "image": c["image"], "pullPolicy": c["imagePullPolicy"], "args": c["args"], "resources": c["resources"]}
	want := map[string]any{
		"replicas": int64(3), "image": "registry.example/cronjob:v2", "pullPolicy": "Always",
		"args": []any{"--health-probe-bind-address=:8081", "--metrics-bind-address=0", "--graceful-shutdown-timeout=30s",
			"--webhook-cert-path=/tmp/k8s-webhook-server/serving-certs"},
		// Helm merges a value's map with the default's.
		"resources": map[string]any{
			"limits":   map[string]any{"cpu": "500m", "memory": "1Gi"},
			"requests": map[string]any{"cpu": "10m", "memory": "64Mi"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the manager Deployment (-want +got):\n%s", diff)
	}
}

// TestWriteRefuses: manifests without exactly one Deployment, or without a
// namespace, make no chart, and say why.
func TestWriteRefuses(t *testing.T) {
	deployment := func(ns string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apps/v1")
		u.SetKind("Deployment")
		u.SetName("manager")
		u.SetNamespace(ns)
		return u
	}
	for _, tc := range []struct {
		name string
		objs []*unstructured.Unstructured
		want string
	}{
		{"no Deployment", nil, "have 0"},
		{"two Deployments", []*unstructured.Unstructured{deployment("a"), deployment("a")}, "have 2"},
		{"no namespace", []*unstructured.Unstructured{deployment("")}, "name no namespace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := chart.Write(t.TempDir(), tc.objs, chart.Options{})
			if !errors.Is(err, chart.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Write = %v, want ErrInvalid saying %q", err, tc.want)
			}
		})
	}
}
