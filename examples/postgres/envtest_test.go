package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	pgv1 "github.com/bosunkit/bosun/examples/postgres/api/v1alpha1"
	"github.com/bosunkit/bosun/managed"
)

var (
	readyTrue  = condition{conditions.TypeReady, metav1.ConditionTrue, conditions.ReasonSucceeded}
	syncedTrue = condition{"Synced", metav1.ConditionTrue, "ReconcileSuccess"}
)

// roleState is a role as pg_roles shows it.
type roleState struct {
	Login bool
	Limit int32
}

// readRole returns the role name from pg_roles, or nil when it is missing.
func readRole(t *testing.T, e env, name string) *roleState {
	t.Helper()
	var s roleState
	err := query(t, e.srv, "SELECT rolcanlogin, rolconnlimit FROM pg_roles WHERE rolname = $1", []any{name}, &s.Login, &s.Limit)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		t.Fatalf("reading role %s: %v", name, err)
	}
	return &s
}

// TestRoleLifecycle creates, updates, corrects and deletes a Role, checking
// PostgreSQL each time.
func TestRoleLifecycle(t *testing.T) {
	e := start(t, nil)
	ctx := t.Context()
	timings := []string{"bosun_managed_first_reconcile_seconds", "bosun_managed_ready_seconds", "bosun_managed_deletion_seconds"}
	before := map[string]float64{}
	for _, m := range timings {
		before[m] = metricValue(t, m, RoleStepName)
	}
	role := &pgv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "app-user"},
		Spec:       pgv1.RoleSpec{Login: true, ConnectionLimit: ptr.To[int32](3), ConnectionSecretName: "app-user-conn"},
	}
	if err := e.c.Create(ctx, role); err != nil {
		t.Fatalf("create role: %v", err)
	}
	key := client.ObjectKeyFromObject(role)
	name := externalName(role)
	waitFor(t, e.c, key, role, readyTrue, syncedTrue)
	if got := managed.ExternalName(role); got != name {
		t.Errorf("recorded external name = %q, want %q", got, name)
	}
	if got, want := readRole(t, e, name), (&roleState{Login: true, Limit: 3}); got == nil || *got != *want {
		t.Fatalf("role in postgresql = %+v, want %+v", got, want)
	}
	// The status shows the role as PostgreSQL has it.
	var oid int64
	if err := query(t, e.srv, "SELECT oid::bigint FROM pg_roles WHERE rolname = $1", []any{name}, &oid); err != nil {
		t.Fatalf("reading the role's oid: %v", err)
	}
	wantAt := &pgv1.RoleObservation{OID: oid, Login: true, ConnectionLimit: 3, Inherit: true}
	if diff := cmp.Diff(wantAt, role.Status.AtProvider); diff != "" {
		t.Errorf("status.atProvider (-want +got):\n%s", diff)
	}

	// The connection Secret holds the user, the server's address and a
	// password that matches the verifier PostgreSQL stored, which is the
	// only form of the password the server ever saw.
	var secret corev1.Secret
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "app-user-conn"}, &secret); err != nil {
		t.Fatalf("get connection secret: %v", err)
	}
	if got := string(secret.Data[SecretUsername]); got != name {
		t.Errorf("secret username = %q, want %s", got, name)
	}
	if got, want := string(secret.Data[SecretPort]), fmt.Sprint(e.srv.Port); got != want {
		t.Errorf("secret port = %q, want %q", got, want)
	}
	password := string(secret.Data[SecretPassword])
	if len(password) != 2*passwordBytes {
		t.Fatalf("secret password has %d characters, want %d", len(password), 2*passwordBytes)
	}
	var verifier string
	if err := query(t, e.srv, "SELECT rolpassword FROM pg_authid WHERE rolname = $1", []any{name}, &verifier); err != nil {
		t.Fatalf("reading the stored verifier: %v", err)
	}
	if err := checkVerifier(password, verifier); err != nil {
		t.Errorf("stored verifier does not match the published password: %v", err)
	}
	if found := statementsContaining(t, e.srv, password); len(found) != 0 {
		t.Errorf("the password reached postgresql in %d statements", len(found))
	}
	checkNoPassword(t, e, password)

	// Update: no login, no limit.
	base := role.DeepCopy()
	role.Spec.Login, role.Spec.ConnectionLimit = false, nil
	if err := e.c.Patch(ctx, role, client.MergeFrom(base)); err != nil {
		t.Fatalf("patch role: %v", err)
	}
	waitFor(t, e.c, key, role, readyTrue, syncedTrue)
	bosuntest.Eventually(t, func(context.Context) error {
		if got, want := readRole(t, e, name), (roleState{Login: false, Limit: -1}); got == nil || *got != want {
			return fmt.Errorf("role in postgresql = %+v, want %+v", got, want)
		}
		return nil
	})
	// The status keeps what the operator did to the role.
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := e.c.Get(ctx, key, role); err != nil {
			return err
		}
		var got []string
		for _, c := range role.Status.Changes {
			if c.Controller != RoleControllerName || c.ExternalName != name || c.Time.IsZero() {
				return fmt.Errorf("change %+v, want one by %s on %s with a time", c, RoleControllerName, name)
			}
			got = append(got, fmt.Sprintf("%s %s %d", c.Operation, c.Outcome, c.Generation))
		}
		want := []string{"create Succeeded 1", fmt.Sprintf("update Succeeded %d", role.Generation)}
		if diff := cmp.Diff(want, got); diff != "" {
			return fmt.Errorf("status.changes (-want +got):\n%s", diff)
		}
		return nil
	})

	// Drift: a change made behind the operator's back is undone at the
	// next poll, and counted.
	drifts := driftCorrections(t, RoleStepName)
	exec(t, e.srv, "ALTER ROLE "+quote(name)+" LOGIN CONNECTION LIMIT 9")
	bosuntest.Eventually(t, func(context.Context) error {
		if got, want := readRole(t, e, name), (roleState{Login: false, Limit: -1}); got == nil || *got != want {
			return fmt.Errorf("role in postgresql = %+v, want %+v", got, want)
		}
		return nil
	}, bosuntest.Timeout(30*time.Second))
	if got := driftCorrections(t, RoleStepName); got <= drifts {
		t.Errorf("%s{step=%q} = %v after a corrected drift, want more than %v", "bosun_managed_drift_corrections_total", RoleStepName, got, drifts)
	}

	// Delete drops the role and removes the Secret with the Role.
	if err := e.c.Delete(ctx, role); err != nil {
		t.Fatalf("delete role: %v", err)
	}
	waitGone(t, e.c, key, &pgv1.Role{})
	if got := readRole(t, e, name); got != nil {
		t.Errorf("role still in postgresql after delete: %+v", got)
	}
	checkNoPassword(t, e, password)

	// The Role's life was timed: first reconcile, time to Ready, deletion.
	for _, m := range timings {
		if got := metricValue(t, m, RoleStepName); got <= before[m] {
			t.Errorf("%s{step=%q} has %v samples after a Role's whole life, want more than %v", m, RoleStepName, got, before[m])
		}
	}
}

