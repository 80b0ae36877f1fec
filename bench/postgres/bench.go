package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bench/internal/extcalls"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/examples/postgres"
	pgv1 "github.com/bosunkit/bosun/examples/postgres/api/v1alpha1"
	"github.com/bosunkit/bosun/examples/postgres/pgserver"
	"github.com/bosunkit/bosun/managed"
	"github.com/bosunkit/bosun/tuning"
)

// report is what a run measured: one result per arm.
type report struct {
	arms []result
}

// result is what one arm measured.
type result struct {
	name   string
	limits managed.Limits
	n      int
	// converge is the time from the first create to every Role Ready.
	converge time.Duration
	// convergeCalls are the external calls made until then, by operation.
	convergeCalls map[string]float64
	// window is how long the steady state was measured; steadyCalls the
	// calls made in it, by operation.
	window      time.Duration
	steadyCalls map[string]float64
	// sessions and transactions are the server's new sessions and
	// committed transactions in the window (the bench's own left out).
	sessions, transactions float64
	// busiest is the most calls completed in one second (sampled every
	// 100 ms); connections the most connections the controller held at
	// once, as the server saw them.
	busiest     float64
	connections int
	// waited is the time calls spent waiting for the limit, in all.
	waited float64
}

// run starts a control plane and a PostgreSQL server and measures both
// arms, writing the report to out.
func run(ctx context.Context, cfg config, out io.Writer) (report, error) {
	opts, err := controlplane.OptionsFor(postgres.AddToScheme, postgres.CRDs)()
	if err != nil {
		return report{}, err
	}
	opts.Progress = os.Stderr
	cp, err := controlplane.Start(ctx, opts)
	if err != nil {
		return report{}, err
	}
	defer cp.Stop() //nolint:errcheck // the figures are out by then
	srv, err := pgserver.Start(ctx, pgserver.Options{Output: io.Discard, Settings: map[string]string{"max_connections": "200"}})
	if err != nil {
		return report{}, fmt.Errorf("starting postgresql: %w", err)
	}
	defer srv.Stop() //nolint:errcheck // the figures are out by then
	fmt.Fprintf(out, "postgresql %s, kube-apiserver from %s\n", srv.Version, cp.Config.Host)
	b := &bench{cfg: cfg, cp: cp, srv: srv, out: out}
	var rep report
	for _, arm := range []struct {
		name   string
		limits managed.Limits
	}{
		{"no limit", managed.Limits{}},
		{"limited", managed.Limits{Rate: cfg.rate, Concurrency: cfg.concurrency}},
	} {
		r, err := b.arm(ctx, arm.name, arm.limits)
		if err != nil {
			return rep, fmt.Errorf("%s: %w", arm.name, err)
		}
		fmt.Fprintf(out, "%s: %d Roles Ready in %s, %.0f calls %v; steady: %.0f calls in %s %v, %.0f sessions, %.0f transactions; busiest second %.0f calls, %d connections at most, %.1fs waited\n",
			r.name, r.n, r.converge.Round(time.Millisecond), extcalls.Total(r.convergeCalls), r.convergeCalls, extcalls.Total(r.steadyCalls), r.window.Round(time.Millisecond),
			r.steadyCalls, r.sessions, r.transactions, r.busiest, r.connections, r.waited)
		rep.arms = append(rep.arms, r)
	}
	summary(out, cfg, rep)
	return rep, nil
}

// bench holds what the arms share.
type bench struct {
	cfg config
	cp  *controlplane.ControlPlane
	srv *pgserver.Server
	out io.Writer
}

