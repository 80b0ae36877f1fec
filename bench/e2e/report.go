package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// machine prints what the figures were measured on.
func machine(w io.Writer, cfg config) {
	model := "unknown"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if name, ok := strings.CutPrefix(line, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
				break
			}
		}
	}
	load := "unknown"
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(data))[:3], " ")
	}
	fmt.Fprintf(w, "machine: %d CPUs (%s), %s/%s, %s, GOMAXPROCS=%d, load average %s, %s\n",
		runtime.NumCPU(), model, runtime.GOOS, runtime.GOARCH, runtime.Version(), runtime.GOMAXPROCS(0), load, time.Now().UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "load: sizes %v, %d rounds, %d workers, churn %.0f changes/s for %s, 1 in %d failing, fairness %d beside %d, heap %v\n",
		cfg.sizes, cfg.rounds, cfg.workers, cfg.churnRate, cfg.churnFor, cfg.failEvery, cfg.fairSmall, cfg.fairBig, cfg.heapSizes)
}

// summary prints the table of the goals, from the medians of the runs:
// a column for each arm of bosun (on upstream plumbing, and tuned), the
// hand-written controller and the bare minimum, and a column for the ratio
// of each bosun arm to the hand-written controller.
func summary(w io.Writer, cfg config, runs []result, fair []fairnessResult, heaps []heapResult, sets []setsResult) {
	pick := func(arm string, n, fail int) []result {
		var out []result
		for _, r := range runs {
			if r.arm == arm && r.n == n && r.fail == fail {
				out = append(out, r)
			}
		}
		return out
	}
	if len(runs) == 0 && len(fair) == 0 && len(heaps) == 0 && len(sets) == 0 {
		return
	}
	bosunArms := cfg.bosunArms()
	controllers := append(cfg.bosunArms(), armHand)
	t := table{w: w, bosun: bosunArms}
	t.header()
	for _, n := range cfg.sizes {
		if !cfg.rows["converge"] {
			break
		}
		// medians is the median of f over the clean runs of each arm that
		// ran them.
		medians := func(f func(result) float64) map[string]float64 {
			m := map[string]float64{}
			for _, arm := range append(cfg.bosunArms(), armHand, armBare) {
				if rs := pick(arm, n, 0); len(rs) > 0 {
					var v []float64
					for _, r := range rs {
						v = append(v, f(r))
					}
					m[arm] = median(v)
				}
			}
			return m
		}
		perObject := func(d func(result) time.Duration) func(result) float64 {
			return func(r result) float64 { return d(r).Seconds() / float64(r.n) * 1e6 }
		}
		all := medians(func(r result) float64 { return r.all.Seconds() })
		t.row(fmt.Sprintf("time to all Ready, N=%d (s)", n), t.cells(all, "%.2f", armBare), t.ratios(all, armBare), "<= 1.10 to bare")
		passes := medians(func(r result) float64 { return float64(r.reconciles) / float64(r.n) })
		t.row(fmt.Sprintf("reconciles per object, N=%d", n), t.cells(passes, "%.2f"), t.ratios(passes, ""), "1.0")
		cpu := medians(perObject(func(r result) time.Duration { return r.cpu }))
		t.row(fmt.Sprintf("controller CPU per object, N=%d (µs)", n), t.cells(cpu, "%.0f", armBare), t.ratios(cpu, ""), "<= 0.85")
		api := medians(perObject(func(r result) time.Duration { return r.apiCPU }))
		t.row(fmt.Sprintf("API server and etcd CPU per object, N=%d (µs)", n), t.cells(api, "%.0f", armBare), t.ratios(api, ""), "<= 1.00")
		reqs := medians(func(r result) float64 {
			var sum float64
			for _, v := range r.requests {
				sum += v
			}
			return sum / float64(r.n)
		})
		t.row(fmt.Sprintf("API requests per object, N=%d (the runs' lines give them by verb)", n), t.cells(reqs, "%.2f", armBare), t.ratios(reqs, ""), "")
		first := medians(func(r result) float64 { return r.first.Seconds() })
		t.row(fmt.Sprintf("start to first Ready, N=%d (s)", n), t.cells(first, "%.3f"), t.ratios(first, ""), "<= 1.0")
		p99 := map[string]float64{}
		for _, arm := range controllers {
			if l := latencies(pick(arm, n, 0)); len(l) > 0 {
				p99[arm] = float64(quantile(l, 0.99).Milliseconds())
			}
		}
		if _, ok := p99[armHand]; ok {
			t.row(fmt.Sprintf("p99 spec change to Ready, N=%d, %.0f changes/s (ms)", n, cfg.churnRate), t.cells(p99, "%.0f"), t.ratios(p99, ""), "<= 0.90")
		}
	}
	if n := cfg.sizes[0]; cfg.rows["fail"] {
		slowed := map[string]float64{}
		for _, arm := range controllers {
			var v []float64
			for _, f := range pick(arm, n, cfg.failEvery) {
				for _, c := range pick(arm, n, 0) {
					if c.round != f.round {
						continue
					}
					var clean time.Duration
					for name := range f.healthyAt {
						clean = max(clean, c.healthyAt[name])
					}
					v = append(v, float64(f.all)/float64(clean))
				}
			}
			slowed[arm] = median(v)
		}
		t.row(fmt.Sprintf("healthy objects slowed by 1 in %d failing, N=%d", cfg.failEvery, n), t.cells(slowed, "%.3f"), nil, "<= 1.02")
	}
	for _, h := range heaps {
		// The hand-written arm runs on controller-runtime's default cache.
		heap := map[string]float64{armBosun: inMiB(h.bosun), armHand: inMiB(h.cr)}
		if h.tuned > 0 {
			heap[armBosunTuned] = inMiB(h.tuned)
		}
		t.row(fmt.Sprintf("heap of a cache of %d objects (MiB): bosun default / controller-runtime default", h.n), t.cells(heap, "%.1f"), t.ratios(heap, ""), "<= 0.60")
	}
	for _, r := range sets {
		t.row(fmt.Sprintf("heap of a cache of %d ConfigMaps, %d of them children of a set (MiB): children.CacheSetsOnly / bosun default", r.n, r.children),
			map[string]string{armBosun: fmt.Sprintf("%.1f", inMiB(r.sets))}, map[string]string{armBosun: fmt.Sprintf("%.2f", float64(r.sets)/float64(r.all))}, "")
	}
	if len(fair) > 0 {
		start, burst := map[string]string{}, map[string]string{}
		for _, f := range fair {
			start[f.arm] = fmt.Sprintf("%d / %d = %.2fx", f.beside.Milliseconds(), f.alone.Milliseconds(), float64(f.beside)/float64(f.alone))
			burst[f.arm] = fmt.Sprintf("%d / %d = %.2fx", f.burstBeside.Milliseconds(), f.burstAlone.Milliseconds(), float64(f.burstBeside)/float64(f.burstAlone))
		}
		t.row(fmt.Sprintf("p99 time to Ready of %d objects beside %d / alone, from the start (ms)", cfg.fairSmall, cfg.fairBig), start, nil, "<= 2x")
		t.row(fmt.Sprintf("p99 spec change to Ready of %d objects during a burst of %d changes beside / alone (ms)", cfg.fairSmall, cfg.fairBig), burst, nil, "<= 2x")
	}
	if cfg.rows["converge"] {
		writes := map[string]string{}
		for _, arm := range controllers {
			idle, restart, resync := 0, -1, -1
			for _, r := range runs {
				if r.arm != arm || r.fail != 0 {
					continue
				}
				idle += r.idleWrites
				if r.restartWrites >= 0 {
					restart, resync = max(restart, 0)+r.restartWrites, max(resync, 0)+r.resyncWrites
				}
			}
			writes[arm] = fmt.Sprintf("%d / %d / %d", idle, restart, resync)
		}
		t.row("writes when idle / on restart / on resync", writes, nil, "0")
	}
}