// checkNoPassword checks that no log line of the controllers and no event in
// the test's namespace holds password.
func checkNoPassword(t *testing.T, e env, password string) {
	t.Helper()
	entries := e.logs.Entries()
	if len(entries) == 0 {
		t.Error("no log lines recorded, want some to scan")
	}
	for _, l := range entries {
		if strings.Contains(l.String(), password) {
			t.Errorf("log line holds the password: %s", l)
		}
	}
	var evs eventsv1.EventList
	if err := e.c.List(t.Context(), &evs, client.InNamespace(e.ns)); err != nil {
		t.Fatalf("list events: %v", err)
	}
	if len(evs.Items) == 0 {
		t.Error("no events recorded, want some to scan")
	}
	for _, ev := range evs.Items {
		if strings.Contains(ev.Note, password) || strings.Contains(ev.Reason, password) {
			t.Errorf("event holds the password: %s %s", ev.Reason, ev.Note)
		}
	}
}

// dbState is a database as pg_database shows it.
type dbState struct {
	Owner    string
	Encoding string
}

// readDatabase returns the database name from pg_database, or nil when it
// is missing.
func readDatabase(t *testing.T, e env, name string) *dbState {
	t.Helper()
	var s dbState
	err := query(t, e.srv, "SELECT pg_get_userbyid(datdba), pg_encoding_to_char(encoding) FROM pg_database WHERE datname = $1",
		[]any{name}, &s.Owner, &s.Encoding)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		t.Fatalf("reading database %s: %v", name, err)
	}
	return &s
}

