package memcached

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	cachev1 "github.com/bosunkit/bosun/examples/memcached/api/v1alpha1"
	"github.com/bosunkit/bosun/examples/memcached/config/crd"
	"github.com/bosunkit/bosun/operator/manifest"
)

// AddToScheme adds to s the built-in Kubernetes types (Deployment, Service
// and Pod, and Namespace, which the engine reads for the reconcile policy,
// among them) and the cache.example.bosun.dev/v1alpha1 types.
func AddToScheme(s *runtime.Scheme) error {
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return fmt.Errorf("memcached: add built-in types to scheme: %w", err)
	}
	if err := cachev1.AddToScheme(s); err != nil {
		return fmt.Errorf("memcached: add %s types to scheme: %w", cachev1.GroupVersion, err)
	}
	return nil
}

// CRDs returns the CustomResourceDefinitions of the memcached API, decoded
// from the manifests embedded in package crd. Each call returns new
// objects.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds, err := manifest.DecodeCRDs(crd.Manifests)
	if err != nil {
		return nil, fmt.Errorf("memcached: %w", err)
	}
	return crds, nil
}
