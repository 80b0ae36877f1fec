package controlplane

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// webhookHost is the address the webhook server of a control plane
// listens on, and the API server calls.
const webhookHost = "127.0.0.1"

// DecodeWebhooks decodes the admission webhook configurations in every
// *.yaml file at the root of fsys, in name order, for Options.Webhooks:
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

// setWebhooks fills envtest's webhook options with objs, which must be
// admission webhook configurations.
func setWebhooks(o *envtest.WebhookInstallOptions, objs []client.Object, maxTime time.Duration) error {
	o.LocalServingHost, o.MaxTime = webhookHost, maxTime
	for _, obj := range objs {
		switch c := obj.(type) {
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			o.MutatingWebhooks = append(o.MutatingWebhooks, c.DeepCopy())
		case *admissionregistrationv1.ValidatingWebhookConfiguration:
			o.ValidatingWebhooks = append(o.ValidatingWebhooks, c.DeepCopy())
		default:
			return fmt.Errorf("starting control plane: Options.Webhooks holds a %T, want admission webhook configurations", obj)
		}
	}
	return nil
}
