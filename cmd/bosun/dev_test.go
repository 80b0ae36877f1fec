package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDevNeedsTheDevFile runs bosun dev in a module whose cmd/ has no file
// that links package operator/dev, as one an older bosun init made: it
// refuses before building anything and prints the file to add, rather
// than running an operator that refuses --dev.
func TestDevNeedsTheDevFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "cmd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cmd", "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, status := runMain(t, dir, "dev", "--workloads=false")
	if status == 0 {
		t.Fatalf("bosun dev without cmd/dev.go succeeded; stderr:\n%s", stderr)
	}
	for _, want := range []string{"add cmd/dev.go", "//go:build bosundev", `import _ "github.com/bosunkit/bosun/operator/dev"`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bin")); !os.IsNotExist(err) {
		t.Errorf("bosun dev built something before refusing: %v", err)
	}
}
