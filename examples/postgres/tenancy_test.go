package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	pgv1 "github.com/bosunkit/bosun/examples/postgres/api/v1alpha1"
	"github.com/bosunkit/bosun/managed"
)

// markOf is the comment by which the operator marks a role or database as
// the object's whose UID is uid.
func markOf(obj client.Object) string { return "bosun-owner:" + string(obj.GetUID()) }

// roleComment returns the comment on the role name, and whether the role
// exists.
func roleComment(t *testing.T, e env, name string) (string, bool) {
	t.Helper()
	var c string
	err := query(t, e.srv, "SELECT coalesce(shobj_description(oid, 'pg_authid'), '') FROM pg_roles WHERE rolname = $1", []any{name}, &c)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false
	}
	if err != nil {
		t.Fatalf("reading the comment on role %s: %v", name, err)
	}
	return c, true
}

// databaseComment returns the comment on the database name, and whether the
// database exists.
func databaseComment(t *testing.T, e env, name string) (string, bool) {
	t.Helper()
	var c string
	err := query(t, e.srv, "SELECT coalesce(shobj_description(oid, 'pg_database'), '') FROM pg_database WHERE datname = $1", []any{name}, &c)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false
	}
	if err != nil {
		t.Fatalf("reading the comment on database %s: %v", name, err)
	}
	return c, true
}

// statementCount returns how many statements the server received so far.
func statementCount(t *testing.T, e env) int {
	t.Helper()
	stmts, err := e.srv.Statements()
	if err != nil {
		t.Fatalf("reading statements: %v", err)
	}
	return len(stmts)
}

// statementsSince returns the statements, from the from-th on, that name
// name: quoted in their text, or as a bind parameter.
func statementsSince(t *testing.T, e env, from int, name string) []string {
	t.Helper()
	stmts, err := e.srv.Statements()
	if err != nil {
		t.Fatalf("reading statements: %v", err)
	}
	var found []string
	for _, st := range stmts[from:] {
		if strings.Contains(st.Text, quote(name)) || strings.Contains(st.Parameters, literal(name)) {
			found = append(found, st.Text)
		}
	}
	return found
}

// writesSince returns the statements from the from-th on that name name and
// are not reads.
func writesSince(t *testing.T, e env, from int, name string) []string {
	t.Helper()
	var writes []string
	for _, s := range statementsSince(t, e, from, name) {
		if !strings.HasPrefix(strings.TrimSpace(s), "SELECT") {
			writes = append(writes, s)
		}
	}
	return writes
}

// withExternalName returns annotations that set the external name by hand.
func withExternalName(name string) map[string]string {
	return map[string]string{managed.AnnotationExternalName: name}
}

// create creates each object, failing the test on an error.
func create(t *testing.T, e env, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := e.c.Create(t.Context(), o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
}

// deleteAndWait deletes each object and waits until it is gone.
func deleteAndWait(t *testing.T, e env, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := e.c.Delete(t.Context(), o); client.IgnoreNotFound(err) != nil {
			t.Fatalf("delete %T %s: %v", o, o.GetName(), err)
		}
	}
	for _, o := range objs {
		waitGone(t, e.c, client.ObjectKeyFromObject(o), o.DeepCopyObject().(client.Object))
	}
}

var (
	conflict   = condition{conditions.TypeReady, metav1.ConditionFalse, "ExternalResourceConflict"}
	notGranted = condition{conditions.TypeReady, metav1.ConditionFalse, managed.ReasonAdoptionNotGranted}
)

