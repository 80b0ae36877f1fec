package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMain makes the test binary a child of the bench when run as one.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// TestShortRun runs every row of the bench on a few objects, as `make
// bench-e2e` runs them on thousands, and checks what does not depend on
// timing: every arm converged every object, bosun did it in one pass per
// object where the hand-written controller takes two, nothing was written
// while idle, after a restart or on a resync, replicas of a ring shared
// the objects without reconciling one at once, and the report has a line
// for every goal.
func TestShortRun(t *testing.T) {
	cfg := defaultConfig()
	cfg.sizes = []int{40}
	cfg.rounds = 1
	cfg.churnFor = 500 * time.Millisecond
	cfg.churnRate = 20
	cfg.idleFor = 500 * time.Millisecond
	cfg.fairBig, cfg.fairSmall = 100, 3
	cfg.heapSizes = []int{200}
	cfg.replicas = []int{1, 2}
	var out bytes.Buffer
	rep, err := run(t.Context(), cfg, &out)
	t.Log(out.String())
	if err != nil {
		t.Fatal(err)
	}
	failing := map[string]bool{}
	for _, r := range rep.runs {
		if r.fail != 0 {
			failing[r.arm] = true
		}
		if r.fail == 0 && len(r.healthyAt) != r.n {
			t.Errorf("%s: %d of %d objects Ready", r.arm, len(r.healthyAt), r.n)
		}
		if r.idleWrites != 0 || r.restartWrites > 0 || r.resyncWrites > 0 {
			t.Errorf("%s: writes when idle, on restart, on resync: %d, %d, %d; want none", r.arm, r.idleWrites, r.restartWrites, r.resyncWrites)
		}
		if r.fail != 0 {
			continue
		}
		switch perObject := float64(r.reconciles) / float64(r.n); r.arm {
		case armBosun:
			if perObject > 1.1 {
				t.Errorf("bosun: %.2f reconciles per object, want 1", perObject)
			}
		case armHand:
			if perObject < 1.9 {
				t.Errorf("hand-written: %.2f reconciles per object, want 2 (its own write brings a second pass)", perObject)
			}
		}
	}
	if !failing[armBosun] || !failing[armHand] || failing[armBare] {
		t.Errorf("failing runs of %v, want bosun and hand-written", failing)
	}
	if len(rep.heaps) != 1 || rep.heaps[0].bosun == 0 || rep.heaps[0].cr == 0 {
		t.Errorf("heap figures %+v, want both caches measured", rep.heaps)
	}
	if len(rep.sets) != 1 || rep.sets[0].all == 0 || rep.sets[0].sets == 0 {
		t.Errorf("children's cache figures %+v, want both caches measured", rep.sets)
	}
	if len(rep.fair) != 2 {
		t.Errorf("%d fairness results, want 2", len(rep.fair))
	}
	for _, f := range rep.fair {
		if f.beside <= 0 || f.alone <= 0 || f.burstBeside <= 0 || f.burstAlone <= 0 {
			t.Errorf("%s: fairness figures %+v, want every one measured", f.arm, f)
		}
	}
	// One run of a single replica, then one run of two for each kind of
	// replica killed: a member, and the leader that runs the sharder.
	if want := 1 + len(cfg.kills); len(rep.shards) != want {
		t.Errorf("%d sharded runs, want %d", len(rep.shards), want)
	}
	killed := map[string]bool{}
	for _, r := range rep.shards {
		killed[r.killed] = true
		if r.overlaps != 0 {
			t.Errorf("%d replicas: %d objects reconciled by two replicas at once, want none", r.replicas, r.overlaps)
		}
		if r.replicas > 1 && (r.relabelled <= 0 || r.expired <= 0 || r.handover <= 0 || r.taken <= 0) {
			t.Errorf("%d replicas: Lease expired after %s, relabelled after %s, taken over after %s, Ready after %s; want all measured",
				r.replicas, r.expired, r.relabelled, r.taken, r.handover)
		}
		if sum(r.cached) != r.n {
			t.Errorf("%d replicas: caches hold %v objects, want %d in all", r.replicas, r.cached, r.n)
		}
	}
	for _, k := range cfg.kills {
		if !killed[k] {
			t.Errorf("no sharded run killed the %s", k)
		}
	}
	for _, row := range []string{
		"time to all Ready", "reconciles per object", "controller CPU per object", "start to first Ready",
		"p99 spec change to Ready", "healthy objects slowed", "heap of a cache", "CacheSetsOnly", "beside", "during a burst", "writes when idle",
		"objects cached per replica",
	} {
		if !strings.Contains(out.String(), row) {
			t.Errorf("the report has no row %q", row)
		}
	}
}

func sum(v []int) int {
	t := 0
	for _, x := range v {
		t += x
	}
	return t
}
