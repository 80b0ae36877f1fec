// Command postgres measures the managed step at scale: the Role
// controller of the PostgreSQL example operator brings N Roles (1,000 by
// default), each with a password published in a connection Secret, to
// Ready on a real kube-apiserver and a real PostgreSQL server, then polls
// them. It reports, for a run without a call limit and one with, the time
// to all Ready, the external calls per object to converge and per object
// and poll once converged, the load the polls put on the server (calls,
// sessions and transactions per second), and the most calls started in
// one second and connections held at once, against the limit.
//
//	go run ./bench/postgres                 # the figures of docs/BENCHMARKS.md
//	go run ./bench/postgres -n 200 -poll 5s # a quick look
//
// `make bench-postgres` runs it. It needs PostgreSQL's server binaries
// (Debian's postgresql package). No test asserts a timing.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// config is what a run measures.
type config struct {
	// n is the number of Roles.
	n int
	// workers is the Role controller's MaxConcurrentReconciles.
	workers int
	// poll is the managed step's poll interval; polls is how many of them
	// the steady-state window lasts.
	poll  time.Duration
	polls int
	// rate and concurrency are the call limit of the limited run.
	rate        float64
	concurrency int
}

func defaultConfig() config {
	return config{n: 1000, workers: 4, poll: 10 * time.Second, polls: 3, rate: 100, concurrency: 2}
}

func (c *config) bind(fs *flag.FlagSet) {
	fs.IntVar(&c.n, "n", c.n, "Roles to converge")
	fs.IntVar(&c.workers, "workers", c.workers, "workers of the Role controller")
	fs.DurationVar(&c.poll, "poll", c.poll, "poll interval of the managed step")
	fs.IntVar(&c.polls, "polls", c.polls, "poll intervals the steady state is measured over")
	fs.Float64Var(&c.rate, "rate", c.rate, "calls per second of the limited run")
	fs.IntVar(&c.concurrency, "concurrency", c.concurrency, "connections at once of the limited run")
}

func main() {
	// The controller's log would drown the report.
	ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	cfg := defaultConfig()
	cfg.bind(flag.CommandLine)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fmt.Printf("machine: %d CPUs, %s/%s, %s, GOMAXPROCS=%d, %s\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(),
		runtime.GOMAXPROCS(0), time.Now().UTC().Format(time.RFC3339))
	fmt.Printf("load: %d Roles with connection Secrets, %d workers, poll every %s, steady state over %d polls, limited run at %.0f calls/s and %d connections\n",
		cfg.n, cfg.workers, cfg.poll, cfg.polls, cfg.rate, cfg.concurrency)
	if _, err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench-postgres:", err)
		os.Exit(1)
	}
}
