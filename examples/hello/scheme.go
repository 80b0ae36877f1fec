package hello

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

	hellov1 "github.com/bosunkit/bosun/examples/hello/api/v1alpha1"
	"github.com/bosunkit/bosun/examples/hello/config/crd"
)

// AddToScheme adds to s the built-in Kubernetes types (ConfigMap among them)
// and the hello.bosun.dev/v1alpha1 types.
func AddToScheme(s *runtime.Scheme) error {
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return fmt.Errorf("hello: add built-in types to scheme: %w", err)
	}
	if err := hellov1.AddToScheme(s); err != nil {
		return fmt.Errorf("hello: add %s types to scheme: %w", hellov1.GroupVersion, err)
	}
	return nil
}

// CRDs returns the CustomResourceDefinitions of the hello API, decoded from
// the manifests embedded in package crd. Each call returns new objects.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return decodeCRDs(crd.Manifests)
}

// decodeCRDs decodes every *.yaml file at the root of fsys, in name order.
// A file may hold several YAML documents; empty documents are skipped.
func decodeCRDs(fsys fs.FS) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	names, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return nil, fmt.Errorf("hello: list crd manifests: %w", err)
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("hello: read crd manifest: %w", err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			c := &apiextensionsv1.CustomResourceDefinition{}
			err := dec.Decode(c)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("hello: decode crd manifest %s: %w", name, err)
			}
			if c.Kind == "" && c.Name == "" {
				continue
			}
			if c.Kind != "CustomResourceDefinition" {
				return nil, fmt.Errorf("hello: crd manifest %s: unexpected kind %q", name, c.Kind)
			}
			crds = append(crds, c)
		}
	}
	if len(crds) == 0 {
		return nil, errors.New("hello: no crd manifests embedded")
	}
	return crds, nil
}