// TestDatabaseWaitsForRole creates a Database before its owner Role: it
// waits with reason ReferenceNotFound, then is created owned by the role;
// a change of owner behind the operator's back is undone; delete drops it.
func TestDatabaseWaitsForRole(t *testing.T) {
	e := start(t, nil)
	ctx := t.Context()
	db := &pgv1.Database{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "orders"},
		Spec:       pgv1.DatabaseSpec{Owner: "orders-owner"},
	}
	if err := e.c.Create(ctx, db); err != nil {
		t.Fatalf("create database: %v", err)
	}
	dbKey := client.ObjectKeyFromObject(db)
	dbName := externalName(db)
	waitFor(t, e.c, dbKey, db, condition{conditions.TypeReady, metav1.ConditionFalse, "ReferenceNotFound"})
	if db.Spec.Encoding != DefaultEncoding {
		t.Errorf("spec.encoding = %q, want the default %q", db.Spec.Encoding, DefaultEncoding)
	}
	if got := readDatabase(t, e, dbName); got != nil {
		t.Fatalf("database created before its role: %+v", got)
	}
	// Not even tried: a CREATE DATABASE before the role exists would fail.
	waitPasses(t, e, DatabaseControllerName, db.Name, 2)
	if found := statementsContaining(t, e.srv, "CREATE DATABASE "+quote(dbName)); len(found) != 0 {
		t.Fatalf("CREATE DATABASE sent while waiting for the role: %q", found)
	}

	role := &pgv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "orders-owner"}}
	if err := e.c.Create(ctx, role); err != nil {
		t.Fatalf("create role: %v", err)
	}
	waitFor(t, e.c, dbKey, db, readyTrue, syncedTrue)
	if found := statementsContaining(t, e.srv, "CREATE DATABASE "+quote(dbName)); len(found) != 1 {
		t.Errorf("%d CREATE DATABASE statements, want 1: %q", len(found), found)
	}
	want := dbState{Owner: externalName(role), Encoding: "UTF8"}
	if got := readDatabase(t, e, dbName); got == nil || *got != want {
		t.Fatalf("database in postgresql = %+v, want %+v", got, want)
	}
	// The status shows the database as PostgreSQL has it, its size
	// rounded.
	var oid, size int64
	if err := query(t, e.srv, "SELECT oid::bigint, pg_database_size(oid) FROM pg_database WHERE datname = $1", []any{dbName}, &oid, &size); err != nil {
		t.Fatalf("reading the database's oid and size: %v", err)
	}
	wantAt := &pgv1.DatabaseObservation{OID: oid, Owner: externalName(role), Encoding: "UTF8", Size: approxSize(size)}
	if diff := cmp.Diff(wantAt, db.Status.AtProvider); diff != "" {
		t.Errorf("status.atProvider (-want +got):\n%s", diff)
	}

	drifts := driftCorrections(t, DatabaseStepName)
	exec(t, e.srv, "ALTER DATABASE "+quote(dbName)+" OWNER TO postgres")
	bosuntest.Eventually(t, func(context.Context) error {
		if got := readDatabase(t, e, dbName); got == nil || *got != want {
			return fmt.Errorf("database in postgresql = %+v, want %+v", got, want)
		}
		return nil
	}, bosuntest.Timeout(30*time.Second))
	if got := driftCorrections(t, DatabaseStepName); got <= drifts {
		t.Errorf("%s{step=%q} = %v after a corrected drift, want more than %v", "bosun_managed_drift_corrections_total", DatabaseStepName, got, drifts)
	}

	// Update: the Database moves to another Role.
	admin := &pgv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "orders-admin"}}
	if err := e.c.Create(ctx, admin); err != nil {
		t.Fatalf("create role: %v", err)
	}
	waitFor(t, e.c, client.ObjectKeyFromObject(admin), admin, readyTrue, syncedTrue)
	base := db.DeepCopy()
	db.Spec.Owner = "orders-admin"
	if err := e.c.Patch(ctx, db, client.MergeFrom(base)); err != nil {
		t.Fatalf("patch database: %v", err)
	}
	waitFor(t, e.c, dbKey, db, readyTrue, syncedTrue)
	want = dbState{Owner: externalName(admin), Encoding: "UTF8"}
	bosuntest.Eventually(t, func(context.Context) error {
		if got := readDatabase(t, e, dbName); got == nil || *got != want {
			return fmt.Errorf("database in postgresql = %+v, want %+v", got, want)
		}
		return nil
	})

	if err := e.c.Delete(ctx, db); err != nil {
		t.Fatalf("delete database: %v", err)
	}
	waitGone(t, e.c, dbKey, &pgv1.Database{})
	if got := readDatabase(t, e, dbName); got != nil {
		t.Errorf("database still in postgresql after delete: %+v", got)
	}
	if err := e.c.Delete(ctx, role); err != nil {
		t.Fatalf("delete role: %v", err)
	}
	waitGone(t, e.c, client.ObjectKeyFromObject(role), &pgv1.Role{})
	if got := readRole(t, e, externalName(role)); got != nil {
		t.Errorf("role still in postgresql after delete: %+v", got)
	}
	if err := e.c.Delete(ctx, admin); err != nil {
		t.Fatalf("delete role: %v", err)
	}
	waitGone(t, e.c, client.ObjectKeyFromObject(admin), &pgv1.Role{})
}

