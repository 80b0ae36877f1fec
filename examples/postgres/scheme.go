package postgres

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	pgv1 "github.com/bosunkit/bosun/examples/postgres/api/v1alpha1"
	"github.com/bosunkit/bosun/examples/postgres/config/crd"
	"github.com/bosunkit/bosun/operator/manifest"
)

// AddToScheme adds to s the built-in Kubernetes types (Secrets and
// Namespaces among them) and the postgres.bosun.dev/v1alpha1 types.
func AddToScheme(s *runtime.Scheme) error {
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return fmt.Errorf("postgres: add built-in types to scheme: %w", err)
	}
	if err := pgv1.AddToScheme(s); err != nil {
		return fmt.Errorf("postgres: add %s types to scheme: %w", pgv1.GroupVersion, err)
	}
	return nil
}

// CRDs returns the CustomResourceDefinitions of the postgres API, decoded
// from the manifests embedded in package crd. Each call returns new objects.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds, err := manifest.DecodeCRDs(crd.Manifests)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return crds, nil
}
