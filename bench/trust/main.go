// Command trust measures the trust example beside trust-manager, on the
// same machine in one run: both operators run as processes of their own,
// with the same arguments, against a control plane of their own each, and
// go through the same rows (docs/BENCHMARKS.md, "trust-manager's Bundle").
// Each round runs every arm, in an order rotated from round to round;
// every run is printed, then the medians and their ratios.
//
//	go run ./bench/trust            # make bench-trust
//	go run ./bench/trust -namespaces 200 -bundles 10 -bundle-namespaces 20 -new 20 -rounds 1
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func main() {
	cfg := config{}
	flag.IntVar(&cfg.namespaces, "namespaces", 2000, "Namespaces the one Bundle of the first row reaches.")
	flag.IntVar(&cfg.bundles, "bundles", 100, "Bundles of the second row.")
	flag.IntVar(&cfg.bundleNamespaces, "bundle-namespaces", 200, "Namespaces each Bundle of the second row selects.")
	flag.IntVar(&cfg.newNamespaces, "new", 200, "Namespaces made while every Bundle is synced.")
	flag.IntVar(&cfg.certs, "certs", 10, "CA certificates in the source, which every target holds.")
	flag.DurationVar(&cfg.idle, "idle", 30*time.Second, "How long the idle and restart rows watch for writes.")
	flag.IntVar(&cfg.rounds, "rounds", 2, "Rounds; each runs every arm.")
	flag.DurationVar(&cfg.timeout, "timeout", 15*time.Minute, "Longest a row may take to sync.")
	arms := flag.String("arms", "bosun,trust-manager", "Arms to run, by name, comma-separated: one arm alone prints no ratio.")
	flag.Parse()
	cfg.arms = strings.Split(*arms, ",")
	ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	if err := run(context.Background(), cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench-trust:", err)
		os.Exit(1)
	}
}
