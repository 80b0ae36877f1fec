package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	pgv1 "github.com/bosunkit/bosun/examples/postgres/api/v1alpha1"
	"github.com/bosunkit/bosun/managed"
)

// Statements of the clients, as the server logs them: a Role's own read,
// and the batch reads of roles and databases.
const (
	roleRead      = "FROM pg_catalog.pg_roles r WHERE r.rolname = $1"
	databaseRead  = "FROM pg_catalog.pg_database d WHERE d.datname = $1"
	roleBatch     = "FROM pg_catalog.pg_roles r WHERE r.rolname = ANY($1)"
	databaseBatch = "FROM pg_catalog.pg_database d WHERE d.datname = ANY($1)"
)

// runIn starts a manager with both controllers set up with opts, the shared
// server's DSN filled in, for the test t, over objects of namespace ns.
func runIn(t *testing.T, ns string, opts Options) env {
	t.Helper()
	srv := server(t)
	cp := shared.ControlPlane(t)
	logs := &bosuntest.LogRecorder{}
	opts.DSN = srv.DSN("postgres")
	bosuntest.RunManager(t, cp, func(mgr ctrl.Manager) error {
		return SetupWithManager(bosuntest.ManagerWithLogger(mgr, logs.Wrap(mgr.GetLogger())), opts)
	})
	return env{c: cp.Client, srv: srv, ns: ns, logs: logs}
}

// createRoles creates a Role with a connection limit of 2 and a
// connection Secret for each of names, waits until they are Ready, and
// returns their roles' names.
func createRoles(t *testing.T, e env, names ...string) []string {
	t.Helper()
	var sql []string
	for _, n := range names {
		r := &pgv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: n},
			Spec:       pgv1.RoleSpec{Login: true, ConnectionLimit: ptr.To[int32](2), ConnectionSecretName: n + "-conn"},
		}
		if err := e.c.Create(t.Context(), r); err != nil {
			t.Fatalf("create role %s: %v", n, err)
		}
		sql = append(sql, externalName(r))
	}
	for _, n := range names {
		waitFor(t, e.c, client.ObjectKey{Namespace: e.ns, Name: n}, &pgv1.Role{}, readyTrue, syncedTrue)
	}
	return sql
}

// countNaming returns how many statements from the from-th on hold text
// and name each of names (as a parameter or in their text).
func countNaming(t *testing.T, e env, from int, text string, names ...string) map[string]int {
	t.Helper()
	stmts, err := e.srv.Statements()
	if err != nil {
		t.Fatalf("reading statements: %v", err)
	}
	n := map[string]int{}
	for _, st := range stmts[min(from, len(stmts)):] {
		if !strings.Contains(st.Text, text) {
			continue
		}
		for _, name := range names {
			if strings.Contains(st.Parameters, name) || strings.Contains(st.Text, name) {
				n[name]++
			}
		}
	}
	return n
}

// waitNamed waits until every one of names is named by at least n
// statements holding text from the from-th on.
func waitNamed(t *testing.T, e env, from int, text string, n int, names ...string) {
	t.Helper()
	bosuntest.Eventually(t, func(context.Context) error {
		got := countNaming(t, e, from, text, names...)
		for _, name := range names {
			if got[name] < n {
				return fmt.Errorf("%s named by %d statements %q, want %d", name, got[name], text, n)
			}
		}
		return nil
	}, bosuntest.Timeout(time.Minute))
}

