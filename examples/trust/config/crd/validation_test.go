package crd_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/examples/trust"
	"github.com/bosunkit/bosun/examples/trust/config/crd"
	"github.com/bosunkit/bosun/examples/trust/config/webhook"
	"github.com/bosunkit/bosun/operator/manifest"
)

// TestValidationBesideTrustManager creates the same Bundles on an API
// server with this CRD and on one with trust-manager's: what
// trust-manager's CRD accepts or refuses, this one does too, but for what
// trust-manager's validating webhook refuses, which this CRD refuses
// itself, with a message of its own. On a third API server, with
// trust-manager's CRD and the operator's validating webhook (as in
// trust-manager's chart), the Bundles are refused as by this CRD, with the
// same messages. The defaults of the formats' passwords are the same.
func TestValidationBesideTrustManager(t *testing.T) {
	crds, err := manifest.DecodeCRDs(crd.Manifests)
	if err != nil {
		t.Fatal(err)
	}
	ours := bosuntest.Start(t, controlplane.Options{CRDs: crds})
	theirs := bosuntest.Start(t, controlplane.Options{CRDs: []*apiextensionsv1.CustomResourceDefinition{trustManagerCRD(t)}})
	hooks, err := webhook.Configurations()
	if err != nil {
		t.Fatal(err)
	}
	scheme := controlplane.NewScheme()
	if err := trust.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	hooked := bosuntest.Start(t, controlplane.Options{Scheme: scheme, CRDs: []*apiextensionsv1.CustomResourceDefinition{trustManagerCRD(t)}, Webhooks: hooks})
	bosuntest.RunManagerWith(t, hooked, bosuntest.ManagerOptions{}, trust.SetupWebhookWithManager)

	tests := []struct {
		name string
		spec string
		// refused is a part of the message with which this CRD refuses
		// the Bundle; empty, it accepts it.
		refused string
		// byWebhook says trust-manager's CRD accepts the Bundle, and its
		// webhook refuses it.
		byWebhook bool
	}{
		{name: "configmap-by-name", spec: `
sources: [{configMap: {name: ca, key: ca.crt}}]
target: {configMap: {key: bundle.pem}}`},
		{name: "secret-by-selector-all-keys", spec: `
sources: [{secret: {selector: {matchLabels: {ca: "yes"}}, includeAllKeys: true}}]
target:
  configMap: {key: bundle.pem, metadata: {labels: {team: a}, annotations: {note: b}}}
  secret: {key: bundle.pem}
  namespaceSelector: {matchLabels: {trust: enabled}}`},
		{name: "inline-defaults-and-formats", spec: `
sources: [{inLine: "-----BEGIN CERTIFICATE-----"}, {useDefaultCAs: true}]
target:
  configMap: {key: bundle.pem}
  additionalFormats: {jks: {key: bundle.jks}, pkcs12: {key: bundle.p12, profile: Modern2023}}`},
		{name: "two-kinds-in-a-source", spec: `
sources: [{configMap: {name: ca, key: ca.crt}, inLine: x}]
target: {configMap: {key: bundle.pem}}`,
			refused: "exactly one of the fields in [configMap secret inLine useDefaultCAs] must be set"},
		{name: "name-and-selector", spec: `
sources: [{configMap: {name: ca, selector: {}, key: ca.crt}}]
target: {configMap: {key: bundle.pem}}`,
			refused: "exactly one of the fields in [name selector] must be set"},
		{name: "no-sources", spec: `
target: {configMap: {key: bundle.pem}}`,
			refused: "spec.sources: Required value"},
		{name: "no-target-kind", spec: `
sources: [{inLine: x}]
target: {namespaceSelector: {}}`,
			refused: "at least one of the fields in [configMap secret] must be set"},
		{name: "unknown-profile", spec: `
sources: [{inLine: x}]
target: {configMap: {key: a}, additionalFormats: {pkcs12: {key: b, profile: Bogus}}}`,
			refused: `Unsupported value: "Bogus"`},
		{name: "neither-key-nor-all-keys", spec: `
sources: [{configMap: {name: ca}}]
target: {configMap: {key: bundle.pem}}`,
			refused: "exactly one of key and includeAllKeys: true must be set", byWebhook: true},
		{name: "key-and-all-keys", spec: `
sources: [{secret: {name: ca, key: ca.crt, includeAllKeys: true}}]
target: {configMap: {key: bundle.pem}}`,
			refused: "exactly one of key and includeAllKeys: true must be set", byWebhook: true},
		{name: "no-certificates", spec: `
sources: [{useDefaultCAs: false}]
target: {configMap: {key: bundle.pem}}`,
			refused: "at least one source must give certificates", byWebhook: true},
		{name: "default-cas-twice", spec: `
sources: [{useDefaultCAs: true}, {useDefaultCAs: false}]
target: {configMap: {key: bundle.pem}}`,
			refused: "useDefaultCAs may be set in one source at most", byWebhook: true},
		{name: "format-key-taken", spec: `
sources: [{inLine: x}]
target: {configMap: {key: bundle.pem}, additionalFormats: {jks: {key: bundle.pem}}}`,
			refused: "the JKS key must differ", byWebhook: true},
		{name: "reserved-label", spec: `
sources: [{inLine: x}]
target: {secret: {key: a, metadata: {labels: {trust.cert-manager.io/bundle: other}}}}`,
			refused: "labels under trust.cert-manager.io/ and trust-manager.io/ are the operator's", byWebhook: true},
		{name: "own-target", spec: `
sources: [{configMap: {name: own-target, key: bundle.pem}}]
target: {configMap: {key: bundle.pem}}`,
			refused: "a source cannot be the Bundle's own target ConfigMap key", byWebhook: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ours.Client.Create(t.Context(), bundle(t, tt.name, tt.spec))
			switch {
			case tt.refused == "" && err != nil:
				t.Errorf("this CRD refuses it: %v", err)
			case tt.refused != "" && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tt.refused)):
				t.Errorf("this CRD: %v, want a refusal with %q", err, tt.refused)
			}
			theirErr := theirs.Client.Create(t.Context(), bundle(t, tt.name, tt.spec))
			if accepted, want := theirErr == nil, tt.refused == "" || tt.byWebhook; accepted != want {
				t.Errorf("trust-manager's CRD: %v; want it to accept the Bundle: %t", theirErr, want)
			}
			// The webhook may not serve yet: a refusal that is not the
			// API server's Invalid, or an unrefused Bundle it should
			// refuse, is retried.
			bosuntest.Eventually(t, func(ctx context.Context) error {
				err := hooked.Client.Create(ctx, bundle(t, tt.name, tt.spec))
				switch {
				case apierrors.IsAlreadyExists(err):
					return nil
				case tt.refused == "" && err != nil:
					return fmt.Errorf("trust-manager's CRD and the webhook refuse it: %w", err)
				case tt.refused != "" && err == nil:
					_ = hooked.Client.Delete(ctx, bundle(t, tt.name, tt.spec))
					return fmt.Errorf("trust-manager's CRD and the webhook accept it, want a refusal with %q", tt.refused)
				case tt.refused != "" && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tt.refused)):
					return fmt.Errorf("trust-manager's CRD and the webhook: %w, want a refusal with %q", err, tt.refused)
				}
				return nil
			})
		})
	}

	// The passwords' defaults, on both.
	for name, c := range map[string]client.Client{"this CRD": ours.Client, "trust-manager's": theirs.Client} {
		got := &unstructured.Unstructured{}
		got.SetAPIVersion("trust.cert-manager.io/v1alpha1")
		got.SetKind("Bundle")
		if err := c.Get(t.Context(), client.ObjectKey{Name: "inline-defaults-and-formats"}, got); err != nil {
			t.Fatal(err)
		}
		jks, _, _ := unstructured.NestedString(got.Object, "spec", "target", "additionalFormats", "jks", "password")
		p12, found, _ := unstructured.NestedString(got.Object, "spec", "target", "additionalFormats", "pkcs12", "password")
		if jks != "changeit" || !found || p12 != "" {
			t.Errorf("%s defaults the JKS password to %q and the PKCS#12 one to %q (set: %t), want changeit and an empty one", name, jks, p12, found)
		}
	}
}

// bundle is a Bundle named name with the spec written in YAML.
func bundle(t *testing.T, name, spec string) *unstructured.Unstructured {
	t.Helper()
	var s map[string]any
	if err := yaml.Unmarshal([]byte(spec), &s); err != nil {
		t.Fatal(err)
	}
	if s == nil {
		s = map[string]any{}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "trust.cert-manager.io/v1alpha1",
		"kind":       "Bundle",
		"metadata":   map[string]any{"name": name},
		"spec":       s,
	}}
}
