package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/bosunkit/bosun/bench/internal/extcalls"
)

// TestShortRun runs the bench on a few Roles, as `make bench-polling` runs
// it on a thousand, and checks what does not depend on timing: every arm
// ran, the arms that observe one by one made no batch calls and those
// that batch made some, batches cut the calls of the idle window, and the
// report has every row.
func TestShortRun(t *testing.T) {
	cfg := defaultConfig()
	cfg.n, cfg.poll, cfg.idle, cfg.drift = 12, time.Second, 1, 3
	var out bytes.Buffer
	results, err := run(t.Context(), cfg, &out)
	t.Log(out.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != len(arms) {
		t.Fatalf("%d arms ran, want %d", len(results), len(arms))
	}
	for _, r := range results {
		batches := r.restart["observe batch"] + r.idle["observe batch"]
		switch {
		case !r.arm.batch && batches != 0:
			t.Errorf("%s: %v batch calls, want none", r.arm.name, batches)
		case r.arm.batch && r.idle["observe batch"] == 0:
			t.Errorf("%s: no batch calls while idle (%v)", r.arm.name, r.idle)
		}
	}
	if one, batch := extcalls.Total(results[0].idle), extcalls.Total(results[2].idle); batch >= one {
		t.Errorf("idle calls %v with batches, %v one by one: want fewer with batches", batch, one)
	}
	for _, row := range []string{"restart: calls in the first poll interval", "restart: most calls in one second", "each tenth",
		"idle: calls per Role per poll", "per hour", "time to repair"} {
		if !strings.Contains(out.String(), row) {
			t.Errorf("the report has no row %q", row)
		}
	}
}
