package testapi

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WidgetWebhooks returns the admission webhook configurations of Widget,
// as controller-gen writes them from bosun's scaffolded markers: a
// defaulting and a validating webhook on create and update, failure policy
// Fail, no side effects, and not called for objects being deleted. Their
// paths are those webhook.Kind registers.
func WidgetWebhooks() []client.Object {
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule: admissionregistrationv1.Rule{
			APIGroups: []string{GroupVersion.Group}, APIVersions: []string{GroupVersion.Version}, Resources: []string{"widgets"},
		},
	}}
	clientConfig := func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
			Namespace: "system", Name: "webhook-service", Path: ptr.To(path),
		}}
	}
	notDeleting := []admissionregistrationv1.MatchCondition{{
		Name: "not-being-deleted", Expression: "!has(object.metadata.deletionTimestamp)",
	}}
	none := admissionregistrationv1.SideEffectClassNone
	fail := admissionregistrationv1.Fail
	return []client.Object{
		&admissionregistrationv1.MutatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "mutating-webhook-configuration"},
			Webhooks: []admissionregistrationv1.MutatingWebhook{{
				Name: "mwidget-v1.test.bosun.dev", ClientConfig: clientConfig("/mutate-test-bosun-dev-v1-widget"),
				Rules: rules, SideEffects: &none, FailurePolicy: &fail, MatchConditions: notDeleting,
				AdmissionReviewVersions: []string{"v1"},
			}},
		},
		&admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "validating-webhook-configuration"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{
				Name: "vwidget-v1.test.bosun.dev", ClientConfig: clientConfig("/validate-test-bosun-dev-v1-widget"),
				Rules: rules, SideEffects: &none, FailurePolicy: &fail, MatchConditions: notDeleting,
				AdmissionReviewVersions: []string{"v1"},
			}},
		},
	}
}
