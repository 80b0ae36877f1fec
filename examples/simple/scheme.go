package simple

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	simplev1 "github.com/bosunkit/bosun/examples/simple/api/v1alpha1"
	"github.com/bosunkit/bosun/examples/simple/config/crd"
	"github.com/bosunkit/bosun/operator/manifest"
)

// AddToScheme adds to s the built-in Kubernetes types (Namespace among them,
// which the engine reads for the reconcile policy) and the
// simple.bosun.dev/v1alpha1 types.
func AddToScheme(s *runtime.Scheme) error {
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return fmt.Errorf("simple: add built-in types to scheme: %w", err)
	}
	if err := simplev1.AddToScheme(s); err != nil {
		return fmt.Errorf("simple: add %s types to scheme: %w", simplev1.GroupVersion, err)
	}
	return nil
}

// CRDs returns the CustomResourceDefinitions of the simple API, decoded from
// the manifests embedded in package crd. Each call returns new objects.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds, err := manifest.DecodeCRDs(crd.Manifests)
	if err != nil {
		return nil, fmt.Errorf("simple: %w", err)
	}
	return crds, nil
}