// TestSameNamesInTwoNamespacesGetTwoDatabases makes a Role "shop-owner"
// and a Database "shop" in each of two namespaces: PostgreSQL gets two
// roles and two databases under distinct names, each marked with the UID
// of its own object and each database owned by its own namespace's role;
// deleting one namespace's Database leaves the other's database.
func TestSameNamesInTwoNamespacesGetTwoDatabases(t *testing.T) {
	e := start(t, nil)
	namespaces := []string{e.ns, bosuntest.Namespace(t, e.c)}
	var roles []*pgv1.Role
	var dbs []*pgv1.Database
	for _, ns := range namespaces {
		r := &pgv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop-owner"}}
		d := &pgv1.Database{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"}, Spec: pgv1.DatabaseSpec{Owner: "shop-owner"}}
		create(t, e, r, d)
		roles, dbs = append(roles, r), append(dbs, d)
	}
	for i := range namespaces {
		waitFor(t, e.c, client.ObjectKeyFromObject(roles[i]), roles[i], readyTrue, syncedTrue)
		waitFor(t, e.c, client.ObjectKeyFromObject(dbs[i]), dbs[i], readyTrue, syncedTrue)
	}
	roleNames := []string{managed.ExternalName(roles[0]), managed.ExternalName(roles[1])}
	dbNames := []string{managed.ExternalName(dbs[0]), managed.ExternalName(dbs[1])}
	if roleNames[0] == roleNames[1] || dbNames[0] == dbNames[1] {
		t.Fatalf("objects of two namespaces share external names: roles %q, databases %q", roleNames, dbNames)
	}
	for i := range namespaces {
		if got, ok := roleComment(t, e, roleNames[i]); !ok || got != markOf(roles[i]) {
			t.Errorf("role %s: comment %q (exists %t), want %q", roleNames[i], got, ok, markOf(roles[i]))
		}
		if got, ok := databaseComment(t, e, dbNames[i]); !ok || got != markOf(dbs[i]) {
			t.Errorf("database %s: comment %q (exists %t), want %q", dbNames[i], got, ok, markOf(dbs[i]))
		}
		if got := readDatabase(t, e, dbNames[i]); got == nil || got.Owner != roleNames[i] {
			t.Errorf("database %s = %+v, want it owned by %s", dbNames[i], got, roleNames[i])
		}
	}

	deleteAndWait(t, e, dbs[0])
	if got := readDatabase(t, e, dbNames[0]); got != nil {
		t.Errorf("database %s still there after its Database was deleted: %+v", dbNames[0], got)
	}
	if got, ok := databaseComment(t, e, dbNames[1]); !ok || got != markOf(dbs[1]) {
		t.Errorf("the other namespace's database %s: comment %q (exists %t), want it untouched with %q", dbNames[1], got, ok, markOf(dbs[1]))
	}
	deleteAndWait(t, e, dbs[1], roles[0], roles[1])
}

// TestResourceNotTheObjectsIsLeftAlone puts objects on roles and databases
// made directly with SQL: unmarked ones under the names the objects would
// get, and ones marked for another object under names set by hand (which
// asks for adoption). None is adopted: the objects on unmarked ones are
// Ready False with reason AdoptionNotGranted, those on marked ones with
// ExternalResourceConflict, no statement but reads reaches the server for
// them, and deleting the objects leaves them as they were.
func TestResourceNotTheObjectsIsLeftAlone(t *testing.T) {
	e := start(t, nil)
	suffix := runSuffix()
	foreignMark := "bosun-owner:00000000-0000-0000-0000-" + suffix + "000000"

	unmarkedRole := &pgv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "squatted"}, Spec: pgv1.RoleSpec{Login: true}}
	markedRole := &pgv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "claimer", Annotations: withExternalName("foreign_role_" + suffix)},
		Spec:       pgv1.RoleSpec{Login: true},
	}
	owner := &pgv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "db-owner"}}
	unmarkedDB := &pgv1.Database{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "squatted-db"}, Spec: pgv1.DatabaseSpec{Owner: "db-owner"}}
	markedDB := &pgv1.Database{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "claimer-db", Annotations: withExternalName("foreign_db_" + suffix)},
		Spec:       pgv1.DatabaseSpec{Owner: "db-owner"},
	}
	names := []string{externalName(unmarkedRole), "foreign_role_" + suffix, externalName(unmarkedDB), "foreign_db_" + suffix}
	exec(t, e.srv, "CREATE ROLE "+quote(names[0])+" NOLOGIN")
	exec(t, e.srv, "CREATE ROLE "+quote(names[1])+" NOLOGIN")
	exec(t, e.srv, "COMMENT ON ROLE "+quote(names[1])+" IS "+literal(foreignMark))
	exec(t, e.srv, "CREATE DATABASE "+quote(names[2]))
	exec(t, e.srv, "CREATE DATABASE "+quote(names[3]))
	exec(t, e.srv, "COMMENT ON DATABASE "+quote(names[3])+" IS "+literal(foreignMark))
	from := statementCount(t, e)

	create(t, e, unmarkedRole, markedRole, owner, unmarkedDB, markedDB)
	waitFor(t, e.c, client.ObjectKeyFromObject(owner), owner, readyTrue, syncedTrue)
	for _, o := range []conditions.Object{unmarkedRole, unmarkedDB} {
		waitFor(t, e.c, client.ObjectKeyFromObject(o), o, notGranted)
	}
	for _, o := range []conditions.Object{markedRole, markedDB} {
		waitFor(t, e.c, client.ObjectKeyFromObject(o), o, conflict)
	}
	deleteAndWait(t, e, unmarkedRole, markedRole, unmarkedDB, markedDB, owner)

	for _, name := range names {
		if w := writesSince(t, e, from, name); len(w) != 0 {
			t.Errorf("%s is not the objects', and received writes: %q", name, w)
		}
	}
	wantComments := []string{"", foreignMark}
	for i, name := range names[:2] {
		if got, ok := roleComment(t, e, name); !ok || got != wantComments[i] {
			t.Errorf("role %s: comment %q (exists %t), want it left with %q", name, got, ok, wantComments[i])
		}
		if got := readRole(t, e, name); got == nil || got.Login {
			t.Errorf("role %s = %+v, want it left NOLOGIN", name, got)
		}
	}
	for i, name := range names[2:] {
		if got, ok := databaseComment(t, e, name); !ok || got != wantComments[i] {
			t.Errorf("database %s: comment %q (exists %t), want it left with %q", name, got, ok, wantComments[i])
		}
		if got := readDatabase(t, e, name); got == nil || got.Owner != "postgres" {
			t.Errorf("database %s = %+v, want it left owned by postgres", name, got)
		}
	}
	for _, name := range names[2:] {
		exec(t, e.srv, "DROP DATABASE "+quote(name))
	}
	for _, name := range names[:2] {
		exec(t, e.srv, "DROP ROLE "+quote(name))
	}
}

