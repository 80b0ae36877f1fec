package cronjob

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/bosunkit/bosun/controlplane"
	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
	"github.com/bosunkit/bosun/examples/cronjob/config/crd"
)

// AddToScheme adds to s the built-in Kubernetes types (Jobs, and Namespace,
// which the engine reads for the reconcile policy) and the
// cronjob.bosun.dev/v1 types.
func AddToScheme(s *runtime.Scheme) error {
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return fmt.Errorf("cronjob: add built-in types to scheme: %w", err)
	}
	if err := cronjobv1.AddToScheme(s); err != nil {
		return fmt.Errorf("cronjob: add %s types to scheme: %w", cronjobv1.GroupVersion, err)
	}
	return nil
}

// CRDs returns the CustomResourceDefinitions of the cronjob API, decoded
// from the manifests embedded in package crd. Each call returns new objects.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds, err := controlplane.DecodeCRDs(crd.Manifests)
	if err != nil {
		return nil, fmt.Errorf("cronjob: %w", err)
	}
	return crds, nil
}
