package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/examples/postgres/pgserver"
	"github.com/bosunkit/bosun/managed"
)

// shared is the control plane, with the postgres CRDs installed, that the
// envtest tests of this package share. It runs the garbage collector, as a
// cluster does, so that a connection Secret whose Role is gone is
// collected even when the operator did not delete it.
var shared = bosuntest.Shared{Options: func() (controlplane.Options, error) {
	opts, err := controlplane.OptionsFor(AddToScheme, CRDs)()
	opts.ControllerManager = true
	return opts, err
}}

// pg is the PostgreSQL server the tests share, started on first use with
// statement logging and password authentication for every role but the
// superuser, and stopped by TestMain.
var pg struct {
	once sync.Once
	srv  *pgserver.Server
	err  error
}

// server returns the shared PostgreSQL server, starting it on first use.
// A server that cannot start fails the test.
func server(t *testing.T) *pgserver.Server {
	t.Helper()
	pg.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		pg.srv, pg.err = pgserver.Start(ctx, pgserver.Options{LogStatements: true, PasswordAuth: true, Output: os.Stderr})
	})
	if pg.err != nil {
		t.Fatalf("starting postgresql: %v", pg.err)
	}
	return pg.srv
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pg.srv != nil {
		if err := pg.srv.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping postgresql: %v\n", err)
			code = max(code, 1)
		}
	}
	if err := shared.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the control plane: %v\n", err)
		code = max(code, 1)
	}
	os.Exit(code)
}

// env is what a test works with: the control plane, the server, a
// namespace of its own, and the controllers' log.
type env struct {
	c    client.Client
	srv  *pgserver.Server
	ns   string
	logs *bosuntest.LogRecorder
}

// start runs both controllers against the shared server, polling every
// second so that drift is seen quickly. wrap, when not nil, wraps the
// client the controllers write through.
func start(t *testing.T, wrap func(client.Client) client.Client) env {
	t.Helper()
	return run(t, wrap, func(mgr ctrl.Manager, srv *pgserver.Server) error {
		return SetupWithManager(mgr, Options{
			DSN:          srv.DSN("postgres"),
			WaitInterval: time.Second,
			Managed: []managed.Option{
				managed.WithTiming(managed.Timing{Poll: time.Second, MinPoll: time.Second, Short: time.Second}),
			},
		})
	})
}

// run starts a manager whose controllers setup registers against the shared
// server, recording their log; wrap, when not nil, wraps the client they
// write through.
func run(t *testing.T, wrap func(client.Client) client.Client, setup func(ctrl.Manager, *pgserver.Server) error) env {
	t.Helper()
	srv := server(t)
	cp := shared.ControlPlane(t)
	logs := &bosuntest.LogRecorder{}
	bosuntest.RunManager(t, cp, func(mgr ctrl.Manager) error {
		mgr = bosuntest.ManagerWithLogger(mgr, logs.Wrap(mgr.GetLogger()))
		if wrap != nil {
			mgr = bosuntest.ManagerWithClient(mgr, wrap(mgr.GetClient()))
		}
		return setup(mgr, srv)
	})
	return env{c: cp.Client, srv: srv, ns: bosuntest.Namespace(t, cp.Client), logs: logs}
}

// query runs sql on the server and scans its single row into dest; it
// reports pgx.ErrNoRows as is.
func query(t *testing.T, srv *pgserver.Server, sql string, args []any, dest ...any) error {
	t.Helper()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, srv.DSN("postgres"))
	if err != nil {
		t.Fatalf("connecting to postgresql: %v", err)
	}
	defer func() { _ = conn.Close(ctx) }()
	return conn.QueryRow(ctx, sql, args...).Scan(dest...)
}

// exec runs sql on the server.
func exec(t *testing.T, srv *pgserver.Server, sql string) {
	t.Helper()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, srv.DSN("postgres"))
	if err != nil {
		t.Fatalf("connecting to postgresql: %v", err)
	}
	defer func() { _ = conn.Close(ctx) }()
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// condition describes a condition by the fields the tests check.
type condition struct {
	Type   string
	Status metav1.ConditionStatus
	Reason conditions.Reason
}

