package crd_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/bosunkit/bosun/examples/trust/config/crd"
	"github.com/bosunkit/bosun/examples/trust/internal/trustmanager"
	"github.com/bosunkit/bosun/operator/manifest"
)

// webhookRules are the validation rules this CRD has and trust-manager's
// has not, by message: what trust-manager's validating webhook refuses,
// said here in CEL; the operator's webhook checks the same for
// trust-manager's CRD, and the syntax of selectors, labels and
// annotations, which neither CRD checks.
var webhookRules = []string{
	"a source cannot be the Bundle's own target ConfigMap key",
	"a source cannot be the Bundle's own target Secret key",
	"at least one source must give certificates: useDefaultCAs false gives none",
	"useDefaultCAs may be set in one source at most",
	"exactly one of key and includeAllKeys: true must be set",
	"the JKS key must differ from the ConfigMap's and the Secret's keys",
	"the PKCS#12 key must differ from the other target keys",
	"annotations under trust.cert-manager.io/ and trust-manager.io/ are the operator's",
	"labels under trust.cert-manager.io/ and trust-manager.io/ are the operator's",
}

// TestSameAPIAsTrustManager compares the Bundle CRD with trust-manager's
// (from its module, at the version hack/trustmanager pins): the same
// group, names, scope, versions, printer columns and schema, fields,
// types, bounds, defaults, list and map types and validation rules alike.
// Only descriptions differ, and the rules of webhookRules, which this CRD
// adds.
func TestSameAPIAsTrustManager(t *testing.T) {
	crds, err := manifest.DecodeCRDs(crd.Manifests)
	if err != nil {
		t.Fatal(err)
	}
	ours := onlyCRD(t, crds)
	theirs := trustManagerCRD(t)

	found := map[string]bool{}
	stripped := stripSchema(ours.Spec.Versions[0].Schema.OpenAPIV3Schema, found)
	ours.Spec.Versions[0].Schema.OpenAPIV3Schema = stripped
	for _, msg := range webhookRules {
		if !found[msg] {
			t.Errorf("the CRD has no rule %q, which webhookRules lists", msg)
		}
	}
	theirs.Spec.Versions[0].Schema.OpenAPIV3Schema = stripSchema(theirs.Spec.Versions[0].Schema.OpenAPIV3Schema, map[string]bool{})
	for _, c := range []*apiextensionsv1.CustomResourceDefinition{ours, theirs} {
		for i := range c.Spec.Versions {
			for j := range c.Spec.Versions[i].AdditionalPrinterColumns {
				c.Spec.Versions[i].AdditionalPrinterColumns[j].Description = ""
			}
		}
	}
	if diff := cmp.Diff(theirs.Spec, ours.Spec); diff != "" {
		t.Errorf("the Bundle CRD differs from trust-manager's (-theirs +ours):\n%s", diff)
	}
	if ours.Name != theirs.Name {
		t.Errorf("the CRD is named %s, trust-manager's %s", ours.Name, theirs.Name)
	}
}

// stripSchema returns s without descriptions and without the rules of
// webhookRules, which it records in found.
func stripSchema(s *apiextensionsv1.JSONSchemaProps, found map[string]bool) *apiextensionsv1.JSONSchemaProps {
	if s == nil {
		return nil
	}
	out := s.DeepCopy()
	out.Description = ""
	var kept apiextensionsv1.ValidationRules
	for _, r := range out.XValidations {
		if isWebhookRule(r.Message) {
			found[r.Message] = true
			continue
		}
		kept = append(kept, r)
	}
	out.XValidations = kept
	for name, p := range out.Properties {
		out.Properties[name] = *stripSchema(&p, found)
	}
	if out.Items != nil && out.Items.Schema != nil {
		out.Items.Schema = stripSchema(out.Items.Schema, found)
	}
	if out.AdditionalProperties != nil && out.AdditionalProperties.Schema != nil {
		out.AdditionalProperties.Schema = stripSchema(out.AdditionalProperties.Schema, found)
	}
	return out
}

// isWebhookRule reports whether msg is the message of a rule of
// webhookRules.
func isWebhookRule(msg string) bool {
	for _, m := range webhookRules {
		if m == msg {
			return true
		}
	}
	return false
}

// trustManagerCRD is the Bundle CRD of trust-manager's module.
func trustManagerCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	return trustmanager.CRD(t)
}

// onlyCRD is the one CRD of crds.
func onlyCRD(t *testing.T, crds []*apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	if len(crds) != 1 {
		t.Fatalf("%d CRDs, want the Bundle's only", len(crds))
	}
	return crds[0]
}
