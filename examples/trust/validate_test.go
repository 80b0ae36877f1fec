package trust

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trustv1alpha1 "github.com/bosunkit/bosun/examples/trust/api/v1alpha1"
)

// TestValidateBundle: each rule the webhook adds to trust-manager's CRD
// refuses with its field path and message; a valid Bundle passes.
func TestValidateBundle(t *testing.T) {
	cm := func(key string) *trustv1alpha1.TargetTemplate { return &trustv1alpha1.TargetTemplate{Key: key} }
	inline := trustv1alpha1.BundleSource{InLine: "x"}
	tests := []struct {
		name string
		spec trustv1alpha1.BundleSpec
		want []string
	}{
		{name: "valid", spec: trustv1alpha1.BundleSpec{
			Sources: []trustv1alpha1.BundleSource{inline, {ConfigMap: &trustv1alpha1.SourceObjectKeySelector{Name: "b", IncludeAllKeys: new(true)}}},
			Target: trustv1alpha1.BundleTarget{ConfigMap: cm("a"), Secret: cm("a"), AdditionalFormats: &trustv1alpha1.AdditionalFormats{
				JKS: &trustv1alpha1.JKS{KeySelector: trustv1alpha1.KeySelector{Key: "j"}}, PKCS12: &trustv1alpha1.PKCS12{KeySelector: trustv1alpha1.KeySelector{Key: "p"}},
			}},
		}},
		{name: "key and all keys", spec: trustv1alpha1.BundleSpec{
			Sources: []trustv1alpha1.BundleSource{{Secret: &trustv1alpha1.SourceObjectKeySelector{Name: "s", Key: "k", IncludeAllKeys: new(true)}}},
			Target:  trustv1alpha1.BundleTarget{ConfigMap: cm("a")},
		}, want: []string{`spec.sources[0].secret.key: Invalid value: "k": exactly one of key and includeAllKeys: true must be set`}},
		{name: "own targets", spec: trustv1alpha1.BundleSpec{
			Sources: []trustv1alpha1.BundleSource{{ConfigMap: &trustv1alpha1.SourceObjectKeySelector{Name: "own", Key: "a"}}, {Secret: &trustv1alpha1.SourceObjectKeySelector{Name: "own", Key: "b"}}},
			Target:  trustv1alpha1.BundleTarget{ConfigMap: cm("a"), Secret: cm("b")},
		}, want: []string{
			`spec.sources: Invalid value: "own": a source cannot be the Bundle's own target ConfigMap key`,
			`spec.sources: Invalid value: "own": a source cannot be the Bundle's own target Secret key`,
		}},
		{name: "no certificates, default CAs twice", spec: trustv1alpha1.BundleSpec{
			Sources: []trustv1alpha1.BundleSource{{UseDefaultCAs: new(false)}, {UseDefaultCAs: new(false)}},
			Target:  trustv1alpha1.BundleTarget{ConfigMap: cm("a")},
		}, want: []string{
			`spec.sources: Invalid value: 2: at least one source must give certificates: useDefaultCAs false gives none`,
			`spec.sources: Invalid value: 2: useDefaultCAs may be set in one source at most`,
		}},
		{name: "format keys", spec: trustv1alpha1.BundleSpec{
			Sources: []trustv1alpha1.BundleSource{inline},
			Target: trustv1alpha1.BundleTarget{Secret: cm("a"), AdditionalFormats: &trustv1alpha1.AdditionalFormats{
				JKS: &trustv1alpha1.JKS{KeySelector: trustv1alpha1.KeySelector{Key: "a"}}, PKCS12: &trustv1alpha1.PKCS12{KeySelector: trustv1alpha1.KeySelector{Key: "a"}},
			}},
		}, want: []string{
			`spec.target.additionalFormats.jks.key: Invalid value: "a": the JKS key must differ from the ConfigMap's and the Secret's keys`,
			`spec.target.additionalFormats.pkcs12.key: Invalid value: "a": the PKCS#12 key must differ from the other target keys`,
		}},
		{name: "reserved keys", spec: trustv1alpha1.BundleSpec{
			Sources: []trustv1alpha1.BundleSource{inline},
			Target: trustv1alpha1.BundleTarget{ConfigMap: &trustv1alpha1.TargetTemplate{Key: "a", Metadata: trustv1alpha1.TargetMetadata{
				Annotations: map[string]string{"trust-manager.io/x": "", "team": "a"},
				Labels:      map[string]string{"trust.cert-manager.io/bundle": "other"},
			}}},
		}, want: []string{
			`spec.target.configMap.metadata.annotations: Invalid value: "trust-manager.io/x": annotations under trust.cert-manager.io/ and trust-manager.io/ are the operator's`,
			`spec.target.configMap.metadata.labels: Invalid value: "trust.cert-manager.io/bundle": labels under trust.cert-manager.io/ and trust-manager.io/ are the operator's`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &trustv1alpha1.Bundle{ObjectMeta: metav1.ObjectMeta{Name: "own"}, Spec: tt.spec}
			_, errs := validateBundle(t.Context(), nil, b)
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
