package trust

import (
	"context"
	"slices"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"

	trustv1alpha1 "github.com/bosunkit/bosun/examples/trust/api/v1alpha1"
	"github.com/bosunkit/bosun/webhook"
)

// The validating webhook, at the path of trust-manager's, so that the
// configuration of trust-manager's chart calls it.
//
// +kubebuilder:webhook:path=/validate-trust-cert-manager-io-v1alpha1-bundle,mutating=false,failurePolicy=fail,sideEffects=None,groups=trust.cert-manager.io,resources=bundles,verbs=create;update,versions=v1alpha1,name=trust.cert-manager.io,admissionReviewVersions=v1

// SetupWebhookWithManager registers the Bundle's validating webhook with
// mgr's webhook server. It refuses what trust-manager's webhook refuses:
// what the CRD's CEL rules of config/crd refuse beyond trust-manager's
// CRD, with the same messages, and label selectors, labels and
// annotations that are not well formed, which neither CRD checks.
func SetupWebhookWithManager(mgr ctrl.Manager) error {
	return (&webhook.Kind[*trustv1alpha1.Bundle]{Validate: validateBundle}).SetupWithManager(mgr)
}

// reservedPrefixes are the label and annotation prefixes of the
// operator's own keys, which a target template may not use.
var reservedPrefixes = []string{"trust.cert-manager.io/", "trust-manager.io/"}

// validateBundle checks the rules the CRD states in CEL beyond
// trust-manager's CRD (see config/crd's webhookRules), each with its
// message and field path, and the syntax of the label selectors and of
// the targets' labels and annotations, with apimachinery's checks.
func validateBundle(_ context.Context, _, b *trustv1alpha1.Bundle) (webhook.Warnings, field.ErrorList) {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	sources, target := spec.Child("sources"), spec.Child("target")
	t := b.Spec.Target
	selectors := metav1validation.LabelSelectorValidationOptions{}
	errs = append(errs, metav1validation.ValidateLabelSelector(t.NamespaceSelector, selectors, target.Child("namespaceSelector"))...)

	gives, defaults := false, 0
	for i, s := range b.Spec.Sources {
		gives = gives || s.ConfigMap != nil || s.Secret != nil || s.InLine != "" || (s.UseDefaultCAs != nil && *s.UseDefaultCAs)
		if s.UseDefaultCAs != nil {
			defaults++
		}
		for name, sel := range map[string]*trustv1alpha1.SourceObjectKeySelector{"configMap": s.ConfigMap, "secret": s.Secret} {
			if sel == nil {
				continue
			}
			if (sel.Key != "") == (sel.IncludeAllKeys != nil && *sel.IncludeAllKeys) {
				errs = append(errs, field.Invalid(sources.Index(i).Child(name, "key"), sel.Key, "exactly one of key and includeAllKeys: true must be set"))
			}
			errs = append(errs, metav1validation.ValidateLabelSelector(sel.Selector, selectors, sources.Index(i).Child(name, "selector"))...)
		}
	}
	if t.ConfigMap != nil && slices.ContainsFunc(b.Spec.Sources, func(s trustv1alpha1.BundleSource) bool { return ownTarget(s.ConfigMap, b.Name, t.ConfigMap) }) {
		errs = append(errs, field.Invalid(sources, b.Name, "a source cannot be the Bundle's own target ConfigMap key"))
	}
	if t.Secret != nil && slices.ContainsFunc(b.Spec.Sources, func(s trustv1alpha1.BundleSource) bool { return ownTarget(s.Secret, b.Name, t.Secret) }) {
		errs = append(errs, field.Invalid(sources, b.Name, "a source cannot be the Bundle's own target Secret key"))
	}
	if !gives {
		errs = append(errs, field.Invalid(sources, len(b.Spec.Sources), "at least one source must give certificates: useDefaultCAs false gives none"))
	}
	if defaults > 1 {
		errs = append(errs, field.Invalid(sources, defaults, "useDefaultCAs may be set in one source at most"))
	}

	var keys []string
	for _, tmpl := range []*trustv1alpha1.TargetTemplate{t.ConfigMap, t.Secret} {
		if tmpl != nil {
			keys = append(keys, tmpl.Key)
		}
	}
	if f := t.AdditionalFormats; f != nil && f.JKS != nil {
		if slices.Contains(keys, f.JKS.Key) {
			errs = append(errs, field.Invalid(target.Child("additionalFormats", "jks", "key"), f.JKS.Key, "the JKS key must differ from the ConfigMap's and the Secret's keys"))
		}
		keys = append(keys, f.JKS.Key)
	}
	if f := t.AdditionalFormats; f != nil && f.PKCS12 != nil && slices.Contains(keys, f.PKCS12.Key) {
		errs = append(errs, field.Invalid(target.Child("additionalFormats", "pkcs12", "key"), f.PKCS12.Key, "the PKCS#12 key must differ from the other target keys"))
	}

	for name, tmpl := range map[string]*trustv1alpha1.TargetTemplate{"configMap": t.ConfigMap, "secret": t.Secret} {
		if tmpl == nil {
			continue
		}
		meta := target.Child(name, "metadata")
		errs = append(errs, apivalidation.ValidateAnnotations(tmpl.Metadata.Annotations, meta.Child("annotations"))...)
		errs = append(errs, metav1validation.ValidateLabels(tmpl.Metadata.Labels, meta.Child("labels"))...)
		if k, ok := reservedKey(tmpl.Metadata.Annotations); ok {
			errs = append(errs, field.Invalid(meta.Child("annotations"), k, "annotations under trust.cert-manager.io/ and trust-manager.io/ are the operator's"))
		}
		if k, ok := reservedKey(tmpl.Metadata.Labels); ok {
			errs = append(errs, field.Invalid(meta.Child("labels"), k, "labels under trust.cert-manager.io/ and trust-manager.io/ are the operator's"))
		}
	}
	// Maps are walked in random order: the errors are sorted so that the
	// same Bundle is refused with the same message.
	slices.SortFunc(errs, func(a, b *field.Error) int { return strings.Compare(a.Error(), b.Error()) })
	return nil, errs
}

// ownTarget reports whether sel names the Bundle's own target of tmpl: the
// object of the Bundle's name, under the target's key.
func ownTarget(sel *trustv1alpha1.SourceObjectKeySelector, bundle string, tmpl *trustv1alpha1.TargetTemplate) bool {
	return sel != nil && sel.Name == bundle && sel.Key == tmpl.Key
}

// reservedKey returns a key of m under a reserved prefix, the least such.
func reservedKey(m map[string]string) (string, bool) {
	var found []string
	for k := range m {
		if slices.ContainsFunc(reservedPrefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			found = append(found, k)
		}
	}
	if len(found) == 0 {
		return "", false
	}
	return slices.Min(found), true
}
