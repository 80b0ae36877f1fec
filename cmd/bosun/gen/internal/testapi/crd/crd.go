// Package crd embeds the CustomResourceDefinition manifest of the Target
// kind of package testapi, so that envtest tests can install it without
// reading files from disk.
//
// controller-gen writes the manifest from the Go types in package testapi;
// run `go generate ./gen/internal/testapi/...` after changing them.
package crd

import (
	"embed"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/bosunkit/bosun/operator/manifest"
)

// Manifests holds the generated CRD manifests, one YAML file per resource,
// at the root of the file system.
//
//go:embed *.yaml
var Manifests embed.FS

// CRDs returns the CustomResourceDefinitions in Manifests, for
// controlplane.Options.CRDs. Each call returns new objects.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds, err := manifest.DecodeCRDs(Manifests)
	if err != nil {
		return nil, fmt.Errorf("testapi: %w", err)
	}
	return crds, nil
}