// TestAnyObjectNameGetsAnIdentifier creates Roles whose names are valid
// Kubernetes names and no plain identifiers (too long, with a dot, starting
// with a digit): each gets a role under a valid identifier of its own, is
// Ready, and its role is dropped when it is deleted.
func TestAnyObjectNameGetsAnIdentifier(t *testing.T) {
	e := start(t, nil)
	var roles []client.Object
	for _, name := range []string{strings.Repeat("r", 70), "has.dot", "1digit"} {
		roles = append(roles, &pgv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name}})
	}
	create(t, e, roles...)
	seen := map[string]bool{}
	for _, r := range roles {
		role := r.(*pgv1.Role)
		waitFor(t, e.c, client.ObjectKeyFromObject(role), role, readyTrue, syncedTrue)
		name := managed.ExternalName(role)
		if err := ValidName(name); err != nil || seen[name] {
			t.Errorf("Role %s has role name %q: %v, already seen %t", role.Name, name, err, seen[name])
		}
		seen[name] = true
		if readRole(t, e, name) == nil {
			t.Errorf("Role %s is Ready and role %s does not exist", role.Name, name)
		}
	}
	deleteAndWait(t, e, roles...)
	for name := range seen {
		if got := readRole(t, e, name); got != nil {
			t.Errorf("role %s still in postgresql after delete: %+v", name, got)
		}
	}
}

