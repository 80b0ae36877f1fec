package controlplane

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// DecodeCRDs decodes the CustomResourceDefinitions in every *.yaml file at
// the root of fsys, in name order, for Options.CRDs. It is meant for
// manifests embedded with go:embed (controller-gen's output). A file may
// hold several YAML documents; empty documents, and a kustomization.yaml
// listing the CRDs for kustomize, are skipped. Any other kind,
// a document that does not decode, or no CRD at all is an error. Each call
// returns new objects.
func DecodeCRDs(fsys fs.FS) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	names, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return nil, fmt.Errorf("listing crd manifests: %w", err)
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, name := range names {
		if name == "kustomization.yaml" {
			// kustomize's list of the CRDs, kept beside them.
			continue
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("reading crd manifest: %w", err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			c := &apiextensionsv1.CustomResourceDefinition{}
			err := dec.Decode(c)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("decoding crd manifest %s: %w", name, err)
			}
			if c.Kind == "" && c.Name == "" {
				continue
			}
			if c.Kind != "CustomResourceDefinition" {
				return nil, fmt.Errorf("crd manifest %s: unexpected kind %q", name, c.Kind)
			}
			crds = append(crds, c)
		}
	}
	if len(crds) == 0 {
		return nil, errors.New("no crd manifests found")
	}
	return crds, nil
}
