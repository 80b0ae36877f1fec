// Package policy holds a ValidatingAdmissionPolicy for Memcacheds and its
// binding: in a namespace labelled environment=production a Memcached must
// run at least two servers. The API server enforces it with no code of the
// operator; the manifests are embedded so that tests can install them.
package policy

import (
	_ "embed"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"
)

// LabelKey and LabelValue are the namespace label that the binding
// selects.
const (
	LabelKey   = "environment"
	LabelValue = "production"
)

var (
	//go:embed policy.yaml
	policyManifest []byte
	//go:embed binding.yaml
	bindingManifest []byte
)

// Policy returns the ValidatingAdmissionPolicy of policy.yaml.
func Policy() (*admissionregistrationv1.ValidatingAdmissionPolicy, error) {
	var p admissionregistrationv1.ValidatingAdmissionPolicy
	if err := yaml.UnmarshalStrict(policyManifest, &p); err != nil {
		return nil, fmt.Errorf("decoding policy.yaml: %w", err)
	}
	return &p, nil
}

// Binding returns the ValidatingAdmissionPolicyBinding of binding.yaml.
func Binding() (*admissionregistrationv1.ValidatingAdmissionPolicyBinding, error) {
	var b admissionregistrationv1.ValidatingAdmissionPolicyBinding
	if err := yaml.UnmarshalStrict(bindingManifest, &b); err != nil {
		return nil, fmt.Errorf("decoding binding.yaml: %w", err)
	}
	return &b, nil
}
