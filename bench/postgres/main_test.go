package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestShortRun runs the bench on a few Roles, as `make bench-postgres`
// runs it on a thousand, and checks what does not depend on timing: every
// Role converged in both runs with one create each, converged Roles were
// polled (a connect and an observe per poll), the limited run held no
// more connections than its limit and waited for it, and the report has
// every row.
func TestShortRun(t *testing.T) {
	cfg := defaultConfig()
	cfg.n = 30
	cfg.poll = 2 * time.Second
	cfg.polls = 1
	cfg.rate = 20
	var out bytes.Buffer
	rep, err := run(t.Context(), cfg, &out)
	t.Log(out.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.arms) != 2 {
		t.Fatalf("%d runs, want 2", len(rep.arms))
	}
	for _, r := range rep.arms {
		if got := r.convergeCalls["create"]; got != float64(cfg.n) {
			t.Errorf("%s: %v creates, want one per Role (%d)", r.name, got, cfg.n)
		}
		if r.steadyCalls["observe"] == 0 || r.steadyCalls["connect"] == 0 || r.steadyCalls["create"] != 0 {
			t.Errorf("%s: calls once converged %v, want connects and observes only", r.name, r.steadyCalls)
		}
	}
	limited := rep.arms[1]
	if limited.waited == 0 {
		t.Errorf("the limited run never waited for its limit of %.0f calls a second", cfg.rate)
	}
	// The server lists a connection for a moment after the controller
	// closed it and gave its slot back.
	if limited.connections > 2*cfg.concurrency {
		t.Errorf("the limited run held %d connections at once, want about %d", limited.connections, cfg.concurrency)
	}
	for _, row := range []string{"time to 30 Roles Ready", "external calls per Role to converge", "per Role per poll", "poll load", "most connections"} {
		if !strings.Contains(out.String(), row) {
			t.Errorf("the report has no row %q", row)
		}
	}
}
