// Command polling measures what the managed step's polls of converged
// resources ask of the external system, and what cuts it: the Role
// controller of the PostgreSQL example operator over N Roles (1,000 by
// default), Ready on a real kube-apiserver and a real PostgreSQL server,
// is started again four times, once per arm:
//
//   - one by one: every Role observed with a query of its own, and on the
//     first pass after the start (no spreading);
//   - spread: the same, with the first observations after the start
//     spread over the poll interval;
//   - spread + batch: the Roles whose polls are due together observed with
//     one query of pg_roles (managed.BatchObserver);
//   - spread + batch + notify: the same, with the controller LISTENing for
//     notifications of changed roles.
//
// For each arm it reports the external calls of the restart (the most in
// one second, and how they fall over the first poll interval), the calls
// per Role while idle, scaled to an hour at the default one-minute poll,
// and the time to repair a role changed behind the operator's back (with
// a notification in the last arm).
//
//	go run ./bench/polling                  # the figures of docs/BENCHMARKS.md
//	go run ./bench/polling -n 200 -poll 5s  # a quick look
//
// `make bench-polling` runs it. It needs PostgreSQL's server binaries
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
	// n is the number of Roles, workers the controller's
	// MaxConcurrentReconciles.
	n, workers int
	// poll is the managed step's poll interval; idle is how many of them
	// the idle window lasts.
	poll time.Duration
	idle int
	// drift is how many roles are changed behind the operator's back in
	// each arm.
	drift int
}

func defaultConfig() config {
	return config{n: 1000, workers: 4, poll: 10 * time.Second, idle: 2, drift: 20}
}

func (c *config) bind(fs *flag.FlagSet) {
	fs.IntVar(&c.n, "n", c.n, "Roles")
	fs.IntVar(&c.workers, "workers", c.workers, "workers of the Role controller")
	fs.DurationVar(&c.poll, "poll", c.poll, "poll interval of the managed step")
	fs.IntVar(&c.idle, "idle", c.idle, "poll intervals the idle load is measured over")
	fs.IntVar(&c.drift, "drift", c.drift, "roles changed behind the operator's back in each arm")
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
	fmt.Printf("load: %d Roles, %d workers, poll every %s, idle load over %d polls, %d roles changed per arm\n",
		cfg.n, cfg.workers, cfg.poll, cfg.idle, cfg.drift)
	if _, err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench-polling:", err)
		os.Exit(1)
	}
}
