// Command e2e measures bosun's engine, on controller-runtime's and
// client-go's plumbing with package operator's defaults (the arm "bosun")
// and with tuning on (the arm "bosun-tuned", operator.Flags.Tuning),
// against a hand-written controller-runtime reconciler and the bare
// minimum (one status patch per object from a plain client loop), on a
// real kube-apiserver and etcd, in one run: time to all Ready, reconciles
// and CPU per object, time to the first Ready object, the cost of failing
// objects to healthy ones, the heap of a cache, the latency of a spec
// change under load, fairness between namespaces, and writes when idle,
// on resync and on restart. -tuned=false leaves the tuned arm out.
// The bosun arm also runs as 1, 2 and 4 replicas of a ring (package
// shard), one of which is killed while every object changes: what each
// replica caches, how soon its share is Ready again elsewhere, and that
// no object was reconciled by two replicas at once.
//
// Each controller runs in a process of its own (this program, started
// again as a child), so that its CPU time and heap are its own. The arms
// take turns in a different order each round, and the report gives the
// median of the rounds with every raw figure.
//
//	go run ./bench/e2e                      # the figures of docs/BENCHMARKS.md
//	go run ./bench/e2e -n 500 -rounds 1     # a quick look
//
// `make bench-e2e` runs it. No test asserts a timing. With
// BOSUN_BENCH_PROFILE set to a directory, every child writes the CPU
// profile of its convergence there, from its start until it settled (go
// tool pprof FILE), and each cache arm its
// heap profile once its cache has synced (FILE.heap.pprof, sampled every
// 64 bytes).
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/bosunkit/bosun/bench/internal/procstat"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/internal/testapi"
)

// childEnv, set to 1, makes the program a child running one arm.
const childEnv = "BOSUN_BENCH_CHILD"

