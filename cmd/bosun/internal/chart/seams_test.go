package chart_test

import (
	"bufio"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	yamlutil "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/bosunkit/bosun/cmd/bosun/internal/chart"
)

// objects decodes a multi-document YAML stream of manifests.
func objects(t *testing.T, text string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	r := yamlutil.NewYAMLReader(bufio.NewReader(strings.NewReader(text)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		if string(js) == "null" {
			continue
		}
		var u unstructured.Unstructured
		if err := u.UnmarshalJSON(js); err != nil {
			t.Fatal(err)
		}
		out = append(out, &u)
	}
}

// renderObjects writes the chart of objs and renders it through Helm's
// engine with vals into namespace; it returns the rendered objects and the
// chart's directory.
func renderObjects(t *testing.T, objs []*unstructured.Unstructured, namespace string, vals map[string]any) ([]*unstructured.Unstructured, string) {
	t.Helper()
	dir := t.TempDir()
	if err := chart.Write(dir, objs, chart.Options{}); err != nil {
		t.Fatal(err)
	}
	ch, err := loader.Load(dir)
	if err != nil {
		t.Fatalf("Helm cannot load the chart: %v", err)
	}
	top, err := util.ToRenderValues(ch, vals, common.ReleaseOptions{Name: "rel", Namespace: namespace, IsInstall: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(ch, top)
	if err != nil {
		t.Fatalf("Helm cannot render the chart: %v", err)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	var rendered []*unstructured.Unstructured
	for _, name := range names {
		r := yamlutil.NewYAMLReader(bufio.NewReader(strings.NewReader(files[name])))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			js, err := yaml.YAMLToJSON(doc)
			if err != nil {
				t.Fatalf("%s does not decode: %v\n%s", name, err, files[name])
			}
			if string(js) == "null" {
				continue
			}
			var u unstructured.Unstructured
			if err := u.UnmarshalJSON(js); err != nil {
				t.Fatalf("%s does not decode: %v\n%s", name, err, files[name])
			}
			rendered = append(rendered, &u)
		}
	}
	return rendered, dir
}

// wantDefaults is objs as the chart's defaults should render them into
// namespace: without the Namespace, CRDs with the keep annotation, and
// every object in the manifests' namespace moved to namespace.
func wantDefaults(objs []*unstructured.Unstructured, from, to string) []*unstructured.Unstructured {
	var want []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			continue
		}
		o = o.DeepCopy()
		if o.GetNamespace() == from {
			o.SetNamespace(to)
		}
		// A binding's subjects follow the release namespace (docs/DEPLOY.md).
		subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
		for _, s := range subjects {
			if m, _ := s.(map[string]any); m["namespace"] == from {
				m["namespace"] = to
			}
		}
		if subjects != nil {
			_ = unstructured.SetNestedSlice(o.Object, subjects, "subjects")
		}
		if o.GetKind() == "CustomResourceDefinition" {
			a := o.GetAnnotations()
			if a == nil {
				a = map[string]string{}
			}
			a["helm.sh/resource-policy"] = "keep"
			o.SetAnnotations(a)
		}
		want = append(want, o)
	}
	return want
}

// managerYAML is a manager Deployment in namespace NS, as bosun init
// writes it after kustomize.
const managerYAML = `apiVersion: v1
kind: Namespace
metadata:
  name: NS
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop-controller-manager
  namespace: NS
  labels:
    app.kubernetes.io/name: shop
spec:
  replicas: 2
  selector:
    matchLabels:
      app.kubernetes.io/name: shop
  template:
    metadata:
      labels:
        app.kubernetes.io/name: shop
    spec:
      serviceAccountName: shop-controller-manager
      containers:
      - name: manager
        image: shop:dev
        args:
        - --leader-elect
        - --metrics-bind-address=:8443
        ports:
        - name: metrics
          containerPort: 8443
        resources:
          limits:
            memory: 256Mi
`

func withNS(text, ns string) string { return strings.ReplaceAll(text, "NS", ns) }

// crdYAML is the CRD bosun init writes for --kind Widget (group
// shop.example.com: the operator's name and the default domain), and a
// ClusterRole that grants it.
const crdYAML = `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.shop.example.com
spec:
  group: shop.example.com
  names:
    kind: Widget
    listKind: WidgetList
    plural: widgets
    singular: widget
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        description: A Widget. Its replicas default to 1; the default is system-wide, see system:defaults.
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: shop-manager-role
rules:
- apiGroups: [shop.example.com]
  resources: [widgets]
  verbs: [get, list, watch, update, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: shop-manager-auth-delegator
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:auth-delegator
subjects:
- kind: ServiceAccount
  name: shop-controller-manager
  namespace: NS
`

// TestNamespaceOnlyWhereItIsOne: the chart moves the manifests'
// namespace to the release's "everywhere", but it finds the namespace by
// text: wherever its name stands between dots, colons, slashes or spaces,
// in an API group, a CRD's name, a label value, a role's name or a
// description, it becomes {{ .Release.Namespace }} too. The defaults
// render the manifests only in their own namespace; installed anywhere
// else, the chart renames the CRD and the API group (an invalid CRD whose
// name no longer matches its group, RBAC for a group that does not
// exist), relabels the Deployment, and rewrites text.
func TestNamespaceOnlyWhereItIsOne(t *testing.T) {
	for _, ns := range []string{
		"shop",    // a user drops "-system": the operator's name is the namespace, and the API group's first label
		"system",  // kustomize without a namespace transformer keeps config/manager's "system"
		"default", // a user installs into the default namespace
	} {
		t.Run(ns, func(t *testing.T) {
			objs := objects(t, withNS(managerYAML+crdYAML, ns))
			rendered, _ := renderObjects(t, objs, "prod", nil)
			if diff := cmp.Diff(byKey(wantDefaults(objs, ns, "prod")), byKey(rendered)); diff != "" {
				t.Errorf("manifests in namespace %q, chart installed into namespace prod with its defaults: objects other than the namespace changed (-want +got):\n%s", ns, diff)
			}
		})
	}
}

// TestTemplateTextInManifests: text of the manifests that looks like a
// template ("{{ ... }}": a Go template in a CRD field's description, a
// ConfigMap of templates the operator renders, an annotation) is written
// into the chart's templates as it is, so Helm executes it instead of
// rendering it as text.
func TestTemplateTextInManifests(t *testing.T) {
	objs := objects(t, withNS(managerYAML, "shop-system")+`---
apiVersion: v1
kind: ConfigMap
metadata:
  name: shop-templates
  namespace: shop-system
data:
  greeting: 'Hello {{ .Name }}, from {{ .Namespace }}'
  fallback: '{{ "{{" }} is how Helm escapes it'
`)
	rendered, _ := renderObjects(t, objs, "shop-system", nil)
	if diff := cmp.Diff(byKey(wantDefaults(objs, "shop-system", "shop-system")), byKey(rendered)); diff != "" {
		t.Errorf("a ConfigMap holding template text, with the chart's defaults (-manifests +chart):\n%s", diff)
	}
}

// TestBareManager: a manager container with no resources and a
// Deployment with no replicas (left to a HorizontalPodAutoscaler, which
// owns the field) render with resources: {} and replicas: 1: the defaults
// do not render the manifests, and every helm upgrade sets replicas back
// to 1 under the autoscaler.
func TestBareManager(t *testing.T) {
	objs := objects(t, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop-controller-manager
  namespace: shop-system
spec:
  selector:
    matchLabels:
      app: shop
  template:
    metadata:
      labels:
        app: shop
    spec:
      containers:
      - name: manager
        image: registry.example/shop:v1
`)
	rendered, _ := renderObjects(t, objs, "shop-system", nil)
	if diff := cmp.Diff(byKey(wantDefaults(objs, "shop-system", "shop-system")), byKey(rendered)); diff != "" {
		t.Errorf("a Deployment without replicas and a container without resources, args or ports (-manifests +chart):\n%s", diff)
	}
}

// TestMetricsBindAddressHost: --metrics-bind-address with a host
// (0.0.0.0:8443, 127.0.0.1:8080 behind a proxy sidecar) is rewritten to
// :PORT, so the defaults change where the manager listens: a manager meant
// to serve metrics on loopback only serves them on every interface.
func TestMetricsBindAddressHost(t *testing.T) {
	objs := objects(t, strings.Replace(withNS(managerYAML, "shop-system"),
		"--metrics-bind-address=:8443", "--metrics-bind-address=127.0.0.1:8443", 1))
	rendered, _ := renderObjects(t, objs, "shop-system", nil)
	if diff := cmp.Diff(byKey(wantDefaults(objs, "shop-system", "shop-system")), byKey(rendered)); diff != "" {
		t.Errorf("a metrics address bound to a host, with the chart's defaults (-manifests +chart):\n%s", diff)
	}
}

// TestMetricsPortOfAnotherService: every Service with a port or
// targetPort equal to the metrics port is taken for the metrics Service:
// metrics.enabled=false removes it and metrics.port renumbers it. Here the
// operator's own HTTPS API Service listens on 8443 (the metrics port) and
// targets the manager's 9443; turning metrics off must leave it, and
// moving the metrics port must not move it.
func TestMetricsPortOfAnotherService(t *testing.T) {
	objs := objects(t, withNS(managerYAML, "shop-system")+`---
apiVersion: v1
kind: Service
metadata:
  name: shop-api
  namespace: shop-system
spec:
  selector:
    app.kubernetes.io/name: shop
  ports:
  - name: api
    port: 8443
    targetPort: 9443
`)
	rendered, _ := renderObjects(t, objs, "shop-system", map[string]any{"metrics": map[string]any{"enabled": false}})
	if !slices.ContainsFunc(rendered, func(o *unstructured.Unstructured) bool { return o.GetName() == "shop-api" }) {
		t.Errorf("with metrics.enabled=false the Service shop-api, which is not the metrics Service, is not rendered")
	}
	rendered, _ = renderObjects(t, objs, "shop-system", map[string]any{"metrics": map[string]any{"port": 9090}})
	for _, o := range rendered {
		if o.GetName() == "shop-api" {
			ports, _, _ := unstructured.NestedSlice(o.Object, "spec", "ports")
			if p := ports[0].(map[string]any)["port"]; p != int64(8443) {
				t.Errorf("with metrics.port=9090 the Service shop-api listens on %v, want 8443 (it is not the metrics Service)", p)
			}
		}
	}
}

// TestImageReference: the image is split at its last colon after the
// last slash. A digest reference (what a release pipeline pins with
// kustomize edit set image) becomes repository "...@sha256" and tag
// "<hex>": the chart is named "shop@sha256", its appVersion is the hex,
// and image.tag=v2 renders "registry.example/shop@sha256:v2". A reference
// without a tag renders with ":latest" appended.
func TestImageReference(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	for _, image := range []string{"registry.example/shop@" + digest, "registry.example:5000/shop"} {
		t.Run(image, func(t *testing.T) {
			objs := objects(t, strings.Replace(withNS(managerYAML, "shop-system"), "image: shop:dev", "image: "+image, 1))
			rendered, dir := renderObjects(t, objs, "shop-system", nil)
			if diff := cmp.Diff(byKey(wantDefaults(objs, "shop-system", "shop-system")), byKey(rendered)); diff != "" {
				t.Errorf("image %s, with the chart's defaults (-manifests +chart):\n%s", image, diff)
			}
			ch, err := loader.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if name := ch.Metadata.Name; name != "shop" {
				t.Errorf("image %s: the chart is named %q, want shop", image, name)
			}
			rendered, _ = renderObjects(t, objs, "shop-system", map[string]any{"image": map[string]any{"tag": "v2"}})
			for _, o := range rendered {
				if o.GetKind() == "Deployment" {
					cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
					if got := cs[0].(map[string]any)["image"]; strings.Contains(got.(string), "@sha256:v2") {
						t.Errorf("image %s with image.tag=v2 renders %s, not an image reference", image, got)
					}
				}
			}
		})
	}
}

// TestReleaseNamespaceIsAString: the namespace is written unquoted
// (namespace: {{ .Release.Namespace }}), so a valid namespace name that
// YAML reads as another type (all digits, as a team or ticket number)
// renders as a number, and the objects do not decode.
func TestReleaseNamespaceIsAString(t *testing.T) {
	objs := objects(t, withNS(managerYAML, "shop-system"))
	dir := t.TempDir()
	if err := chart.Write(dir, objs, chart.Options{}); err != nil {
		t.Fatal(err)
	}
	ch, err := loader.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	top, err := util.ToRenderValues(ch, nil, common.ReleaseOptions{Name: "rel", Namespace: "1234", IsInstall: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(ch, top)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		js, err := yaml.YAMLToJSON([]byte(text))
		if err != nil || string(js) == "null" {
			continue
		}
		var u unstructured.Unstructured
		if err := u.UnmarshalJSON(js); err != nil {
			t.Errorf("%s, installed into namespace 1234 (a valid name), does not decode: %v\n%s", name, err, text)
		} else if _, ok := u.Object["metadata"].(map[string]any)["namespace"]; ok && u.GetNamespace() != "1234" {
			t.Errorf("%s, installed into namespace 1234 (a valid name), has metadata.namespace %#v, not the string \"1234\"",
				name, u.Object["metadata"].(map[string]any)["namespace"])
		}
	}
}

// TestNamespaceCreateKeepsItsLabels: the examples' Namespace enforces the
// restricted Pod Security Standard, which helm install --create-namespace
// does not set; with namespace.create the chart renders it, named after the
// release's namespace, with its labels; without, it renders no Namespace.
func TestNamespaceCreateKeepsItsLabels(t *testing.T) {
	objs, rendered := render(t, "hello", "shop", map[string]any{"namespace": map[string]any{"create": true}})
	var labels map[string]string
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			labels = o.GetLabels()
		}
	}
	if labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Fatalf("the hello example's Namespace no longer enforces restricted: %v", labels)
	}
	var got []string
	for _, o := range rendered {
		if o.GetKind() == "Namespace" {
			got = append(got, o.GetName()+" "+o.GetLabels()["pod-security.kubernetes.io/enforce"])
		}
	}
	if diff := cmp.Diff([]string{"shop restricted"}, got); diff != "" {
		t.Errorf("the Namespaces rendered with namespace.create (-want +got):\n%s", diff)
	}
	_, rendered = render(t, "hello", "shop", nil)
	for _, o := range rendered {
		if o.GetKind() == "Namespace" {
			t.Errorf("the chart's defaults render the Namespace %s; helm install --create-namespace makes it", o.GetName())
		}
	}
}
