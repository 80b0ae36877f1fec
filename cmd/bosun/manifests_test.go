package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestManifestsCommand renders an example's config/default to stdout and
// to a file, with --dir and with the directory as the argument, and
// refuses what it cannot render.
func TestManifestsCommand(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "hello", "config", "default")
	stdout, stderr, err := run(t, "manifests", "--dir", dir)
	if err != nil {
		t.Fatalf("bosun manifests --dir: %v\n%s", err, stderr)
	}
	for _, want := range []string{
		"kind: CustomResourceDefinition", "name: greetings.hello.bosun.dev",
		"name: hello-controller-manager", "namespace: hello-system", "- greetings/finalizers",
		"image: hello:dev", "runAsNonRoot: true", "path: /readyz",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("bosun manifests prints no %q", want)
		}
	}

	out := filepath.Join(t.TempDir(), "hello.yaml")
	if _, stderr, err := run(t, "manifests", dir, "-o", out); err != nil {
		t.Fatalf("bosun manifests DIR -o: %v\n%s", err, stderr)
	}
	written, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(written) != stdout {
		t.Error("the file -o wrote differs from what bosun manifests prints")
	}

	for _, args := range [][]string{
		{"manifests", "--dir", dir, dir},
		{"manifests", "--dir", t.TempDir()},
		{"manifests", "--dir", dir, "-o", filepath.Join(t.TempDir(), "missing", "x.yaml")},
	} {
		if _, _, err := run(t, args...); err == nil {
			t.Errorf("bosun %v: no error", args)
		}
	}
}