// TestInvalidNamesNeverReachSQL gives names that are not plain identifiers:
// the API server refuses a spec.owner that is no object name, and external
// names set by hand leave their objects Synced and Ready False with reason
// InvalidSpec. No statement the server received contains the names, and
// the objects can be deleted.
func TestInvalidNamesNeverReachSQL(t *testing.T) {
	e := start(t, nil)
	ctx := t.Context()
	from := statementCount(t, e)
	owners := []string{`x"; DROP ROLE postgres; --`, `o'wner`, "semi;colon", "Upper", strings.Repeat("o", 254)}
	for i, owner := range owners {
		d := &pgv1.Database{
			ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: fmt.Sprintf("bad-owner-%d", i)},
			Spec:       pgv1.DatabaseSpec{Owner: owner},
		}
		if err := e.c.Create(ctx, d); !apierrors.IsInvalid(err) {
			t.Errorf("create database with owner %q: %v, want it refused as invalid", owner, err)
		}
	}

	invalid := []condition{
		{"Synced", metav1.ConditionFalse, "InvalidSpec"},
		{conditions.TypeReady, metav1.ConditionFalse, "InvalidSpec"},
	}
	names := []string{strings.Repeat("r", 70), "has.dot", "1digit", `x"; DROP ROLE postgres; --`, "o'wner", "semi;colon"}
	var objs []client.Object
	for i, name := range names {
		objs = append(objs,
			&pgv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: fmt.Sprintf("bad-role-%d", i), Annotations: withExternalName(name)}},
			&pgv1.Database{
				ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: fmt.Sprintf("bad-db-%d", i), Annotations: withExternalName(name)},
				Spec:       pgv1.DatabaseSpec{Owner: "nobody"},
			})
	}
	create(t, e, objs...)
	for _, o := range objs {
		waitFor(t, e.c, client.ObjectKeyFromObject(o), o.DeepCopyObject().(conditions.Object), invalid...)
	}
	deleteAndWait(t, e, objs...)
	stmts, err := e.srv.Statements()
	if err != nil {
		t.Fatalf("reading statements: %v", err)
	}
	for _, st := range stmts[from:] {
		for _, s := range append([]string{"DROP ROLE postgres", "o'wner", "semi;colon"}, names...) {
			if strings.Contains(st.Text, s) || strings.Contains(st.Parameters, s) {
				t.Errorf("a statement containing %q reached postgresql: %q", s, st.Text)
			}
		}
	}
}

// TestConvergedIsQuiet lets a converged Role and Database be polled again:
// the passes write nothing to the API server and send PostgreSQL nothing
// but reads.
func TestConvergedIsQuiet(t *testing.T) {
	writes := &bosuntest.WriteCounter{}
	e := start(t, func(c client.Client) client.Client { return writes.Wrap(c) })
	ctx := t.Context()
	role := &pgv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "quiet-user"},
		Spec:       pgv1.RoleSpec{Login: true, ConnectionSecretName: "quiet-conn"},
	}
	if err := e.c.Create(ctx, role); err != nil {
		t.Fatalf("create role: %v", err)
	}
	db := &pgv1.Database{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "quiet-db"},
		Spec:       pgv1.DatabaseSpec{Owner: "quiet-user"},
	}
	if err := e.c.Create(ctx, db); err != nil {
		t.Fatalf("create database: %v", err)
	}
	key := client.ObjectKeyFromObject(role)
	dbKey := client.ObjectKeyFromObject(db)
	waitFor(t, e.c, key, role, readyTrue, syncedTrue)
	waitFor(t, e.c, dbKey, db, readyTrue, syncedTrue)
	// Let the pass that recorded Ready settle before counting: a poll of
	// each has begun, so the passes that wrote have ended.
	waitPasses(t, e, RoleControllerName, role.Name, 1)
	waitPasses(t, e, DatabaseControllerName, db.Name, 1)
	before, err := e.srv.Statements()
	if err != nil {
		t.Fatalf("reading statements: %v", err)
	}
	writes.Reset()

	// Several polls of each, however long they take.
	waitPasses(t, e, RoleControllerName, role.Name, 3)
	waitPasses(t, e, DatabaseControllerName, db.Name, 3)
	// Only this test's objects: the controller reconciles every
	// namespace, and other tests of the process leave objects behind (the
	// battery's owner Roles, made against PostgreSQL servers of their own),
	// which are new to this operator, not converged: writing them is
	// right.
	var mine []bosuntest.Write
	for _, w := range writes.Writes() {
		if w.Namespace == e.ns {
			mine = append(mine, w)
		}
	}
	if len(mine) != 0 {
		t.Errorf("%d writes to the API server by passes over a converged Role and Database: %v", len(mine), mine)
	}
	after, err := e.srv.Statements()
	if err != nil {
		t.Fatalf("reading statements: %v", err)
	}
	for _, name := range []string{externalName(role), externalName(db)} {
		observed := 0
		for _, st := range after[len(before):] {
			if !strings.Contains(st.Text, name) && !strings.Contains(st.Parameters, name) {
				continue
			}
			observed++
			if !strings.HasPrefix(strings.TrimSpace(st.Text), "SELECT") {
				t.Errorf("statement beyond observation for converged %s: %q", name, st.Text)
			}
		}
		if observed == 0 {
			t.Errorf("no pass observed %s in 3 polls", name)
		}
	}
	if err := e.c.Delete(ctx, db); err != nil {
		t.Fatalf("delete database: %v", err)
	}
	waitGone(t, e.c, dbKey, &pgv1.Database{})
	if err := e.c.Delete(ctx, role); err != nil {
		t.Fatalf("delete role: %v", err)
	}
	waitGone(t, e.c, key, &pgv1.Role{})
}

