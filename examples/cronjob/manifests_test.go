package cronjob

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/internal/manifests"
)

// pathRecorder is a webhook server that only records the paths registered
// with it.
type pathRecorder struct {
	crwebhook.Server
	mu    sync.Mutex
	paths []string
}

func (r *pathRecorder) Register(path string, _ http.Handler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.paths = append(r.paths, path)
}

// registeredPaths returns the paths SetupWebhookWithManager registers, in
// order.
func registeredPaths(t *testing.T) []string {
	t.Helper()
	scheme := controlplane.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	rec := &pathRecorder{Server: crwebhook.NewServer(crwebhook.Options{})}
	// The manager is never started: it needs no API server.
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0", WebhookServer: rec,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := SetupWebhookWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	slices.Sort(rec.paths)
	return rec.paths
}

// rendered is what config/default renders, by kind and name.
type rendered map[string]*unstructured.Unstructured

// get converts the object of kind named name into out, or fails the test.
func (r rendered) get(t *testing.T, kind, name string, out any) {
	t.Helper()
	u, ok := r[kind+"/"+name]
	if !ok {
		t.Fatalf("config/default renders no %s %s", kind, name)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		t.Fatalf("%s %s: %v", kind, name, err)
	}
}

// TestManifestsWiring renders config/default as `bosun manifests` does and
// checks that its parts find one another once kustomize has put them in
// cronjob-system and prefixed their names: both webhook configurations
// and the CRD's conversion call the webhook Service, on its port, at the
// paths SetupWebhookWithManager registers; the Service reaches the
// Deployment's webhook port; the cert-manager.io/inject-ca-from
// annotations name the Certificate that is rendered, whose DNS names are
// the Service's and whose issuer is rendered; and the Deployment mounts the
// Secret the Certificate writes where --webhook-cert-path points.
func TestManifestsWiring(t *testing.T) {
	_, objs, err := manifests.Build("config/default")
	if err != nil {
		t.Fatal(err)
	}
	r := rendered{}
	for _, o := range objs {
		r[o.GetKind()+"/"+o.GetName()] = o
	}
	const ns = "cronjob-system"

	var svc corev1.Service
	r.get(t, "Service", "cronjob-webhook-service", &svc)
	if svc.Namespace != ns || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 443 {
		t.Fatalf("webhook Service %s/%s, ports %+v; want it in %s, on port 443", svc.Namespace, svc.Name, svc.Spec.Ports, ns)
	}
	// calls checks a client configuration against the Service and the
	// registered paths.
	registered := registeredPaths(t)
	var called []string
	calls := func(what string, ref *admissionregistrationv1.ServiceReference) {
		t.Helper()
		switch {
		case ref == nil:
			t.Errorf("%s calls no Service", what)
		case ref.Namespace != svc.Namespace || ref.Name != svc.Name:
			t.Errorf("%s calls Service %s/%s, want %s/%s", what, ref.Namespace, ref.Name, svc.Namespace, svc.Name)
		case ref.Port != nil && *ref.Port != svc.Spec.Ports[0].Port:
			t.Errorf("%s calls port %d, the Service has %d", what, *ref.Port, svc.Spec.Ports[0].Port)
		case ref.Path == nil || !slices.Contains(registered, *ref.Path):
			t.Errorf("%s calls path %q, not one the webhooks register (%v)", what, ptr.Deref(ref.Path, ""), registered)
		default:
			called = append(called, *ref.Path)
		}
	}

	// The certificate, and what injects its CA.
	cert := r["Certificate/cronjob-serving-cert"]
	if cert == nil || cert.GetNamespace() != ns {
		t.Fatalf("no Certificate cronjob-serving-cert in %s", ns)
	}
	injects := func(what string, annotations map[string]string) {
		t.Helper()
		if got, want := annotations["cert-manager.io/inject-ca-from"], cert.GetNamespace()+"/"+cert.GetName(); got != want {
			t.Errorf("%s: cert-manager.io/inject-ca-from %q, want %q, the Certificate", what, got, want)
		}
	}
	dnsNames, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
	if want := []string{svc.Name + "." + svc.Namespace + ".svc", svc.Name + "." + svc.Namespace + ".svc.cluster.local"}; !cmp.Equal(want, dnsNames) {
		t.Errorf("Certificate DNS names %v, want the Service's %v", dnsNames, want)
	}
	issuer, _, _ := unstructured.NestedString(cert.Object, "spec", "issuerRef", "name")
	if iss := r["Issuer/"+issuer]; iss == nil || iss.GetNamespace() != ns {
		t.Errorf("the Certificate's issuer %q is not an Issuer rendered in %s", issuer, ns)
	}
	secret, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName")

	var mutating admissionregistrationv1.MutatingWebhookConfiguration
	r.get(t, "MutatingWebhookConfiguration", "cronjob-mutating-webhook-configuration", &mutating)
	injects("the MutatingWebhookConfiguration", mutating.Annotations)
	for _, w := range mutating.Webhooks {
		calls("mutating webhook "+w.Name, w.ClientConfig.Service)
	}
	var validating admissionregistrationv1.ValidatingWebhookConfiguration
	r.get(t, "ValidatingWebhookConfiguration", "cronjob-validating-webhook-configuration", &validating)
	injects("the ValidatingWebhookConfiguration", validating.Annotations)
	for _, w := range validating.Webhooks {
		calls("validating webhook "+w.Name, w.ClientConfig.Service)
	}

	var crd apiextensionsv1.CustomResourceDefinition
	r.get(t, "CustomResourceDefinition", CRDName, &crd)
	injects("the CRD", crd.Annotations)
	if conv := crd.Spec.Conversion; conv == nil || conv.Strategy != apiextensionsv1.WebhookConverter || conv.Webhook == nil || conv.Webhook.ClientConfig == nil {
		t.Errorf("CRD conversion %+v, want a webhook", conv)
	} else {
		ref := conv.Webhook.ClientConfig.Service
		if ref == nil {
			t.Error("the CRD's conversion calls no Service")
		} else {
			calls("the CRD's conversion", &admissionregistrationv1.ServiceReference{Namespace: ref.Namespace, Name: ref.Name, Path: ref.Path, Port: ref.Port})
		}
		if !slices.Contains(conv.Webhook.ConversionReviewVersions, "v1") {
			t.Errorf("conversionReviewVersions %v, want v1", conv.Webhook.ConversionReviewVersions)
		}
	}
	var versions []string
	for _, v := range crd.Spec.Versions {
		versions = append(versions, v.Name)
		if v.Storage != (v.Name == "v1") {
			t.Errorf("version %s: storage %v; v1, the hub, is the storage version", v.Name, v.Storage)
		}
	}
	if !cmp.Equal([]string{"v1", "v2"}, versions) {
		t.Errorf("CRD versions %v, want [v1 v2]", versions)
	}
	// Every registered path is called by something.
	slices.Sort(called)
	if diff := cmp.Diff(registered, slices.Compact(called)); diff != "" {
		t.Errorf("paths registered (-) and called (+):\n%s", diff)
	}

	// The Deployment: selected by the Service, serving on its target port
	// with the certificate's Secret.
	var dep appsv1.Deployment
	r.get(t, "Deployment", "cronjob-controller-manager", &dep)
	pod := dep.Spec.Template
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) {
		t.Errorf("the Service selects %v, the Deployment's pods are labelled %v", svc.Spec.Selector, pod.Labels)
	}
	c := pod.Spec.Containers[0]
	target := svc.Spec.Ports[0].TargetPort
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool {
		return p.ContainerPort == 9443 && (p.Name == target.StrVal || target.IntVal == 9443)
	}) {
		t.Errorf("container ports %+v: none is 9443 and the Service's target port %s", c.Ports, target.String())
	}
	var certPath string
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--webhook-cert-path="); ok {
			certPath = v
		}
	}
	volume := ""
	for _, v := range pod.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == secret {
			volume = v.Name
		}
	}
	if volume == "" || secret == "" {
		t.Fatalf("no volume of the Deployment holds the Certificate's Secret %q", secret)
	}
	if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
		return m.Name == volume && m.MountPath == certPath && m.ReadOnly
	}) {
		t.Errorf("volume %s is not mounted read-only at --webhook-cert-path %q: mounts %+v", volume, certPath, c.VolumeMounts)
	}
}