// TestHandSetExternalNameAdoptsWhereGranted sets the external names of a
// Role and a Database by hand to an unmarked role and database made with
// SQL. Without a grant neither is adopted: both are Ready False with reason
// AdoptionNotGranted and no statement but reads names them. Once an
// administrator annotates the Namespace with bosun.dev/adopt-external, both
// are adopted, brought in line with the spec and marked with their
// object's UID (one COMMENT each), and deleting the objects drops them.
func TestHandSetExternalNameAdoptsWhereGranted(t *testing.T) {
	e := start(t, nil)
	suffix := runSuffix()
	roleName, dbName := "legacy_role_"+suffix, "legacy_db_"+suffix
	exec(t, e.srv, "CREATE ROLE "+quote(roleName)+" NOLOGIN")
	exec(t, e.srv, "COMMENT ON ROLE "+quote(roleName)+" IS 'made by hand'")
	exec(t, e.srv, "CREATE DATABASE "+quote(dbName))
	from := statementCount(t, e)

	role := &pgv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "adopter", Annotations: withExternalName(roleName)},
		Spec:       pgv1.RoleSpec{Login: true},
	}
	db := &pgv1.Database{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "adopted", Annotations: withExternalName(dbName)},
		Spec:       pgv1.DatabaseSpec{Owner: "adopter"},
	}
	create(t, e, role, db)
	waitFor(t, e.c, client.ObjectKeyFromObject(role), role, notGranted)
	for _, name := range []string{roleName, dbName} {
		if w := writesSince(t, e, from, name); len(w) != 0 {
			t.Errorf("%s was adopted without a grant: %q", name, w)
		}
	}

	grantAdoption(t, e)
	waitFor(t, e.c, client.ObjectKeyFromObject(role), role, readyTrue, syncedTrue)
	waitFor(t, e.c, client.ObjectKeyFromObject(db), db, readyTrue, syncedTrue)

	if got := readRole(t, e, roleName); got == nil || !got.Login {
		t.Errorf("adopted role %s = %+v, want it brought to LOGIN", roleName, got)
	}
	if got, ok := roleComment(t, e, roleName); !ok || got != markOf(role) {
		t.Errorf("adopted role %s: comment %q (exists %t), want %q", roleName, got, ok, markOf(role))
	}
	if got := readDatabase(t, e, dbName); got == nil || got.Owner != roleName {
		t.Errorf("adopted database %s = %+v, want it owned by %s", dbName, got, roleName)
	}
	if got, ok := databaseComment(t, e, dbName); !ok || got != markOf(db) {
		t.Errorf("adopted database %s: comment %q (exists %t), want %q", dbName, got, ok, markOf(db))
	}
	for _, c := range []struct{ kind, name string }{{"ROLE", roleName}, {"DATABASE", dbName}} {
		n := 0
		for _, s := range writesSince(t, e, from, c.name) {
			if strings.HasPrefix(strings.TrimSpace(s), "COMMENT ON "+c.kind+" "+quote(c.name)) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d COMMENT ON %s statements for %s, want 1 (the mark of the adoption)", n, c.kind, c.name)
		}
	}

	deleteAndWait(t, e, db, role)
	if got := readDatabase(t, e, dbName); got != nil {
		t.Errorf("adopted database %s still there after delete: %+v", dbName, got)
	}
	if got := readRole(t, e, roleName); got != nil {
		t.Errorf("adopted role %s still there after delete: %+v", roleName, got)
	}
}

