package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestShortRun runs the bench for one round, as `make bench-dev` runs it
// for five, and checks what does not depend on timing: both kinds of run
// brought a sample to Ready, and the report has every row.
func TestShortRun(t *testing.T) {
	var out bytes.Buffer
	err := run(t.Context(), &out, "../../examples/hello/cmd", 1, 5*time.Minute)
	t.Log(out.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"round 1  bare (--dev-workloads=false)",
		"round 1  with workloads and 2 nodes",
		"controlplane.Start alone",
		"the workloads add",
	} {
		if strings.Count(out.String(), want) < 1 {
			t.Errorf("the report lacks %q", want)
		}
	}
	if n := strings.Count(out.String(), "the workloads add"); n != 2 {
		t.Errorf("the report has %d summaries, want 2 (bosun dev and Start)", n)
	}
}

// TestMedian checks the median of a few durations.
func TestMedian(t *testing.T) {
	for _, tt := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{[]time.Duration{3}, 3},
		{[]time.Duration{5, 1, 3}, 3},
		{[]time.Duration{4, 1, 3, 2}, 3},
	} {
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
