package cronjob

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
	cronjobv2 "github.com/bosunkit/bosun/examples/cronjob/api/v2"
	"github.com/bosunkit/bosun/examples/cronjob/config/crd"
	"github.com/bosunkit/bosun/operator/manifest"
)

// AddToScheme adds to s the built-in Kubernetes types (Jobs, and Namespace,
// which the engine reads for the reconcile policy) and both versions of the
// cronjob.bosun.dev types: v1, the hub, and v2, which converts to it. With
// both in a scheme, CronJobs are convertible there: the manager's webhook
// server serves their conversion (SetupWebhookWithManager), and a control
// plane started with the scheme points the CRD's conversion at it.
func AddToScheme(s *runtime.Scheme) error {
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return fmt.Errorf("cronjob: add built-in types to scheme: %w", err)
	}
	if err := cronjobv1.AddToScheme(s); err != nil {
		return fmt.Errorf("cronjob: add %s types to scheme: %w", cronjobv1.GroupVersion, err)
	}
	if err := cronjobv2.AddToScheme(s); err != nil {
		return fmt.Errorf("cronjob: add %s types to scheme: %w", cronjobv2.GroupVersion, err)
	}
	return nil
}

// CRDs returns the CustomResourceDefinitions of the cronjob API, decoded
// from the manifests embedded in package crd. Each call returns new objects.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds, err := manifest.DecodeCRDs(crd.Manifests)
	if err != nil {
		return nil, fmt.Errorf("cronjob: %w", err)
	}
	return crds, nil
}