// arm runs the Role controller with limits over cfg.n new Roles in a
// namespace of its own, until they are Ready and for the steady-state
// window after.
func (b *bench) arm(ctx context.Context, name string, limits managed.Limits) (result, error) {
	r := result{name: name, limits: limits, n: b.cfg.n}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bench-"}}
	if err := b.cp.Client.Create(ctx, ns); err != nil {
		return r, err
	}
	app := "bosun-bench-" + ns.Name
	reg := prometheus.NewRegistry()
	mgr, err := b.manager(ns.Name, app, limits, reg)
	if err != nil {
		return r, err
	}
	mctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "the manager stopped with:", err)
		}
	}()
	if !mgr.GetCache().WaitForCacheSync(mctx) {
		return r, errors.New("the manager's cache did not sync")
	}

	obs, err := b.observe(ctx, app, reg)
	if err != nil {
		return r, err
	}
	defer obs.stop()

	start := time.Now()
	if err := extcalls.Parallel(ctx, b.cfg.n, func(i int) error {
		name := fmt.Sprintf("role-%05d", i)
		return b.cp.Client.Create(ctx, &pgv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name},
			Spec:       pgv1.RoleSpec{Login: true, ConnectionLimit: ptr.To(int32(5)), ConnectionSecretName: name + "-conn"},
		})
	}); err != nil {
		return r, err
	}
	if err := b.waitReady(ctx, ns.Name, done); err != nil {
		return r, err
	}
	r.converge = time.Since(start)
	if r.convergeCalls, err = extcalls.ByOp(reg); err != nil {
		return r, err
	}

	// The steady state: every Role Ready, polled.
	sessions0, xacts0, err := obs.serverCounts(ctx)
	if err != nil {
		return r, err
	}
	windowStart := time.Now()
	select {
	case <-ctx.Done():
		return r, ctx.Err()
	case <-time.After(time.Duration(b.cfg.polls) * b.cfg.poll):
	}
	after, err := extcalls.ByOp(reg)
	if err != nil {
		return r, err
	}
	r.window = time.Since(windowStart)
	sessions1, xacts1, err := obs.serverCounts(ctx)
	if err != nil {
		return r, err
	}
	r.steadyCalls = map[string]float64{}
	for op, v := range after {
		if d := v - r.convergeCalls[op]; d > 0 {
			r.steadyCalls[op] = d
		}
	}
	r.sessions = sessions1 - sessions0
	// The bench's own samples are transactions too.
	r.transactions = xacts1 - xacts0 - float64(obs.queriesBetween(windowStart))
	obs.stop()
	r.busiest, r.connections = obs.peaks()
	r.waited, err = waitedSeconds(reg)
	return r, err
}

// manager makes the manager of an arm: the Role controller over ns, its
// connections named app, its step's metrics in reg.
func (b *bench) manager(ns, app string, limits managed.Limits, reg *prometheus.Registry) (ctrl.Manager, error) {
	opts := ctrl.Options{
		Scheme:                 b.cp.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Controller:             crconfig.Controller{SkipNameValidation: ptr.To(true)},
	}
	tuning.LeanCache(&opts.Cache)
	mgr, err := ctrl.NewManager(b.cp.Config, opts)
	if err != nil {
		return nil, err
	}
	dsn, err := withApplication(b.srv.DSN("postgres"), app)
	if err != nil {
		return nil, err
	}
	r := postgres.NewRoleReconciler(postgres.Options{DSN: dsn, Managed: []managed.Option{
		managed.WithTiming(managed.Timing{Poll: b.cfg.poll, MinPoll: b.cfg.poll}),
		managed.WithLimiter(managed.NewLimiter(limits)),
	}})
	r.Options.Metrics = reg
	err = bosun.ControllerManagedBy[*pgv1.Role](mgr).WithOptions(controller.Options{MaxConcurrentReconciles: b.cfg.workers}).Complete(r)
	return mgr, err
}

