package site

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	sitev1 "github.com/bosunkit/bosun/examples/site/api/v1alpha1"
	"github.com/bosunkit/bosun/examples/site/config/crd"
	"github.com/bosunkit/bosun/operator/manifest"
)

// AddToScheme adds to s the built-in Kubernetes types (ConfigMap, Service
// and Secret, and Namespace, which the engine reads for the reconcile
// policy, among them) and the site.bosun.dev/v1alpha1 types.
func AddToScheme(s *runtime.Scheme) error {
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return fmt.Errorf("site: add built-in types to scheme: %w", err)
	}
	if err := sitev1.AddToScheme(s); err != nil {
		return fmt.Errorf("site: add %s types to scheme: %w", sitev1.GroupVersion, err)
	}
	return nil
}

// CRDs returns the CustomResourceDefinitions of the site API, decoded from
// the manifests embedded in package crd. Each call returns new objects.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds, err := manifest.DecodeCRDs(crd.Manifests)
	if err != nil {
		return nil, fmt.Errorf("site: %w", err)
	}
	return crds, nil
}
