package trust

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	trustv1alpha1 "github.com/bosunkit/bosun/examples/trust/api/v1alpha1"
	"github.com/bosunkit/bosun/examples/trust/config/crd"
	"github.com/bosunkit/bosun/operator/manifest"
)

// AddToScheme adds to s the built-in Kubernetes types (ConfigMap, Secret
// and Namespace among them) and the trust.cert-manager.io/v1alpha1 types.
func AddToScheme(s *runtime.Scheme) error {
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return fmt.Errorf("trust: add built-in types to scheme: %w", err)
	}
	if err := trustv1alpha1.AddToScheme(s); err != nil {
		return fmt.Errorf("trust: add %s types to scheme: %w", trustv1alpha1.GroupVersion, err)
	}
	return nil
}

// CRDs returns the CustomResourceDefinition of the Bundle, decoded
// from the manifests embedded in package crd. Each call returns new
// objects.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds, err := manifest.DecodeCRDs(crd.Manifests)
	if err != nil {
		return nil, fmt.Errorf("trust: %w", err)
	}
	return crds, nil
}