// TestRolesAndDatabasesAreObservedInBatches checks, against a real
// PostgreSQL, that converged Roles and Databases are polled by batch
// queries of pg_roles and pg_database, several objects per query, with no
// query of their own; and that drift a batch finds is read again on its
// own and repaired.
func TestRolesAndDatabasesAreObservedInBatches(t *testing.T) {
	cp := shared.ControlPlane(t)
	e := runIn(t, bosuntest.Namespace(t, cp.Client), Options{BatchObserve: true, WaitInterval: time.Second, Managed: []managed.Option{
		managed.WithTiming(managed.Timing{Poll: time.Second, MinPoll: time.Second, Short: time.Second, Batch: time.Second}),
	}})
	roles := createRoles(t, e, "batch-a", "batch-b", "batch-c", "batch-owner")
	var dbs []string
	for _, n := range []string{"batch-d1", "batch-d2"} {
		db := &pgv1.Database{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: n}, Spec: pgv1.DatabaseSpec{Owner: "batch-owner"}}
		if err := e.c.Create(t.Context(), db); err != nil {
			t.Fatalf("create database %s: %v", n, err)
		}
		dbs = append(dbs, externalName(db))
	}
	for _, n := range []string{"batch-d1", "batch-d2"} {
		waitFor(t, e.c, client.ObjectKey{Namespace: e.ns, Name: n}, &pgv1.Database{}, readyTrue, syncedTrue)
	}

	waitNamed(t, e, 0, roleBatch, 1, roles...)
	waitNamed(t, e, 0, databaseBatch, 1, dbs...)
	from := statementCount(t, e)
	waitNamed(t, e, from, roleBatch, 2, roles...)
	waitNamed(t, e, from, databaseBatch, 2, dbs...)
	for name, n := range countNaming(t, e, from, roleRead, roles...) {
		if n > 0 {
			t.Errorf("role %s read on its own %d times while batches polled it, want none", name, n)
		}
	}
	for name, n := range countNaming(t, e, from, databaseRead, dbs...) {
		if n > 0 {
			t.Errorf("database %s read on its own %d times while batches polled it, want none", name, n)
		}
	}
	batches, named := 0, 0
	for _, n := range countNaming(t, e, from, roleBatch, roles...) {
		named += n
	}
	stmts, err := e.srv.Statements()
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stmts[from:] {
		if strings.Contains(st.Text, roleBatch) && slices.ContainsFunc(roles, func(r string) bool { return strings.Contains(st.Parameters, r) }) {
			batches++
		}
	}
	if batches >= named {
		t.Errorf("%d batch queries named the roles %d times, want several roles per query", batches, named)
	}

	// Drift of one role: a batch finds it, the Role reads it on its own and
	// alters it back.
	drifted := roles[1]
	from = statementCount(t, e)
	exec(t, e.srv, "ALTER ROLE "+quote(drifted)+" CONNECTION LIMIT 9")
	bosuntest.Eventually(t, func(context.Context) error {
		if got := readRole(t, e, drifted); got == nil || got.Limit != 2 {
			return fmt.Errorf("role %s in postgresql = %+v, want connection limit 2", drifted, got)
		}
		return nil
	}, bosuntest.Timeout(30*time.Second))
	if n := countNaming(t, e, from, roleRead, drifted)[drifted]; n == 0 {
		t.Errorf("role %s altered back without a read of its own", drifted)
	}
}

// TestNotificationRepairsRole checks, against a real PostgreSQL, that a
// role changed and announced on RoleChannel in one transaction is
// repaired at once, with a poll an hour away, while the other Roles,
// whose first observations the restart put off for that hour, are not
// read at all.
func TestNotificationRepairsRole(t *testing.T) {
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	names := []string{"notify-a", "notify-b", "notify-c"}
	var roles []string
	t.Run("first process", func(t *testing.T) {
		roles = createRoles(t, runIn(t, ns, Options{}), names...)
	})
	e := runIn(t, ns, Options{BatchObserve: true, Listen: true, Managed: []managed.Option{managed.WithTiming(managed.Timing{Poll: time.Hour})}})
	for _, n := range names {
		bosuntest.Eventually(t, func(context.Context) error {
			if e.passes(RoleControllerName, n) == 0 {
				return fmt.Errorf("no pass of %s yet", n)
			}
			return nil
		})
	}
	from := statementCount(t, e)
	changed := roles[1]
	exec(t, e.srv, "BEGIN; ALTER ROLE "+quote(changed)+" CONNECTION LIMIT 9; SELECT pg_notify("+literal(RoleChannel)+", "+literal(changed)+"); COMMIT")
	bosuntest.Eventually(t, func(context.Context) error {
		if got := readRole(t, e, changed); got == nil || got.Limit != 2 {
			return fmt.Errorf("role %s in postgresql = %+v, want connection limit 2", changed, got)
		}
		return nil
	}, bosuntest.Timeout(30*time.Second))
	for i, r := range roles {
		if r == changed {
			continue
		}
		if n := countNaming(t, e, from, "", r)[r]; n != 0 {
			t.Errorf("Role %s: %d statements named it after the notification of another role, want none", names[i], n)
		}
	}
}
