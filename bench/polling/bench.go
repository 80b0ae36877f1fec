package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
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

// arm is one way of running the controller.
type arm struct {
	name string
	// spread spreads the first observations after the start; batch
	// observes in batches; notify LISTENs for changed roles, and the
	// bench announces its changes.
	spread, batch, notify bool
}

var arms = []arm{
	{name: "one by one"},
	{name: "spread", spread: true},
	{name: "spread + batch", spread: true, batch: true},
	{name: "spread + batch + notify", spread: true, batch: true, notify: true},
}

// result is what one arm measured.
type result struct {
	arm arm
	// restart are the calls of the first poll interval after the start,
	// by operation; tenths the calls in each tenth of it; busiest the
	// most calls completed in one second of it.
	restart map[string]float64
	tenths  [10]float64
	busiest float64
	// idle are the calls of the idle window, by operation, window its
	// length, idleBusiest the most calls completed in one second of it.
	idle        map[string]float64
	window      time.Duration
	idleBusiest float64
	// repairs are the times from a change of a role to the operator's
	// repair of it, for the roles repaired; unrepaired counts the others.
	repairs    []time.Duration
	unrepaired int
}

// bench holds what the arms share.
type bench struct {
	cfg config
	cp  *controlplane.ControlPlane
	srv *pgserver.Server
	ns  string
	// names are the Roles' names, roles their roles'.
	names, roles []string
}

// run starts a control plane and a PostgreSQL server, converges the Roles
// and measures every arm over them, writing the report to out.
func run(ctx context.Context, cfg config, out io.Writer) ([]result, error) {
	opts, err := controlplane.OptionsFor(postgres.AddToScheme, postgres.CRDs)()
	if err != nil {
		return nil, err
	}
	opts.Progress = os.Stderr
	cp, err := controlplane.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer cp.Stop() //nolint:errcheck // the figures are out by then
	srv, err := pgserver.Start(ctx, pgserver.Options{Output: io.Discard, Settings: map[string]string{"max_connections": "200"}})
	if err != nil {
		return nil, fmt.Errorf("starting postgresql: %w", err)
	}
	defer srv.Stop() //nolint:errcheck // the figures are out by then
	fmt.Fprintf(out, "postgresql %s, kube-apiserver from %s\n", srv.Version, cp.Config.Host)
	b := &bench{cfg: cfg, cp: cp, srv: srv}
	if err := b.converge(ctx); err != nil {
		return nil, err
	}
	var results []result
	for _, a := range arms {
		r, err := b.measure(ctx, a)
		if err != nil {
			return results, fmt.Errorf("%s: %w", a.name, err)
		}
		fmt.Fprintf(out, "%s: restart %.0f calls %v, busiest second %.0f; idle %.0f calls in %s %v, busiest second %.0f; %d roles repaired in %v, %d not\n",
			a.name, extcalls.Total(r.restart), r.restart, r.busiest, extcalls.Total(r.idle), r.window.Round(time.Millisecond), r.idle, r.idleBusiest,
			len(r.repairs), median(r.repairs), r.unrepaired)
		results = append(results, r)
	}
	summary(out, cfg, results)
	return results, nil
}

// converge creates cfg.n Roles in a namespace of their own and runs the
// controller until every one is Ready.
func (b *bench) converge(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "polling-"}}
	if err := b.cp.Client.Create(ctx, ns); err != nil {
		return err
	}
	b.ns = ns.Name
	stop, _, err := b.start(ctx, arms[2], prometheus.NewRegistry())
	if err != nil {
		return err
	}
	defer stop()
	b.names = make([]string, b.cfg.n)
	b.roles = make([]string, b.cfg.n)
	start := time.Now()
	err = extcalls.Parallel(ctx, b.cfg.n, func(i int) error {
		name := fmt.Sprintf("role-%05d", i)
		b.names[i], b.roles[i] = name, postgres.SQLName(b.ns, name)
		return b.cp.Client.Create(ctx, &pgv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: b.ns, Name: name},
			Spec:       pgv1.RoleSpec{Login: true, ConnectionLimit: ptr.To(int32(5)), ConnectionSecretName: name + "-conn"},
		})
	})
	if err != nil {
		return err
	}
	if err := b.waitReady(ctx); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%d Roles Ready in %s\n", b.cfg.n, time.Since(start).Round(time.Second))
	return nil
}

