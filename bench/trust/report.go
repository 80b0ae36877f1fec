package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"
)

// report prints, for each row, the median of each measure over the
// rounds for each arm, and bosun's against trust-manager's.
func report(out io.Writer, cfg config, results map[string][]map[string]measure) {
	fmt.Fprintf(out, "\nmedians of %d rounds (N=%d namespaces, M=%d Bundles x K=%d namespaces, %d new namespaces, %d certificates; idle and restart watched %s)\n",
		cfg.rounds, cfg.namespaces, cfg.bundles, cfg.bundleNamespaces, cfg.newNamespaces, cfg.certs, cfg.idle)
	fmt.Fprintf(out, "%-26s %-14s %10s %10s %10s %12s %10s\n", "row", "arm", "sync", "cpu", "api-cpu", "heap", "writes")
	for _, row := range rows {
		med := map[string]measure{}
		for _, a := range []string{"bosun", "trust-manager"} {
			var m measure
			var syncs, cpus, apis []time.Duration
			var heaps, writes []float64
			for _, r := range results[a] {
				syncs, cpus, apis = append(syncs, r[row].sync), append(cpus, r[row].cpu), append(apis, r[row].apiCPU)
				heaps, writes = append(heaps, r[row].heap), append(writes, r[row].total())
			}
			m.sync, m.cpu, m.apiCPU = median(syncs), median(cpus), median(apis)
			m.heap, m.writes = median(heaps), map[string]float64{"": median(writes)}
			med[a] = m
			fmt.Fprintf(out, "%-26s %-14s %10s %10s %10s %8.1f MiB %10.0f\n", row, a, m.sync.Round(time.Millisecond), m.cpu, m.apiCPU, m.heap/(1<<20), m.total())
		}
		b, t := med["bosun"], med["trust-manager"]
		fmt.Fprintf(out, "%-26s %-14s %10s %10s %10s %12s %10s\n", row, "ratio", ratio(float64(b.sync), float64(t.sync)), ratio(float64(b.cpu), float64(t.cpu)),
			ratio(float64(b.apiCPU), float64(t.apiCPU)), ratio(b.heap, t.heap), ratio(b.total(), t.total()))
	}
}

// ratio formats a/b, or "-" when b is zero.
func ratio(a, b float64) string {
	if b == 0 {
		if a == 0 {
			return "0/0"
		}
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

// median is the median of vs (the lower of the middle two).
func median[T time.Duration | float64](vs []T) T {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// lines prints the lines of code of each Bundle controller, without
// tests, comments, blank lines and the formats' encoding, which both take
// from libraries: trust-manager's pkg/bundle (its source, target and
// server-side apply packages), its certificate pool and default package;
// the port's controller, sources, pool and default package.
func lines(ctx context.Context, out io.Writer) error {
	dir, err := moduleDir(ctx)
	if err != nil {
		return err
	}
	theirs, err := codeLines(dir, []string{"pkg/bundle", "pkg/bundle/internal/source", "pkg/bundle/internal/target", "pkg/bundle/internal/ssa_client", "pkg/util", "pkg/fspkg"})
	if err != nil {
		return err
	}
	ours, err := codeLines(filepath.Join("examples", "trust"), []string{"."}, "formats.go", "samples.go", "scheme.go", "validate.go", "doc.go")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\ncontroller code (lines, without tests, comments and the formats): bosun %d, trust-manager %d, ratio %s\n", ours, theirs, ratio(float64(ours), float64(theirs)))
	return nil
}
