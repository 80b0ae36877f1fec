// Package trustmanager finds trust-manager's module, at the version
// hack/trustmanager pins, for the tests that hold the trust example
// against it: its CRD, its flags and its binary.
package trustmanager

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// Module is trust-manager's Go module.
const Module = "github.com/cert-manager/trust-manager"

// PinDir returns hack/trustmanager, the module that pins trust-manager's
// version, found above the working directory.
func PinDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return filepath.Join(dir, "hack", "trustmanager")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal(errors.New("no go.work above the working directory: run the tests from the repository"))
		}
		dir = parent
	}
}

// Dir returns the directory of trust-manager's module in the module cache,
// downloading it if it is not there yet.
func Dir(t testing.TB) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", "mod", "download", "-json", Module)
	cmd.Dir = PinDir(t)
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("finding %s: %v\n%s", Module, err, stderr.Bytes())
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download -json %s printed no directory (%v):\n%s", Module, err, out)
	}
	return mod.Dir
}

// CRD returns the Bundle CRD of trust-manager's module.
func CRD(t testing.TB) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(Dir(t), "deploy", "crds", "trust.cert-manager.io_bundles.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, c); err != nil {
		t.Fatal(err)
	}
	return c
}