// TestOrphan deletes a Database whose deletion policy is Orphan: the object
// goes, the database stays.
func TestOrphan(t *testing.T) {
	e := start(t, nil)
	ctx := t.Context()
	role := &pgv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "keeper"}}
	if err := e.c.Create(ctx, role); err != nil {
		t.Fatalf("create role: %v", err)
	}
	db := &pgv1.Database{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "kept", Annotations: map[string]string{
			managed.AnnotationDeletionPolicy: string(managed.DeletionOrphan),
		}},
		Spec: pgv1.DatabaseSpec{Owner: "keeper"},
	}
	if err := e.c.Create(ctx, db); err != nil {
		t.Fatalf("create database: %v", err)
	}
	key := client.ObjectKeyFromObject(db)
	waitFor(t, e.c, key, db, readyTrue, syncedTrue)
	if err := e.c.Delete(ctx, db); err != nil {
		t.Fatalf("delete database: %v", err)
	}
	waitGone(t, e.c, key, &pgv1.Database{})
	want := dbState{Owner: externalName(role), Encoding: "UTF8"}
	if got := readDatabase(t, e, externalName(db)); got == nil || *got != want {
		t.Fatalf("orphaned database in postgresql = %+v, want %+v", got, want)
	}
	if found := statementsContaining(t, e.srv, "DROP DATABASE IF EXISTS "+quote(externalName(db))); len(found) != 0 {
		t.Errorf("an orphaned database was dropped: %q", found)
	}
	// The role goes with its Role once it owns nothing; the Role is not
	// left for the managers of later tests to make again.
	exec(t, e.srv, "DROP DATABASE "+quote(externalName(db)))
	deleteAndWait(t, e, role)
	if got := readRole(t, e, externalName(role)); got != nil {
		t.Errorf("role still in postgresql after delete: %+v", got)
	}
}

// TestServerDown creates a Role while PostgreSQL is down: it is Synced
// False with reason ConnectFailed, retried with backoff, and created once
// the server is back.
func TestServerDown(t *testing.T) {
	e := start(t, nil)
	ctx := t.Context()
	if err := e.srv.Down(); err != nil {
		t.Fatalf("taking postgresql down: %v", err)
	}
	up := false
	t.Cleanup(func() {
		if !up {
			if err := e.srv.Up(context.Background()); err != nil {
				t.Errorf("bringing postgresql up: %v", err)
			}
		}
	})
	role := &pgv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "patient"}}
	if err := e.c.Create(ctx, role); err != nil {
		t.Fatalf("create role: %v", err)
	}
	key := client.ObjectKeyFromObject(role)
	waitFor(t, e.c, key, role, condition{"Synced", metav1.ConditionFalse, "ConnectFailed"})
	// While the server stays down, the retries back off, not a hot loop:
	// controller-runtime's backoff (5 ms, doubling) puts 635 ms or more
	// between a failed pass and the seventh after it; the test asks for
	// 300 ms, leaving room for a pass its own status write brought. A hot
	// loop makes eight in a few milliseconds; a busy machine only makes
	// the span longer.
	failed := func() []time.Time {
		var at []time.Time
		for _, l := range e.logs.Errors() {
			if l.Message == "Reconciler error" && strings.Contains(l.String(), `"patient"`) {
				at = append(at, l.Time)
			}
		}
		return at
	}
	first := len(failed())
	var seen []time.Time
	bosuntest.Eventually(t, func(context.Context) error {
		if seen = failed()[first:]; len(seen) < 8 {
			return fmt.Errorf("%d failed passes since the server went down, want 8", len(seen))
		}
		return nil
	}, bosuntest.Timeout(2*time.Minute))
	if span := seen[7].Sub(seen[0]); span < 300*time.Millisecond {
		t.Errorf("8 failed passes within %s with the server down: the retries do not back off", span)
	}
	if err := e.srv.Up(ctx); err != nil {
		t.Fatalf("bringing postgresql up: %v", err)
	}
	up = true
	waitFor(t, e.c, key, role, readyTrue, syncedTrue)
	if got := readRole(t, e, externalName(role)); got == nil {
		t.Fatal("role missing in postgresql after recovery")
	}
	if err := e.c.Delete(ctx, role); err != nil {
		t.Fatalf("delete role: %v", err)
	}
	waitGone(t, e.c, key, &pgv1.Role{})
}