func main() {
	if os.Getenv(childEnv) == "1" {
		// The failing objects' errors would flood the output.
		ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
		if err := runChild(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "bench child:", err)
			os.Exit(1)
		}
		return
	}
	cfg := defaultConfig()
	cfg.bind(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	if _, err := run(context.Background(), cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// config is what one run of the bench measures.
type config struct {
	// sizes are the numbers of objects of the convergence runs.
	sizes []int
	// rounds is how many times each arm runs each size.
	rounds int
	// workers is each controller's MaxConcurrentReconciles.
	workers int
	// churnRate and churnFor are the spec changes per second, and for how
	// long, of the latency row; it runs on the largest size.
	churnRate float64
	churnFor  time.Duration
	// failEvery makes every failEvery-th object fail in the failing runs
	// (10: 10%), which run on the smallest size.
	failEvery int
	// idleFor is how long writes are counted when nothing changes.
	idleFor time.Duration
	// fairBig and fairSmall are the sizes of the busy and the small
	// namespace of the fairness row.
	fairBig, fairSmall int
	// heapSizes are the cache sizes of the heap row.
	heapSizes []int
	// replicas are the numbers of replicas of the sharded runs, on the
	// smallest size.
	replicas []int
	// kills are the replicas each sharded run of more than one kills
	// mid-change, one run each: "member" (one that does not lead) and
	// "leader" (the one that runs the sharder).
	kills []string
	// shardLease is the Lease duration of the sharded runs.
	shardLease time.Duration
	// shardStandby runs the sharded replicas with shard.Options.Standby.
	shardStandby bool
	// shardIdle kills the replica of a sharded run once every object is
	// Ready, with no change going in, instead of mid-change.
	shardIdle bool
	// tuned runs bosun with tuning on as well (armBosunTuned and
	// armCacheBosunTuned), beside bosun on upstream plumbing.
	tuned bool
	// fresh starts every convergence run on a new control plane, with an
	// empty etcd: the runs of one bench on one control plane found the
	// API server slower for the runs that came later.
	fresh bool
	// rows are the groups of rows to measure: converge (with the
	// latency, idle, restart and resync rows), fail, fair, heap and shard.
	rows map[string]bool
	// exe is the program the children run (default: this one).
	exe string
}

func defaultConfig() config {
	return config{
		sizes:      []int{2000, 5000},
		rounds:     2,
		workers:    4,
		churnRate:  50,
		churnFor:   20 * time.Second,
		failEvery:  10,
		idleFor:    3 * time.Second,
		fairBig:    10000,
		fairSmall:  10,
		heapSizes:  []int{10000, 100000},
		replicas:   []int{1, 2, 4},
		kills:      []string{killMember, killLeader},
		shardLease: 4 * time.Second,
		tuned:      true,
		fresh:      true,
		rows:       map[string]bool{"converge": true, "fail": true, "fair": true, "heap": true, "shard": true},
	}
}

func (c *config) bind(fs *flag.FlagSet) {
	fs.Func("n", "comma-separated numbers of objects of the convergence runs (default 2000,5000)", func(s string) error {
		v, err := ints(s)
		c.sizes = v
		return err
	})
	fs.IntVar(&c.rounds, "rounds", c.rounds, "rounds of every arm")
	fs.IntVar(&c.workers, "workers", c.workers, "workers of each controller")
	fs.Float64Var(&c.churnRate, "churn-rate", c.churnRate, "spec changes per second of the latency row")
	fs.DurationVar(&c.churnFor, "churn-for", c.churnFor, "how long the latency row changes specs")
	fs.IntVar(&c.failEvery, "fail-every", c.failEvery, "every n-th object fails in the failing runs")
	fs.DurationVar(&c.idleFor, "idle-for", c.idleFor, "how long writes are counted when nothing changes")
	fs.IntVar(&c.fairBig, "fair-big", c.fairBig, "objects of the busy namespace of the fairness row")
	fs.IntVar(&c.fairSmall, "fair-small", c.fairSmall, "objects of the small namespace of the fairness row")
	fs.BoolVar(&c.fresh, "fresh", c.fresh, "start every convergence run on a new control plane, so that no run pays for the objects and history of the runs before it")
	fs.BoolVar(&c.tuned, "tuned", c.tuned, "run bosun with tuning on (operator.Flags.Tuning) too, as the arms bosun-tuned and cache-bosun-tuned")
	fs.Func("rows", "comma-separated groups of rows to measure: converge, fail, fair, heap, shard (default all)", func(s string) error {
		c.rows = map[string]bool{}
		for f := range strings.SplitSeq(s, ",") {
			switch f = strings.TrimSpace(f); f {
			case "converge", "fail", "fair", "heap", "shard":
				c.rows[f] = true
			default:
				return fmt.Errorf("unknown group of rows %q", f)
			}
		}
		return nil
	})
	fs.Func("replicas", "comma-separated numbers of replicas of the sharded runs (default 1,2,4)", func(s string) error {
		v, err := ints(s)
		c.replicas = v
		return err
	})
	fs.Func("kill", "comma-separated replicas the sharded runs kill, a run each: member, leader (default both)", func(s string) error {
		c.kills = nil
		for f := range strings.SplitSeq(s, ",") {
			switch f = strings.TrimSpace(f); f {
			case killMember, killLeader:
				c.kills = append(c.kills, f)
			default:
				return fmt.Errorf("unknown replica to kill %q", f)
			}
		}
		return nil
	})
	fs.DurationVar(&c.shardLease, "shard-lease", c.shardLease, "Lease duration of the sharded runs (renewed every quarter of it)")
	fs.BoolVar(&c.shardStandby, "shard-standby", c.shardStandby, "give every object of the sharded runs a standby that takes it over when its replica's Lease is closed (shard.Options.Standby)")
	fs.BoolVar(&c.shardIdle, "shard-idle", c.shardIdle, "kill the replica of the sharded runs once every object is Ready, with no change going in")
	fs.Func("heap", "comma-separated cache sizes of the heap row (default 10000,100000)", func(s string) error {
		v, err := ints(s)
		c.heapSizes = v
		return err
	})
}

// bosunArms are the arms of bosun's engine the convergence, failing and
// fairness rows run: on upstream plumbing, and tuned when c.tuned.
func (c *config) bosunArms() []string {
	if c.tuned {
		return []string{armBosun, armBosunTuned}
	}
	return []string{armBosun}
}

func ints(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// scheme holds the built-in kinds and Widget.
func scheme() *runtime.Scheme {
	s := controlplane.NewScheme()
	if err := testapi.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// objectName is the name of the i-th object of a namespace.
func objectName(i int) string { return fmt.Sprintf("w%06d", i) }

// run starts a control plane and measures everything cfg asks for,
// writing the report to out.
func run(ctx context.Context, cfg config, out io.Writer) (report, error) {
	cfg.exe = cmp.Or(cfg.exe, os.Args[0])
	if exe, err := os.Executable(); err == nil && cfg.exe == os.Args[0] {
		cfg.exe = exe
	}
	dir, err := os.MkdirTemp("", "bosun-bench-")
	if err != nil {
		return report{}, err
	}
	defer os.RemoveAll(dir)
	b := &bench{cfg: cfg, kubeconfig: dir + "/kubeconfig", out: out}
	defer b.stopControlPlane()
	if err := b.startControlPlane(ctx); err != nil {
		return report{}, err
	}
	machine(out, cfg)
	return b.all(ctx)
}

// startControlPlane stops the bench's control plane, if one runs, and
// starts a new one, with an empty etcd.
func (b *bench) startControlPlane(ctx context.Context) error {
	b.stopControlPlane()
	opts, err := testapi.ControlPlaneOptions()
	if err != nil {
		return err
	}
	opts.Progress = os.Stderr
	cp, err := controlplane.Start(ctx, opts)
	if err != nil {
		return err
	}
	b.cp, b.cl = cp, cp.Client
	if err := cp.WriteKubeconfig(b.kubeconfig); err != nil {
		return err
	}
	b.servers = procstat.ServerPIDs()
	return nil
}

// stopControlPlane stops the bench's control plane, if one runs.
func (b *bench) stopControlPlane() {
	if b.cp == nil {
		return
	}
	if err := b.cp.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: stopping the control plane: %v\n", err)
	}
	b.cp = nil
}
