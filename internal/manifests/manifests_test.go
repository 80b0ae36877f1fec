package manifests_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/bosunkit/bosun/internal/manifests"
)

// TestBuildErrors: a directory that is no kustomization says so.
func TestBuildErrors(t *testing.T) {
	for _, dir := range []string{t.TempDir(), filepath.Join(t.TempDir(), "missing")} {
		if _, _, err := manifests.Build(dir); err == nil || !strings.Contains(err.Error(), dir) {
			t.Errorf("Build(%s) = %v, want an error naming the directory", dir, err)
		}
	}
}
