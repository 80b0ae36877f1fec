package manifest_test

import (
	"fmt"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/bosunkit/bosun/operator/manifest"
)

func TestDecodeWebhooks(t *testing.T) {
	fsys := fstest.MapFS{
		"manifests.yaml": {Data: []byte(`---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutating-webhook-configuration
webhooks:
- name: mthing.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /mutate-example-com-v1-thing}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating-webhook-configuration
webhooks:
- name: vthing.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /validate-example-com-v1-thing}
`)},
		"service.yaml":       {Data: []byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: webhook-service\n")},
		"kustomization.yaml": {Data: []byte("resources:\n- manifests.yaml\n- service.yaml\n")},
	}
	objs, err := manifest.DecodeWebhooks(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, fmt.Sprintf("%T %s", o, o.GetName()))
	}
	want := []string{
		"*v1.MutatingWebhookConfiguration mutating-webhook-configuration",
		"*v1.ValidatingWebhookConfiguration validating-webhook-configuration",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DecodeWebhooks (-want +got):\n%s", diff)
	}

	for name, data := range map[string]string{
		"none":    "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n",
		"unknown": "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: v\nwebhooks:\n- name: x\n  sideEfects: None\n",
	} {
		if _, err := manifest.DecodeWebhooks(fstest.MapFS{"m.yaml": {Data: []byte(data)}}); err == nil {
			t.Errorf("%s: DecodeWebhooks succeeded, want an error", name)
		}
	}
}
