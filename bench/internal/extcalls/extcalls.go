// Package extcalls holds what the benches of the managed step share: the
// external calls a step counts in its metrics, by operation, and a way to
// make many objects at once.
package extcalls

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"
)

// ByOp returns the external calls counted in reg
// (bosun_managed_external_calls_total), by operation.
func ByOp(reg *prometheus.Registry) (map[string]float64, error) {
	families, err := reg.Gather()
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "bosun_managed_external_calls_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "operation" {
					out[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	return out, nil
}

// Total is the sum of the calls of every operation.
func Total(m map[string]float64) float64 {
	var t float64
	for _, v := range m {
		t += v
	}
	return t
}

// PerOp formats calls by operation, each divided by d and printed with
// prec decimals.
func PerOp(calls map[string]float64, d float64, prec int) string {
	var parts []string
	for _, op := range slices.Sorted(maps.Keys(calls)) {
		parts = append(parts, fmt.Sprintf("%s %.*f", op, prec, calls[op]/d))
	}
	return strings.Join(parts, ", ")
}

// Parallel runs fn for 0..n-1, eight at a time, and returns the first
// error.
func Parallel(ctx context.Context, n int, fn func(i int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error { return fn(i) })
	}
	return g.Wait()
}