// TestObserveOnly points an observe-only Role at a role made outside the
// operator, with other options than its spec, in a namespace granted
// adoption: the operator reports it and sends PostgreSQL nothing but
// reads, even when the Role is deleted.
func TestObserveOnly(t *testing.T) {
	e := start(t, nil)
	ctx := t.Context()
	// Observing a role made outside the operator is adoption.
	grantAdoption(t, e)
	role := &pgv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "watched", Annotations: map[string]string{
			managed.AnnotationManagementPolicies: managed.ObserveOnly().String(),
		}},
		Spec: pgv1.RoleSpec{Login: true},
	}
	name := externalName(role)
	exec(t, e.srv, "CREATE ROLE "+quote(name)+" NOLOGIN CONNECTION LIMIT 2")
	before, err := e.srv.Statements()
	if err != nil {
		t.Fatalf("reading statements: %v", err)
	}
	if err := e.c.Create(ctx, role); err != nil {
		t.Fatalf("create role: %v", err)
	}
	key := client.ObjectKeyFromObject(role)
	// Observing is the whole job under observe-only: a pass that observes
	// the role is a success, and Ready follows what is observed, a role
	// that exists.
	syncedTrue := condition{"Synced", metav1.ConditionTrue, "ReconcileSuccess"}
	waitFor(t, e.c, key, role, readyTrue, syncedTrue)
	// Observing reports the role in the status, and leaves the spec as
	// the user wrote it.
	if at := role.Status.AtProvider; at == nil || at.Login || at.ConnectionLimit != 2 || at.OID == 0 {
		t.Errorf("status.atProvider under observe-only = %+v, want the role's oid, NOLOGIN and connection limit 2", at)
	}
	if !role.Spec.Login {
		t.Error("spec.login changed under observe-only")
	}
	waitPasses(t, e, RoleControllerName, role.Name, 3) // a few polls
	if err := e.c.Delete(ctx, role); err != nil {
		t.Fatalf("delete role: %v", err)
	}
	waitGone(t, e.c, key, &pgv1.Role{})

	if got, want := readRole(t, e, name), (roleState{Login: false, Limit: 2}); got == nil || *got != want {
		t.Errorf("observed role in postgresql = %+v, want it untouched: %+v", got, want)
	}
	after, err := e.srv.Statements()
	if err != nil {
		t.Fatalf("reading statements: %v", err)
	}
	observed := 0
	for _, st := range after[len(before):] {
		if !strings.Contains(st.Text, name) && !strings.Contains(st.Parameters, name) {
			continue
		}
		observed++
		if !strings.HasPrefix(strings.TrimSpace(st.Text), "SELECT") {
			t.Errorf("observe-only Role sent a write: %q", st.Text)
		}
	}
	if observed == 0 {
		t.Error("the observe-only Role was never observed")
	}
	if got, ok := roleComment(t, e, name); !ok || got != "" {
		t.Errorf("observed role %s: comment %q, want none: observing marks nothing", name, got)
	}
	exec(t, e.srv, "DROP ROLE "+quote(name))
}
