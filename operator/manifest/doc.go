// Package manifest decodes the manifests an operator embeds with go:embed
// (controller-gen's CRDs and webhook configurations) into objects: for
// operator.Options, whose --dev installs them, and for the control planes
// of tests (controlplane.Options). It links nothing but the API types and
// a YAML decoder, so that a release binary that embeds its manifests links
// neither the control-plane builder nor envtest.
//
// Maturity: stable.
package manifest