// grantAdoption annotates the test's Namespace with
// bosun.dev/adopt-external: "true", as an administrator grants adoption.
func grantAdoption(t *testing.T, e env) {
	t.Helper()
	bosuntest.Eventually(t, func(ctx context.Context) error {
		ns := &corev1.Namespace{}
		if err := e.c.Get(ctx, client.ObjectKey{Name: e.ns}, ns); err != nil {
			return err
		}
		if ns.Annotations == nil {
			ns.Annotations = map[string]string{}
		}
		ns.Annotations[managed.AnnotationAdoptExternal] = "true"
		return e.c.Update(ctx, ns)
	})
}

// TestReservedNamesAreInvalidSpec sets external names by hand to names
// PostgreSQL keeps for itself: each object is Synced and Ready False with
// reason InvalidSpec, no statement naming them reaches the server, and the
// objects can be deleted.
func TestReservedNamesAreInvalidSpec(t *testing.T) {
	e := start(t, nil)
	invalid := []condition{
		{"Synced", metav1.ConditionFalse, "InvalidSpec"},
		{conditions.TypeReady, metav1.ConditionFalse, "InvalidSpec"},
	}
	roleNames := []string{"postgres", "pg_monitor", "public", "current_user", "none"}
	dbNames := []string{"postgres", "template0", "template1", "pg_reserved"}
	from := statementCount(t, e)
	var objs []client.Object
	for i, name := range roleNames {
		// Spec as the superuser already is: had it been adopted, no
		// ALTER would have been needed.
		objs = append(objs, &pgv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: fmt.Sprintf("reserved-role-%d", i), Annotations: withExternalName(name)},
			Spec:       pgv1.RoleSpec{Login: true},
		})
	}
	for i, name := range dbNames {
		objs = append(objs, &pgv1.Database{
			ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: fmt.Sprintf("reserved-db-%d", i), Annotations: withExternalName(name)},
			Spec:       pgv1.DatabaseSpec{Owner: "nobody"},
		})
	}
	create(t, e, objs...)
	for _, o := range objs {
		waitFor(t, e.c, client.ObjectKeyFromObject(o), o.DeepCopyObject().(conditions.Object), invalid...)
	}
	deleteAndWait(t, e, objs...)
	for _, name := range append(roleNames, dbNames...) {
		if found := statementsSince(t, e, from, name); len(found) != 0 {
			t.Errorf("statements naming the reserved name %s reached postgresql: %q", name, found)
		}
	}
}