// start starts a manager running the Role controller as a says, its
// step's metrics in reg; stop stops it and waits for it, done says when
// it stopped by itself.
func (b *bench) start(ctx context.Context, a arm, reg *prometheus.Registry) (stop func(), done <-chan error, err error) {
	opts := ctrl.Options{
		Scheme:                 b.cp.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{b.ns: {}}},
		Controller:             crconfig.Controller{SkipNameValidation: ptr.To(true)},
	}
	tuning.LeanCache(&opts.Cache)
	mgr, err := ctrl.NewManager(b.cp.Config, opts)
	if err != nil {
		return nil, nil, err
	}
	timing := managed.Timing{Poll: b.cfg.poll, MinPoll: b.cfg.poll}
	if !a.spread {
		timing.Spread = -1
	}
	dsn := b.srv.DSN("postgres")
	r := postgres.NewRoleReconciler(postgres.Options{DSN: dsn, BatchObserve: a.batch, Managed: []managed.Option{managed.WithTiming(timing)}})
	r.Options.Metrics = reg
	err = bosun.ControllerManagedBy[*pgv1.Role](mgr).WithOptions(controller.Options{MaxConcurrentReconciles: b.cfg.workers}).Complete(r)
	if err == nil && a.notify {
		err = postgres.ListenRoles(mgr, r, dsn)
	}
	if err != nil {
		return nil, nil, err
	}
	mctx, cancel := context.WithCancel(ctx)
	ch := make(chan error, 1)
	go func() { ch <- mgr.Start(mctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-ch; err != nil {
				fmt.Fprintln(os.Stderr, "the manager stopped with:", err)
			}
		})
	}
	if !mgr.GetCache().WaitForCacheSync(mctx) {
		stop()
		return nil, nil, errors.New("the manager's cache did not sync")
	}
	return stop, ch, nil
}

// measure starts the controller as a says over the converged Roles and
// measures the restart, the idle window and the repair of changed roles.
func (b *bench) measure(ctx context.Context, a arm) (result, error) {
	r := result{arm: a}
	reg := prometheus.NewRegistry()
	s := sample(reg)
	defer s.stop()
	stop, done, err := b.start(ctx, a, reg)
	if err != nil {
		return r, err
	}
	defer stop()
	p := b.cfg.poll
	if err := wait(ctx, done, time.Until(s.t0.Add(2*p))); err != nil {
		return r, err
	}
	r.restart = s.callsBetween(0, p)
	r.busiest = s.busiest(0, p)
	for i := range r.tenths {
		r.tenths[i] = extcalls.Total(s.callsBetween(time.Duration(i)*p/10, time.Duration(i+1)*p/10))
	}
	idleEnd := 2*p + time.Duration(b.cfg.idle)*p
	if err := wait(ctx, done, time.Until(s.t0.Add(idleEnd))); err != nil {
		return r, err
	}
	r.idle, r.window = s.callsBetween(2*p, idleEnd), idleEnd-2*p
	r.idleBusiest = s.busiest(2*p, idleEnd)
	r.repairs, r.unrepaired, err = b.drift(ctx, a.notify)
	return r, err
}

// wait waits for d, unless the manager stops or ctx ends first.
func wait(ctx context.Context, done <-chan error, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case err := <-done:
		return fmt.Errorf("the manager stopped: %w", err)
	case <-time.After(max(d, 0)):
		return nil
	}
}

