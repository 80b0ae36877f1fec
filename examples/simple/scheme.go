package simple

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	simplev1 "github.com/bosunkit/bosun/examples/simple/api/v1alpha1"
	"github.com/bosunkit/bosun/examples/simple/config/crd"
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
	return decodeCRDs(crd.Manifests)
}

// decodeCRDs decodes every *.yaml file at the root of fsys, in name order,
// skipping empty YAML documents.
func decodeCRDs(fsys fs.FS) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	names, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return nil, fmt.Errorf("simple: list crd manifests: %w", err)
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("simple: read crd manifest: %w", err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			c := &apiextensionsv1.CustomResourceDefinition{}
			err := dec.Decode(c)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("simple: decode crd manifest %s: %w", name, err)
			}
			if c.Kind == "" && c.Name == "" {
				continue
			}
			if c.Kind != "CustomResourceDefinition" {
				return nil, fmt.Errorf("simple: crd manifest %s: unexpected kind %q", name, c.Kind)
			}
			crds = append(crds, c)
		}
	}
	if len(crds) == 0 {
		return nil, errors.New("simple: no crd manifests embedded")
	}
	return crds, nil
}
