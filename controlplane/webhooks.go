package controlplane

import (
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// webhookHost is the address the webhook server of a control plane
// listens on, and the API server calls.
const webhookHost = "127.0.0.1"

// setWebhooks fills envtest's webhook options with objs, which must be
// admission webhook configurations.
func setWebhooks(o *envtest.WebhookInstallOptions, objs []client.Object, maxTime time.Duration) error {
	o.LocalServingHost, o.MaxTime = webhookHost, maxTime
	for _, obj := range objs {
		switch c := obj.(type) {
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			o.MutatingWebhooks = append(o.MutatingWebhooks, c.DeepCopy())
		case *admissionregistrationv1.ValidatingWebhookConfiguration:
			o.ValidatingWebhooks = append(o.ValidatingWebhooks, c.DeepCopy())
		default:
			return fmt.Errorf("starting control plane: Options.Webhooks holds a %T, want admission webhook configurations", obj)
		}
	}
	return nil
}
