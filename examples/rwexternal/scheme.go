package rwexternal

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	rwv1 "github.com/bosunkit/bosun/examples/rwexternal/api/v1alpha1"
	"github.com/bosunkit/bosun/examples/rwexternal/config/crd"
	"github.com/bosunkit/bosun/operator/manifest"
)

// AddToScheme adds to s the built-in Kubernetes types (Secret, and Namespace,
// which the engine reads for the reconcile policy, among them) and the
// rwexternal.bosun.dev/v1alpha1 types.
func AddToScheme(s *runtime.Scheme) error {
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return fmt.Errorf("rwexternal: add built-in types to scheme: %w", err)
	}
	if err := rwv1.AddToScheme(s); err != nil {
		return fmt.Errorf("rwexternal: add %s types to scheme: %w", rwv1.GroupVersion, err)
	}
	return nil
}

// CRDs returns the CustomResourceDefinitions of the rwexternal API, decoded
// from the manifests embedded in package crd. Each call returns new objects.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds, err := manifest.DecodeCRDs(crd.Manifests)
	if err != nil {
		return nil, fmt.Errorf("rwexternal: %w", err)
	}
	return crds, nil
}
