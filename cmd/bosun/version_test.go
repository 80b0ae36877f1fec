package main

import (
	"strings"
	"testing"
)

// TestVersion runs `bosun version` as a process: it names bosun's module
// and the controller-runtime it links.
func TestVersion(t *testing.T) {
	out, errOut, status := runMain(t, t.TempDir(), "version")
	if status != 0 {
		t.Fatalf("bosun version: exit %d\n%s", status, errOut)
	}
	for _, want := range []string{"module:             github.com/bosunkit/bosun/cmd/bosun\n", "bosun:              ", "controller-runtime: v0.", "go:                 go1."} {
		if !strings.Contains(out, want) {
			t.Errorf("bosun version lacks %q:\n%s", want, out)
		}
	}
	out, _, _ = runMain(t, t.TempDir(), "version", "--short")
	if !strings.HasPrefix(out, "github.com/bosunkit/bosun/cmd/bosun ") || strings.Count(out, "\n") != 1 {
		t.Errorf("bosun version --short = %q, want one line starting with the module", out)
	}
}
