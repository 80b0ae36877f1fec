package operator

import (
	"errors"
	"io"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// TestDevNeedsTheDevPackage checks --dev in a binary that does not link
// package operator/dev, as a release build: it starts nothing and says
// how to get a build that can.
func TestDevNeedsTheDevPackage(t *testing.T) {
	_, err := startDev(t.Context(), nil, Options{Name: "shop"}, Flags{Dev: true}, runtime.NewScheme(), io.Discard)
	if !errors.Is(err, errNoDev) {
		t.Fatalf("startDev without operator/dev: %v, want errNoDev", err)
	}
	for _, want := range []string{`operator "shop": --dev`, "bosun dev", "github.com/bosunkit/bosun/operator/dev", "-tags bosundev"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not say %q", err, want)
		}
	}
}
