package rwexternal

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

	rwv1 "github.com/bosunkit/bosun/examples/rwexternal/api/v1alpha1"
	"github.com/bosunkit/bosun/examples/rwexternal/config/crd"
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
	return decodeCRDs(crd.Manifests)
}

// decodeCRDs decodes every *.yaml file at the root of fsys, in name order,
// skipping empty YAML documents.
func decodeCRDs(fsys fs.FS) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	names, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return nil, fmt.Errorf("rwexternal: list crd manifests: %w", err)
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("rwexternal: read crd manifest: %w", err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			c := &apiextensionsv1.CustomResourceDefinition{}
			err := dec.Decode(c)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("rwexternal: decode crd manifest %s: %w", name, err)
			}
			if c.Kind == "" && c.Name == "" {
				continue
			}
			if c.Kind != "CustomResourceDefinition" {
				return nil, fmt.Errorf("rwexternal: crd manifest %s: unexpected kind %q", name, c.Kind)
			}
			crds = append(crds, c)
		}
	}
	if len(crds) == 0 {
		return nil, errors.New("rwexternal: no crd manifests embedded")
	}
	return crds, nil
}
