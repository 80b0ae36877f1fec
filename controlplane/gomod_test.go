package controlplane

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGeneratedGoModIsCurrent checks that zz_generated.gomod.go carries the
// go.mod and go.sum of hack/controlplane as they are now.
func TestGeneratedGoModIsCurrent(t *testing.T) {
	for _, tt := range []struct {
		file      string
		generated string
	}{
		{file: "go.mod", generated: buildGoMod},
		{file: "go.sum", generated: buildGoSum},
	} {
		path := filepath.Join("..", "hack", "controlplane", tt.file)
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("reading %s: %v", path, err)
		}
		if diff := cmp.Diff(string(want), tt.generated); diff != "" {
			t.Errorf("zz_generated.gomod.go is out of date with %s; run `go generate ./controlplane/...` (-file +generated):\n%s", path, diff)
		}
	}
}
