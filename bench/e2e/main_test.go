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
// timing: every arm converged every object, bosun, on upstream plumbing
// and tuned, did it in one pass per object where the hand-written
// controller takes two, nothing was written while idle, after a restart or
// on a resync, replicas of a ring shared the objects without reconciling
// one at once, and the report has a line for every goal with a figure of
// both bosun arms.
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
	failing, clean := map[string]bool{}, map[string]bool{}
	for _, r := range rep.runs {
		if r.fail != 0 {
			failing[r.arm] = true
		} else {
			clean[r.arm] = true
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
		// Every arm makes the same writes: one status patch per object.
		if p := r.requests["PATCH widgets/status"] / float64(r.n); p < 1 || p > 1.1 {
			t.Errorf("%s: %.2f status patches per object, want 1 (requests %v)", r.arm, p, r.requests)
		}
		switch perObject := float64(r.reconciles) / float64(r.n); r.arm {
		case armBosun, armBosunTuned:
			if perObject > 1.1 {
				t.Errorf("%s: %.2f reconciles per object, want 1", r.arm, perObject)
			}
		case armHand:
			if perObject < 1.9 {
				t.Errorf("hand-written: %.2f reconciles per object, want 2 (its own write brings a second pass)", perObject)
			}
		}
	}
	for _, arm := range []string{armBosun, armBosunTuned, armHand, armBare} {
		if !clean[arm] {
			t.Errorf("no clean run of %s", arm)
		}
		if !strings.Contains(out.String(), "run arm="+arm+" ") {
			t.Errorf("no raw line of a run of %s", arm)
		}
	}
	if !failing[armBosun] || !failing[armBosunTuned] || !failing[armHand] || failing[armBare] {
		t.Errorf("failing runs of %v, want bosun, bosun-tuned and hand-written", failing)
	}
	if len(rep.heaps) != 1 || rep.heaps[0].bosun == 0 || rep.heaps[0].tuned == 0 || rep.heaps[0].cr == 0 {
		t.Errorf("heap figures %+v, want the three caches measured", rep.heaps)
	}
	if len(rep.sets) != 1 || rep.sets[0].all == 0 || rep.sets[0].sets == 0 {
		t.Errorf("children's cache figures %+v, want both caches measured", rep.sets)
	}
	if len(rep.fair) != 3 {
		t.Errorf("%d fairness results, want 3: bosun, bosun-tuned and hand-written", len(rep.fair))
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
	if !strings.Contains(out.String(), "objects cached per replica") {
		t.Error("the report has no table of the sharded runs")
	}
	// Every row of the table of goals has a figure of each bosun arm, and
	// those compared with the hand-written controller their ratio to it.
	table := goals(t, out.String())
	for _, row := range []struct {
		figure string
		ratio  bool
	}{
		{"time to all Ready", true}, {"reconciles per object", true}, {"controller CPU per object", true},
		{"API server and etcd CPU", true}, {"start to first Ready", true}, {"p99 spec change to Ready", true},
		{"healthy objects slowed", false}, {"heap of a cache of 200 objects", true}, {"beside", false},
		{"during a burst", false}, {"writes when idle", false},
	} {
		cells, ok := table[row.figure]
		if !ok {
			t.Errorf("the report has no row %q", row.figure)
			continue
		}
		for _, col := range []string{armBosun, armBosunTuned, armHand} {
			if cells[col] == "" {
				t.Errorf("row %q: no figure of %s", row.figure, col)
			}
		}
		for _, col := range []string{armBosun, armBosunTuned} {
			if ratio := cells[col+" / "+armHand]; row.ratio && ratio == "" {
				t.Errorf("row %q: no ratio of %s to %s", row.figure, col, armHand)
			}
		}
	}
	if ready := table["time to all Ready"]; !strings.Contains(ready[armBosunTuned+" / "+armHand], "to bare") {
		t.Errorf("time to all Ready: %q, want bosun-tuned's ratio to bare too", ready[armBosunTuned+" / "+armHand])
	}
	if _, ok := table["CacheSetsOnly"]; !ok {
		t.Error("the report has no row of children.CacheSetsOnly")
	}
}

// goals reads the table of goals out of the report: for the first row
// whose figure holds each key, its cells by column name.
func goals(t *testing.T, report string) map[string]map[string]string {
	t.Helper()
	keys := []string{
		"time to all Ready", "reconciles per object", "controller CPU per object", "API server and etcd CPU", "start to first Ready",
		"p99 spec change to Ready", "healthy objects slowed", "heap of a cache of 200 objects", "CacheSetsOnly", "beside", "during a burst", "writes when idle",
	}
	split := func(line string) []string {
		cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "| "), " |"), " | ")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		return cells
	}
	var header []string
	out := map[string]map[string]string{}
	for line := range strings.SplitSeq(report, "\n") {
		if strings.HasPrefix(line, "| figure |") {
			header = split(line)
			continue
		}
		if header == nil {
			continue
		}
		if !strings.HasPrefix(line, "| ") {
			break // the end of the table
		}
		cells := split(line)
		if len(cells) != len(header) {
			t.Errorf("the row %q has %d cells, the header %d", line, len(cells), len(header))
			continue
		}
		for _, key := range keys {
			if _, seen := out[key]; seen || !strings.Contains(cells[0], key) {
				continue
			}
			out[key] = map[string]string{}
			for i, name := range header {
				out[key][name] = cells[i]
			}
		}
	}
	if header == nil {
		t.Fatal("the report has no table of goals")
	}
	return out
}

func sum(v []int) int {
	t := 0
	for _, x := range v {
		t += x
	}
	return t
}