// hasConditions checks that conds hold the conditions want, each for
// generation gen.
func hasConditions(conds []metav1.Condition, gen int64, want ...condition) error {
	for _, w := range want {
		c := conditions.Find(conds, w.Type)
		switch {
		case c == nil:
			return errors.New("no " + w.Type + " condition")
		case c.Status != w.Status || c.Reason != string(w.Reason):
			return fmt.Errorf("%s is %s/%s (%q), want %s/%s", w.Type, c.Status, c.Reason, c.Message, w.Status, w.Reason)
		case c.ObservedGeneration != gen:
			return fmt.Errorf("%s describes generation %d, object is at %d", w.Type, c.ObservedGeneration, gen)
		}
	}
	return nil
}

// waitFor waits until the object at key, read into obj, has the
// conditions want.
func waitFor(t *testing.T, c client.Client, key client.ObjectKey, obj conditions.Object, want ...condition) {
	t.Helper()
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := c.Get(ctx, key, obj); err != nil {
			return err
		}
		return hasConditions(obj.GetConditions(), obj.GetGeneration(), want...)
	}, bosuntest.Timeout(time.Minute))
}

// waitGone waits until the object at key no longer exists.
func waitGone(t *testing.T, c client.Client, key client.ObjectKey, obj client.Object) {
	t.Helper()
	bosuntest.Eventually(t, func(ctx context.Context) error {
		err := c.Get(ctx, key, obj)
		if err == nil {
			return fmt.Errorf("still there, finalizers %v", obj.GetFinalizers())
		}
		return client.IgnoreNotFound(err)
	}, bosuntest.Timeout(time.Minute))
}

// statementsContaining returns the statements the server received that
// contain s.
func statementsContaining(t *testing.T, srv *pgserver.Server, s string) []string {
	t.Helper()
	stmts, err := srv.Statements()
	if err != nil {
		t.Fatalf("reading statements: %v", err)
	}
	var found []string
	for _, st := range stmts {
		if strings.Contains(st.Text, s) || strings.Contains(st.Parameters, s) {
			found = append(found, st.Text)
		}
	}
	return found
}

// metricValue returns, from controller-runtime's registry, the value of the
// counter name, or the sample count of the histogram name, for the managed
// step called step; zero when nothing was recorded yet.
func metricValue(t *testing.T, name, step string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatalf("gathering metrics: %v", err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() != "step" || l.GetValue() != step {
					continue
				}
				if h := m.GetHistogram(); h != nil {
					return float64(h.GetSampleCount())
				}
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// driftCorrections returns the value of "bosun_managed_drift_corrections_total" for
// the step called step.
func driftCorrections(t *testing.T, step string) float64 {
	t.Helper()
	return metricValue(t, "bosun_managed_drift_corrections_total", step)
}

// waitPolledAgain waits until each of names (as PostgreSQL knows them) is
// named by a statement the server receives after this call: every one has
// been polled at least once more, however long a busy machine makes that
// take. Tests call it before they count what a few more polls sent, rather
// than sleep for what an idle machine would need.
func waitPolledAgain(t *testing.T, e env, names ...string) {
	t.Helper()
	from := statementCount(t, e)
	bosuntest.Eventually(t, func(context.Context) error {
		stmts, err := e.srv.Statements()
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, st := range stmts[min(from, len(stmts)):] {
			for _, n := range names {
				if strings.Contains(st.Text, n) || strings.Contains(st.Parameters, n) {
					seen[n] = true
				}
			}
		}
		for _, n := range names {
			if !seen[n] {
				return fmt.Errorf("%s not polled since the wait began", n)
			}
		}
		return nil
	}, bosuntest.Timeout(2*time.Minute))
}

// passes counts the passes the controller named controller has begun for
// the object name, from the "pass triggered" lines of the log.
func (e env) passes(controller, name string) int {
	n := 0
	for _, l := range e.logs.Entries() {
		if l.Message != "pass triggered" {
			continue
		}
		c, _ := l.Value("controller")
		o, _ := l.Value("name")
		if c == controller && o == name {
			n++
		}
	}
	return n
}

// waitPasses waits until the controller has begun n more passes of the
// object name than when it was called.
func waitPasses(t *testing.T, e env, controller, name string, n int) {
	t.Helper()
	from := e.passes(controller, name)
	bosuntest.Eventually(t, func(context.Context) error {
		if got := e.passes(controller, name) - from; got < n {
			return fmt.Errorf("%s %s had %d passes since the wait began, want %d", controller, name, got, n)
		}
		return nil
	}, bosuntest.Timeout(2*time.Minute))
}
