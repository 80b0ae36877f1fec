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

// summary prints the table of the goals, from the medians of the runs.
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
	med := func(rs []result, f func(result) float64) float64 {
		var v []float64
		for _, r := range rs {
			v = append(v, f(r))
		}
		return median(v)
	}
	secs := func(d time.Duration) float64 { return d.Seconds() }
	if len(runs) == 0 && len(fair) == 0 && len(heaps) == 0 && len(sets) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| figure | bosun | hand-written | bare | ratio | goal |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | --- |")
	for _, n := range cfg.sizes {
		if !cfg.rows["converge"] {
			break
		}
		b, h, bare := pick(armBosun, n, 0), pick(armHand, n, 0), pick(armBare, n, 0)
		tb, th, tbare := med(b, func(r result) float64 { return secs(r.all) }), med(h, func(r result) float64 { return secs(r.all) }), med(bare, func(r result) float64 { return secs(r.all) })
		fmt.Fprintf(w, "| time to all Ready, N=%d (s) | %.2f | %.2f | %.2f | %.2f / %.2f | <= 0.80 / <= 1.10 |\n", n, tb, th, tbare, tb/th, tb/tbare)
		rb, rh := med(b, func(r result) float64 { return float64(r.reconciles) / float64(r.n) }), med(h, func(r result) float64 { return float64(r.reconciles) / float64(r.n) })
		fmt.Fprintf(w, "| reconciles per object, N=%d | %.2f | %.2f | | | 1.0 |\n", n, rb, rh)
		cb, ch := med(b, func(r result) float64 { return secs(r.cpu) / float64(r.n) }), med(h, func(r result) float64 { return secs(r.cpu) / float64(r.n) })
		fmt.Fprintf(w, "| controller CPU per object, N=%d (µs) | %.0f | %.0f | %.0f | %.2f | <= 0.70 |\n", n, cb*1e6, ch*1e6,
			med(bare, func(r result) float64 { return secs(r.cpu) / float64(r.n) })*1e6, cb/ch)
		ab, ah := med(b, func(r result) float64 { return secs(r.apiCPU) / float64(r.n) }), med(h, func(r result) float64 { return secs(r.apiCPU) / float64(r.n) })
		fmt.Fprintf(w, "| API server and etcd CPU per object, N=%d (µs) | %.0f | %.0f | %.0f | %.2f | |\n", n, ab*1e6, ah*1e6,
			med(bare, func(r result) float64 { return secs(r.apiCPU) / float64(r.n) })*1e6, ab/ah)
		fb, fh := med(b, func(r result) float64 { return secs(r.first) }), med(h, func(r result) float64 { return secs(r.first) })
		fmt.Fprintf(w, "| start to first Ready, N=%d (s) | %.3f | %.3f | | %.2f | <= 1.0 |\n", n, fb, fh, fb/fh)
		if lb, lh := latencies(b), latencies(h); len(lb) > 0 && len(lh) > 0 {
			pb, ph := quantile(lb, 0.99), quantile(lh, 0.99)
			fmt.Fprintf(w, "| p99 spec change to Ready, N=%d, %.0f changes/s (ms) | %d | %d | | %.2f | <= 0.90 |\n", n, cfg.churnRate, pb.Milliseconds(), ph.Milliseconds(), float64(pb)/float64(ph))
		}
	}
	n := cfg.sizes[0]
	if !cfg.rows["fail"] {
		n = 0
	}
	slow := func(arm string) float64 {
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
		return median(v)
	}
	if n > 0 {
		fmt.Fprintf(w, "| healthy objects slowed by 1 in %d failing, N=%d | %.3f | %.3f | | | <= 1.02 |\n", cfg.failEvery, n, slow(armBosun), slow(armHand))
	}
	for _, h := range heaps {
		fmt.Fprintf(w, "| heap of a cache of %d objects (MiB): bosun default / controller-runtime default | %.1f | %.1f | | %.2f | <= 0.45 |\n",
			h.n, float64(h.bosun)/(1<<20), float64(h.cr)/(1<<20), float64(h.bosun)/float64(h.cr))
	}
	for _, r := range sets {
		fmt.Fprintf(w, "| heap of a cache of %d ConfigMaps, %d of them children of a set (MiB): children.CacheSetsOnly / bosun default | %.1f | | | %.2f | |\n",
			r.n, r.children, float64(r.sets)/(1<<20), float64(r.sets)/float64(r.all))
	}
	for _, f := range fair {
		fmt.Fprintf(w, "| %s: p99 time to Ready of %d objects beside %d / alone, from the start (ms) | %d / %d | | | %.2f | <= 2 |\n",
			f.arm, cfg.fairSmall, cfg.fairBig, f.beside.Milliseconds(), f.alone.Milliseconds(), float64(f.beside)/float64(f.alone))
		fmt.Fprintf(w, "| %s: p99 spec change to Ready of %d objects during a burst of %d changes beside / alone (ms) | %d / %d | | | %.2f | <= 2 |\n",
			f.arm, cfg.fairSmall, cfg.fairBig, f.burstBeside.Milliseconds(), f.burstAlone.Milliseconds(), float64(f.burstBeside)/float64(f.burstAlone))
	}
	for _, arm := range []string{armBosun, armHand} {
		if !cfg.rows["converge"] {
			break
		}
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
		fmt.Fprintf(w, "| %s: writes when idle / on restart / on resync | %d / %d / %d | | | | 0 |\n", arm, idle, restart, resync)
	}
}

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