// table writes the rows of the summary: the figure, a column for each
// arm of bosun, the hand-written controller's and the bare minimum's, a
// column for the ratio of each bosun arm to the hand-written controller,
// and the goal.
type table struct {
	w     io.Writer
	bosun []string
}

func (t table) header() {
	names := []string{"figure"}
	names = append(names, t.bosun...)
	names = append(names, armHand, armBare)
	align := []string{"---"}
	for range len(t.bosun) + 2 {
		align = append(align, "---:")
	}
	for _, arm := range t.bosun {
		names, align = append(names, arm+" / "+armHand), append(align, "---:")
	}
	names, align = append(names, "goal"), append(align, "---")
	fmt.Fprintln(t.w)
	t.line(names)
	t.line(align)
}

// row writes the row of figure: the cell of each arm, and the ratio of
// each bosun arm to the hand-written controller, by arm ("" when none).
func (t table) row(figure string, cells, ratios map[string]string, goal string) {
	out := []string{figure}
	for _, arm := range append(slices.Clone(t.bosun), armHand, armBare) {
		out = append(out, cells[arm])
	}
	for _, arm := range t.bosun {
		out = append(out, ratios[arm])
	}
	t.line(append(out, goal))
}

func (t table) line(cells []string) {
	fmt.Fprintf(t.w, "| %s |\n", strings.Join(cells, " | "))
}

