package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestDemoOnce runs `bosun demo --once` in-process against a real control
// plane: it must exit without error with every sample Ready.
func TestDemoOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd := newRootCommand()
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"demo", "--once", "--timeout", "2m"})
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatalf("bosun demo --once: %v\noutput:\n%s", err, out.String())
	}
	for _, want := range []string{"every sample is Ready", "KIND", "kubeconfig:", "postgresql ready at", "controlled by Role/shop-owner", "stopping postgresql", "stopping control plane", "2 simulated nodes", "Bundle /trust-demo"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
