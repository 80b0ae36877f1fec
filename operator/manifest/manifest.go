package manifest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// DecodeCRDs decodes the CustomResourceDefinitions in every *.yaml file at
// the root of fsys, in name order, for Options.CRDs and for the control
// planes of tests (controlplane.Options.CRDs). It is meant for manifests
// embedded with go:embed (controller-gen's output). A file may
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

// DecodeWebhooks decodes the admission webhook configurations in every
// *.yaml file at the root of fsys, in name order, for Options.Webhooks and
// for the control planes of tests (controlplane.Options.Webhooks):
// controller-gen's manifests.yaml, embedded with go:embed. Documents of
// other kinds (a Service, a kustomization.yaml) are skipped; one that does
// not decode, or no configuration at all, is an error. Each call returns
// new objects.
func DecodeWebhooks(fsys fs.FS) ([]client.Object, error) {
	names, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return nil, fmt.Errorf("listing webhook manifests: %w", err)
	}
	var objs []client.Object
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("reading webhook manifest: %w", err)
		}
		reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := reader.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("reading webhook manifest %s: %w", name, err)
			}
			var meta metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &meta); err != nil {
				return nil, fmt.Errorf("decoding webhook manifest %s: %w", name, err)
			}
			var obj client.Object
			switch meta.Kind {
			case "MutatingWebhookConfiguration":
				obj = &admissionregistrationv1.MutatingWebhookConfiguration{}
			case "ValidatingWebhookConfiguration":
				obj = &admissionregistrationv1.ValidatingWebhookConfiguration{}
			default:
				continue
			}
			if err := yaml.UnmarshalStrict(doc, obj); err != nil {
				return nil, fmt.Errorf("decoding webhook manifest %s: %w", name, err)
			}
			objs = append(objs, obj)
		}
	}
	if len(objs) == 0 {
		return nil, errors.New("no webhook configurations found")
	}
	return objs, nil
}
