package operator

import (
	"testing"

	"github.com/bosunkit/bosun/version"
)

// TestBuildOf: the build an operator records on its objects is its main
// module's version, and none for a binary that no version names.
func TestBuildOf(t *testing.T) {
	for _, tt := range []struct{ version, want string }{
		{"v1.4.2", "v1.4.2"},
		{"v0.0.0-20261127101500-3f2c1a0b9d8e+dirty", "v0.0.0-20261127101500-3f2c1a0b9d8e+dirty"},
		{"(devel)", ""},
		{"", ""},
	} {
		if got := buildOf(version.Info{Version: tt.version}); got != tt.want {
			t.Errorf("buildOf(version %q) = %q, want %q", tt.version, got, tt.want)
		}
	}
}