// cells formats the figures of the controllers' arms, and of extra (the
// bare minimum, for the figures it has), that m holds.
func (t table) cells(m map[string]float64, format string, extra ...string) map[string]string {
	out := map[string]string{}
	for _, arm := range append(append(slices.Clone(t.bosun), armHand), extra...) {
		if v, ok := m[arm]; ok {
			out[arm] = fmt.Sprintf(format, v)
		}
	}
	return out
}

// ratios are the ratios of each bosun arm's figure to the hand-written
// controller's, and when bare names an arm, to that arm's as well.
func (t table) ratios(m map[string]float64, bare string) map[string]string {
	out := map[string]string{}
	hand, ok := m[armHand]
	if !ok {
		return out
	}
	for _, arm := range t.bosun {
		v, ok := m[arm]
		if !ok {
			continue
		}
		out[arm] = fmt.Sprintf("%.2f", v/hand)
		if floor, ok := m[bare]; ok && bare != "" {
			out[arm] += fmt.Sprintf(" (%.2f to %s)", v/floor, bare)
		}
	}
	return out
}

// inMiB is n bytes in MiB.
func inMiB(n uint64) float64 { return float64(n) / (1 << 20) }

func latencies(rs []result) []time.Duration {
	var out []time.Duration
	for _, r := range rs {
		out = append(out, r.latencies...)
	}
	return out
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// shardSummary prints the table of the sharded runs.
func shardSummary(w io.Writer, shards []shardResult) {
	if len(shards) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| replicas | replica killed mid-change | objects | time to all Ready (s) | objects cached per replica | live heap per replica (MiB) | its Lease expired after (s) | its objects all relabelled after (s) | of which after the expiry (s) | each of its objects reconciled by another replica after (s) | all Ready for the change after (s) | passes per object | objects reconciled by two replicas at once |")
	fmt.Fprintln(w, "| ---: | --- | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, r := range shards {
		heaps := make([]string, len(r.heaps))
		for i, h := range r.heaps {
			heaps[i] = fmt.Sprintf("%.1f", float64(h)/(1<<20))
		}
		expired, relabelled, after, taken, handover := "-", "-", "-", "-", "-"
		if r.relabelled > 0 {
			expired, relabelled = fmt.Sprintf("%.2f", r.expired.Seconds()), fmt.Sprintf("%.2f", r.relabelled.Seconds())
			after, taken = fmt.Sprintf("%.2f", r.afterExpiry.Seconds()), fmt.Sprintf("%.2f", r.taken.Seconds())
		}
		if r.handover > 0 {
			handover = fmt.Sprintf("%.2f", r.handover.Seconds())
		}
		killed := r.killed
		if killed == "" {
			killed = "-"
		}
		fmt.Fprintf(w, "| %d | %s | %d | %.2f | %v | %s | %s | %s | %s | %s | %s | %.2f | %d |\n", r.replicas, killed, r.n, r.all.Seconds(), r.cached, strings.Join(heaps, ", "),
			expired, relabelled, after, taken, handover, float64(r.passes)/float64(r.n), r.overlaps)
	}
}
