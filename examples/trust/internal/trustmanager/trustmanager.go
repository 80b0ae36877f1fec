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
	"regexp"
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

// Binary returns trust-manager's command, built from its module at the
// pinned version into a cache entry named after that version (in the
// user's cache directory, beside the control plane's binaries): the first
// call builds it, in about two minutes on two cores; later ones, in this
// run or another, find it.
func Binary(t testing.TB) string {
	t.Helper()
	version := pinnedVersion(t)
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, "bosun", "trust-manager-"+version)
	bin, marker := filepath.Join(dir, "trust-manager"), filepath.Join(dir, ".complete")
	if _, err := os.Stat(marker); err == nil {
		return bin
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Built beside the final name and renamed, so that a build cut short
	// leaves no binary that looks finished.
	tmp := bin + ".tmp"
	cmd := exec.CommandContext(t.Context(), "go", "build", "-trimpath", "-o", tmp, Module+"/cmd/trust-manager")
	cmd.Dir = PinDir(t)
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("building trust-manager %s: %v\n%s", version, err, stderr.Bytes())
	}
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(marker, []byte(Module+" "+version+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return bin
}

// pinnedVersion is the version of trust-manager PinDir's go.mod requires.
func pinnedVersion(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(PinDir(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(Module) + `\s+(v\S+)`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("%s/go.mod does not require %s", PinDir(t), Module)
	}
	return string(m[1])
}