// withApplication sets the application_name of the connections of dsn, a
// URL, by which the server's statistics tell them apart.
func withApplication(dsn, app string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// waitReady waits until every Role of ns is Ready for its generation, or
// the manager ends.
func (b *bench) waitReady(ctx context.Context, ns string, done <-chan error) error {
	deadline := time.Now().Add(20 * time.Minute)
	for {
		var list pgv1.RoleList
		if err := b.cp.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		ready := 0
		for _, role := range list.Items {
			if c := conditions.Find(role.Status.Conditions, conditions.TypeReady); c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == role.Generation {
				ready++
			}
		}
		if ready == b.cfg.n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d Roles Ready after twenty minutes", ready, b.cfg.n)
		}
		select {
		case err := <-done:
			return fmt.Errorf("the manager stopped: %w", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// waitedSeconds returns the seconds calls waited for their limit, in reg.
func waitedSeconds(reg *prometheus.Registry) (float64, error) {
	families, err := reg.Gather()
	if err != nil {
		return 0, err
	}
	var s float64
	for _, f := range families {
		if f.GetName() == "bosun_managed_call_limit_wait_seconds" {
			for _, m := range f.GetMetric() {
				s += m.GetHistogram().GetSampleSum()
			}
		}
	}
	return s, nil
}

// observer samples, while an arm runs, the calls completed every 100 ms
// and the connections of the arm's controller the server holds.
type observer struct {
	conn *pgx.Conn
	mu   sync.Mutex // the connection
	// queries are the bench's own statements on the server, with when
	// each ran.
	queries []time.Time
	stopped atomic.Bool
	wg      sync.WaitGroup

	calls       []float64 // completed calls, every 100 ms
	connections int       // the most at once
}

// observe starts sampling for the controller whose connections are named
// app and whose metrics are in reg.
func (b *bench) observe(ctx context.Context, app string, reg *prometheus.Registry) (*observer, error) {
	conn, err := pgx.Connect(ctx, b.srv.DSN("postgres"))
	if err != nil {
		return nil, err
	}
	o := &observer{conn: conn}
	o.wg.Go(func() {
		for !o.stopped.Load() {
			if c, err := extcalls.ByOp(reg); err == nil {
				o.mu.Lock()
				o.calls = append(o.calls, extcalls.Total(c))
				o.mu.Unlock()
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	o.wg.Go(func() {
		for !o.stopped.Load() {
			var n int
			o.mu.Lock()
			err := o.conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n)
			o.queries = append(o.queries, time.Now())
			if err == nil {
				o.connections = max(o.connections, n)
			}
			o.mu.Unlock()
			time.Sleep(20 * time.Millisecond)
		}
	})
	return o, nil
}

// serverCounts returns the sessions and committed transactions of every
// database of the server so far.
func (o *observer) serverCounts(ctx context.Context) (sessions, xacts float64, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	// Statistics reach the view once flushed; ask for a fresh snapshot.
	err = o.conn.QueryRow(ctx, `SELECT coalesce(sum(sessions), 0)::float8, coalesce(sum(xact_commit), 0)::float8 FROM pg_stat_database`).Scan(&sessions, &xacts)
	o.queries = append(o.queries, time.Now())
	return sessions, xacts, err
}

// queriesBetween counts the bench's own statements since t.
func (o *observer) queriesBetween(t time.Time) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, q := range o.queries {
		if !q.Before(t) {
			n++
		}
	}
	return n
}

// stop ends the sampling; it may be called more than once.
func (o *observer) stop() {
	if o.stopped.Swap(true) {
		return
	}
	o.wg.Wait()
	_ = o.conn.Close(context.Background())
}

// peaks returns the most calls completed within one second (ten samples)
// and the most connections held at once.
func (o *observer) peaks() (busiest float64, connections int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i := range o.calls {
		k := min(i+10, len(o.calls)-1)
		busiest = max(busiest, o.calls[k]-o.calls[i])
	}
	return busiest, o.connections
}

// summary prints the table of docs/BENCHMARKS.md.
func summary(w io.Writer, cfg config, rep report) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| figure | "+strings.Join(names(rep), " | ")+" |")
	fmt.Fprintln(w, "| --- |"+strings.Repeat(" ---: |", len(rep.arms)))
	row := func(label string, f func(r result) string) {
		cells := make([]string, len(rep.arms))
		for i, r := range rep.arms {
			cells[i] = f(r)
		}
		fmt.Fprintf(w, "| %s | %s |\n", label, strings.Join(cells, " | "))
	}
	row("call limit", func(r result) string {
		if r.limits == (managed.Limits{}) {
			return "none"
		}
		return fmt.Sprintf("%.0f calls/s, %d connections", r.limits.Rate, r.limits.Concurrency)
	})
	row(fmt.Sprintf("time to %d Roles Ready (s)", cfg.n), func(r result) string { return fmt.Sprintf("%.1f", r.converge.Seconds()) })
	row("external calls per Role to converge", func(r result) string {
		return fmt.Sprintf("%.2f (%s)", extcalls.Total(r.convergeCalls)/float64(r.n), extcalls.PerOp(r.convergeCalls, float64(r.n), 2))
	})
	row("external calls per Role per poll, converged", func(r result) string {
		polls := float64(r.n) * r.window.Seconds() / cfg.poll.Seconds()
		return fmt.Sprintf("%.2f (%s)", extcalls.Total(r.steadyCalls)/polls, extcalls.PerOp(r.steadyCalls, polls, 2))
	})
	row(fmt.Sprintf("poll load: calls per second (poll every %s)", cfg.poll), func(r result) string {
		return fmt.Sprintf("%.1f", extcalls.Total(r.steadyCalls)/r.window.Seconds())
	})
	row("poll load: server sessions, transactions per second", func(r result) string {
		return fmt.Sprintf("%.1f, %.1f", r.sessions/r.window.Seconds(), r.transactions/r.window.Seconds())
	})
	row("most calls completed in one second", func(r result) string { return fmt.Sprintf("%.0f", r.busiest) })
	row("most connections held at once", func(r result) string { return fmt.Sprintf("%d", r.connections) })
	row("time calls waited for the limit (s, all calls)", func(r result) string { return fmt.Sprintf("%.1f", r.waited) })
}

func names(rep report) []string {
	out := make([]string, len(rep.arms))
	for i, r := range rep.arms {
		out[i] = r.name
	}
	return out
}
