package dev_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// devOnly are the packages only development and tests need.
var devOnly = []string{"github.com/bosunkit/bosun/controlplane", "sigs.k8s.io/controller-runtime/pkg/envtest"}

// TestReleaseBuildLinksNoControlPlane lists what package operator and the
// example operators' binaries link: a release build links neither the
// control-plane builder nor envtest, and a development build (-tags
// bosundev, which compiles each example's cmd/dev.go) links both, so that
// --dev works there.
func TestReleaseBuildLinksNoControlPlane(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	mains, err := filepath.Glob(filepath.Join(root, "examples", "*", "cmd", "main.go"))
	if err != nil || len(mains) == 0 {
		t.Fatalf("no example operators under %s: %v", root, err)
	}
	pkgs := []string{"./operator"}
	for _, m := range mains {
		rel, err := filepath.Rel(root, filepath.Dir(m))
		if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, "./"+filepath.ToSlash(rel))
	}
	deps := func(tags string, pkg string) []string {
		t.Helper()
		args := []string{"list", "-deps"}
		if tags != "" {
			args = append(args, "-tags", tags)
		}
		cmd := exec.CommandContext(t.Context(), "go", append(args, pkg)...)
		cmd.Dir = root
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("go %s %s: %v\n%s", strings.Join(args, " "), pkg, err, stderr.String())
		}
		return strings.Fields(out.String())
	}
	for _, pkg := range pkgs {
		release := deps("", pkg)
		for _, d := range devOnly {
			if slices.Contains(release, d) {
				t.Errorf("a release build of %s links %s", pkg, d)
			}
		}
		if pkg == "./operator" {
			continue
		}
		dev := deps("bosundev", pkg)
		for _, d := range devOnly {
			if !slices.Contains(dev, d) {
				t.Errorf("a development build of %s (-tags bosundev) does not link %s: --dev would refuse to start", pkg, d)
			}
		}
	}
}