// waitReady waits until every Role of the bench is Ready for its
// generation.
func (b *bench) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(20 * time.Minute)
	for {
		var list pgv1.RoleList
		if err := b.cp.Client.List(ctx, &list, client.InNamespace(b.ns)); err != nil {
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
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// drift changes the connection limit of cfg.drift roles, spread over the
// list, behind the operator's back, each in a transaction of its own that
// also announces it on postgres.RoleChannel with notify, and returns how
// long the operator took to set each back, within three poll intervals.
func (b *bench) drift(ctx context.Context, notify bool) ([]time.Duration, int, error) {
	conn, err := pgx.Connect(ctx, b.srv.DSN("postgres"))
	if err != nil {
		return nil, 0, err
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	var changed []string
	at := map[string]time.Time{}
	for i := range min(b.cfg.drift, b.cfg.n) {
		role := b.roles[i*b.cfg.n/min(b.cfg.drift, b.cfg.n)]
		sql := "BEGIN; ALTER ROLE " + pgx.Identifier{role}.Sanitize() + " CONNECTION LIMIT 9; "
		if notify {
			sql += "SELECT pg_notify('" + postgres.RoleChannel + "', '" + role + "'); "
		}
		if _, err := conn.Exec(ctx, sql+"COMMIT"); err != nil {
			return nil, 0, fmt.Errorf("changing role %s: %w", role, err)
		}
		changed, at[role] = append(changed, role), time.Now()
	}
	var repairs []time.Duration
	deadline := time.Now().Add(3 * b.cfg.poll)
	for len(changed) > 0 && time.Now().Before(deadline) {
		rows, err := conn.Query(ctx, "SELECT rolname FROM pg_roles WHERE rolname = ANY($1) AND rolconnlimit = 5", changed)
		if err != nil {
			return nil, 0, err
		}
		fixed, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, 0, err
		}
		now := time.Now()
		for _, role := range fixed {
			repairs = append(repairs, now.Sub(at[role]))
		}
		changed = slices.DeleteFunc(changed, func(r string) bool { return slices.Contains(fixed, r) })
		time.Sleep(50 * time.Millisecond)
	}
	return repairs, len(changed), nil
}

// sampler records the calls counted in a registry about every 100 ms,
// with when it read them.
type sampler struct {
	reg     *prometheus.Registry
	t0      time.Time
	mu      sync.Mutex
	samples []callSample
	stopped atomic.Bool
	wg      sync.WaitGroup
}

// callSample is the calls counted at a moment, by operation.
type callSample struct {
	at    time.Time
	calls map[string]float64
}

// sample starts sampling reg.
func sample(reg *prometheus.Registry) *sampler {
	s := &sampler{reg: reg, t0: time.Now()}
	s.wg.Go(func() {
		for !s.stopped.Load() {
			c, err := extcalls.ByOp(reg)
			if err != nil {
				c = nil
			}
			s.mu.Lock()
			s.samples = append(s.samples, callSample{at: time.Now(), calls: c})
			s.mu.Unlock()
			time.Sleep(100 * time.Millisecond)
		}
	})
	return s
}

// stop ends the sampling; it may be called more than once.
func (s *sampler) stop() {
	s.stopped.Store(true)
	s.wg.Wait()
}

// at returns the calls of the last sample taken by d after t0.
func (s *sampler) at(d time.Duration) map[string]float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.t0.Add(d)
	i := sort.Search(len(s.samples), func(i int) bool { return s.samples[i].at.After(t) })
	if i == 0 {
		return nil
	}
	return s.samples[i-1].calls
}

// callsBetween returns the calls completed between from and to after t0,
// by operation.
func (s *sampler) callsBetween(from, to time.Duration) map[string]float64 {
	a, b := s.at(from), s.at(to)
	out := map[string]float64{}
	for op, v := range b {
		if d := v - a[op]; d > 0 {
			out[op] = d
		}
	}
	return out
}

// busiest returns the most calls completed within one second between from
// and to after t0.
func (s *sampler) busiest(from, to time.Duration) float64 {
	var most float64
	for d := from; d+time.Second <= to; d += 100 * time.Millisecond {
		most = max(most, extcalls.Total(s.callsBetween(d, d+time.Second)))
	}
	return most
}

// median returns the median of ds, zero for none.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ds))
	return s[len(s)/2]
}

// summary prints the table of docs/BENCHMARKS.md.
func summary(w io.Writer, cfg config, rs []result) {
	fmt.Fprintln(w)
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.arm.name
	}
	fmt.Fprintln(w, "| figure | "+strings.Join(names, " | ")+" |")
	fmt.Fprintln(w, "| --- |"+strings.Repeat(" ---: |", len(rs)))
	row := func(label string, f func(r result) string) {
		cells := make([]string, len(rs))
		for i, r := range rs {
			cells[i] = f(r)
		}
		fmt.Fprintf(w, "| %s | %s |\n", label, strings.Join(cells, " | "))
	}
	n := float64(cfg.n)
	row("restart: calls in the first poll interval", func(r result) string {
		return fmt.Sprintf("%.0f (%s)", extcalls.Total(r.restart), extcalls.PerOp(r.restart, 1, 0))
	})
	row("restart: most calls in one second", func(r result) string { return fmt.Sprintf("%.0f", r.busiest) })
	row("restart: calls in each tenth of the first poll interval", func(r result) string {
		parts := make([]string, len(r.tenths))
		for i, v := range r.tenths {
			parts[i] = fmt.Sprintf("%.0f", v)
		}
		return strings.Join(parts, " ")
	})
	row("idle: most calls in one second", func(r result) string { return fmt.Sprintf("%.0f", r.idleBusiest) })
	row(fmt.Sprintf("idle: calls per Role per poll (every %s)", cfg.poll), func(r result) string {
		polls := n * r.window.Seconds() / cfg.poll.Seconds()
		return fmt.Sprintf("%.3f (%s)", extcalls.Total(r.idle)/polls, extcalls.PerOp(r.idle, polls, 3))
	})
	row("idle: calls per Role per hour, at a one-minute poll", func(r result) string {
		polls := n * r.window.Seconds() / cfg.poll.Seconds()
		return fmt.Sprintf("%.1f", extcalls.Total(r.idle)/polls*60)
	})
	row(fmt.Sprintf("drift: time to repair a changed role, median and most (s; %d roles)", cfg.drift), func(r result) string {
		s := fmt.Sprintf("%.1f, %.1f", median(r.repairs).Seconds(), slices.Max(append([]time.Duration{0}, r.repairs...)).Seconds())
		if r.unrepaired > 0 {
			s += fmt.Sprintf(" (%d not within %s)", r.unrepaired, 3*cfg.poll)
		}
		return s
	})
}
