package webhook_test

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/bosunkit/bosun/examples/cronjob/config/webhook"
)

// Configurations decodes the generated manifests: a mutating and a
// validating configuration, each with the one webhook of the CronJob kind.
func ExampleConfigurations() {
	hooks, err := webhook.Configurations()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range hooks {
		switch c := h.(type) {
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			fmt.Println(c.Webhooks[0].Name, *c.Webhooks[0].ClientConfig.Service.Path)
		case *admissionregistrationv1.ValidatingWebhookConfiguration:
			fmt.Println(c.Webhooks[0].Name, *c.Webhooks[0].ClientConfig.Service.Path)
		}
	}
	// Output:
	// mcronjob-v1.cronjob.bosun.dev /mutate-cronjob-bosun-dev-v1-cronjob
	// vcronjob-v1.cronjob.bosun.dev /validate-cronjob-bosun-dev-v1-cronjob
}
