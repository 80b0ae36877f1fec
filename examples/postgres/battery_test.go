package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest/faults"
	"github.com/bosunkit/bosun/bosuntest/oracle"
	pgv1 "github.com/bosunkit/bosun/examples/postgres/api/v1alpha1"
	"github.com/bosunkit/bosun/examples/postgres/pgserver"
	"github.com/bosunkit/bosun/managed"
	"github.com/bosunkit/bosun/shard"
)

// batteryOwner is the Role that Prepare makes in every namespace of the
// battery, which owns the battery's Databases. It is not one of the
// scenario's objects, so deleting some of them never deletes a role that a
// live database depends on; it is left in its namespace, and its role on
// the throwaway server, when the scenario ends.
const batteryOwner = "owner"

// TestBattery runs the reliability battery on the PostgreSQL operator, set
// up as SetupWithManager sets it up, against the shared server. The even
// objects are Roles that log in and publish their password in a connection
// Secret; the odd ones are Databases owned by the namespace's owner Role.
// Besides Ready, convergence checks the server itself: each object has
// exactly one role or database, under its name, marked with its UID, with
// the spec's options, and each Role's Secret holds a password that the
// role's stored verifier accepts. Deleting an object must drop what it had
// on the server and its connection Secret.
func TestBattery(t *testing.T) {
	faults.RunBattery(t, shared.ControlPlane(t), batteryOperator(server(t)))
}

// batteryOperator is the operator the battery runs: both controllers
// against srv, polling every second, as SetupWithManager registers them.
func batteryOperator(srv *pgserver.Server) faults.Operator {
	b := battery{srv: srv, conn: &sharedConn{dsn: srv.DSN("postgres")}}
	return faults.Operator{
		Name: "postgres",
		// SetupWithManager's two controllers, each in its shard ring when
		// the process has them.
		Setup: func(mgr ctrl.Manager, p *faults.Process) error {
			opts := Options{
				DSN:          srv.DSN("postgres"),
				WaitInterval: time.Second,
				Managed: []managed.Option{
					managed.WithCallHook(p.External()),
					managed.WithTiming(managed.Timing{Poll: time.Second, MinPoll: time.Second, Short: 200 * time.Millisecond, CreationGrace: 2 * time.Second}),
				},
			}
			roles, dbs := NewRoleReconciler(opts), NewDatabaseReconciler(opts)
			p.Configure(&roles.Options)
			p.Configure(&dbs.Options)
			if err := faults.Shard(bosun.ControllerManagedBy[*pgv1.Role](mgr), p).Complete(roles); err != nil {
				return err
			}
			return faults.Shard(bosun.ControllerManagedBy[*pgv1.Database](mgr), p).Complete(dbs)
		},
		// A Database must see its owner Role in its manager's cache, which
		// holds only the member's share of Roles: both kinds are sharded
		// by namespace, so that one member holds a namespace's Roles and
		// Databases alike.
		Shard: func(string) []shard.Options {
			return []shard.Options{
				{Ring: "roles", Object: &pgv1.Role{}, Key: shard.ByNamespace},
				{Ring: "databases", Object: &pgv1.Database{}, Key: shard.ByNamespace},
			}
		},
		// A Role's new connection limit must reach the server.
		Change: func(o client.Object) {
			if r, ok := o.(*pgv1.Role); ok {
				r.Spec.ConnectionLimit = ptr.To(*r.Spec.ConnectionLimit + 10)
			}
		},
		// Per object of a scenario (Roles and Databases alike), the
		// owner Role that Prepare makes for the Databases included, so
		// a scenario of two objects counts three. Create: a Role is its
		// claim, its external name, the pending mark, the outcome, the
		// connection Secret, the first-available mark and two status
		// writes; a Database one Secret fewer. Change: an UPDATE of the
		// role and one status write. Delete: the fence, the status and
		// the release, and the Secret of a Role. Polls: every object once
		// a second.
		Budget: faults.Budget{
			Create: faults.Cost{Writes: 11, External: 2},
			Change: faults.Cost{Writes: 1, External: 1},
			Delete: faults.Cost{Writes: 4, External: 1},
			Poll:   2, PollEvery: time.Second,
		},
		Object:     batteryObject,
		Prepare:    batteryPrepare,
		Converged:  b.converged,
		Duplicates: b.duplicates,
		Cleaned:    b.cleaned,
		Secrets:    batterySecrets,
		Lists:      []client.ObjectList{&pgv1.RoleList{}, &pgv1.DatabaseList{}},
		External:   true,
		// Each trial makes ten databases and ten roles with passwords on
		// one server, polled every second; with several trials at once on
		// a two-core machine one minute is too close.
		Bound: 2 * time.Minute,
		// A thousand objects polled every second, half of them databases
		// copied from a template, keep one server and two cores busy: the
		// scale row allows half a second each.
		PerObject: 500 * time.Millisecond,
	}
}

// batteryObject returns the i-th object of a battery scenario: a Role
// "role-<i>" with login, a connection limit of 3+i and the connection
// Secret "role-<i>-conn" for even i; for odd i a Database "db-<i>" owned by
// batteryOwner, every other one in LATIN1 and the rest in the default
// encoding, all copied with the FILE_COPY strategy.
func batteryObject(ns string, i int) client.Object {
	if i%2 == 0 {
		name := fmt.Sprintf("role-%d", i)
		return &pgv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: pgv1.RoleSpec{
				Login:                true,
				ConnectionLimit:      ptr.To(int32(3 + i)),
				ConnectionSecretName: name + "-conn",
			},
		}
	}
	d := &pgv1.Database{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("db-%d", i)},
		Spec:       pgv1.DatabaseSpec{Owner: batteryOwner},
	}
	if i%4 == 3 {
		d.Spec.Encoding = "LATIN1"
	}
	// FILE_COPY makes a database in about a fifth of the time WAL_LOG
	// takes on the throwaway server (fsync off), and the battery makes
	// tens of thousands of them.
	d.Spec.Strategy = "FILE_COPY"
	return d
}

// batteryPrepare makes the Role that owns the battery's Databases in ns.
func batteryPrepare(ctx context.Context, c client.Client, ns string) error {
	owner := &pgv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: batteryOwner}}
	if err := c.Create(ctx, owner); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the owner Role: %w", err)
	}
	return nil
}

// battery holds the server the battery's checks read.
type battery struct {
	srv  *pgserver.Server
	conn *sharedConn
}

// sharedConn is one connection to the server that the checks of every
// trial take turns on, so that checking every 100 ms does not start a
// server process each time.
type sharedConn struct {
	dsn  string
	mu   sync.Mutex
	conn *pgx.Conn
}

// get returns the connection, opened again when it was closed or broken,
// and the function that hands it back.
func (s *sharedConn) get(ctx context.Context) (*pgx.Conn, func(), error) {
	s.mu.Lock()
	if s.conn == nil || s.conn.IsClosed() {
		conn, err := pgx.Connect(ctx, s.dsn)
		if err != nil {
			s.mu.Unlock()
			return nil, nil, fmt.Errorf("connecting to postgresql: %w", err)
		}
		s.conn = conn
	}
	conn := s.conn
	return conn, func() {
		if conn.PgConn().IsBusy() || conn.PgConn().TxStatus() != 'I' {
			// A check cut short by its deadline: start afresh next time.
			_ = conn.Close(context.Background())
		}
		s.mu.Unlock()
	}, nil
}

// pgRole is a role as pg_authid shows it.
type pgRole struct {
	name     string
	login    bool
	limit    int32
	verifier string
	owner    string // the UID of the owner mark, empty without one
}

// pgDatabase is a database as pg_database shows it.
type pgDatabase struct {
	name     string
	dba      string
	encoding string
	owner    string // the UID of the owner mark, empty without one
}

// inventory is what the server holds of a scenario's objects.
type inventory struct {
	roles     []pgRole
	databases []pgDatabase
}

// externals returns the inventory as oracle.External, with IDs
// "role/<name>" and "database/<name>".
func (inv inventory) externals() oracle.Externals {
	var out []oracle.External
	for _, r := range inv.roles {
		out = append(out, oracle.External{ID: "role/" + r.name, Owner: r.owner})
	}
	for _, d := range inv.databases {
		out = append(out, oracle.External{ID: "database/" + d.name, Owner: d.owner})
	}
	return out
}

// inventory reads the roles and databases that bear the name of one of
// objs (SQLName of its namespace and name) or are marked with the UID of
// one of them.
func (b battery) inventory(ctx context.Context, objs []client.Object) (inventory, error) {
	var names, marks []string
	for _, o := range objs {
		names = append(names, SQLName(o.GetNamespace(), o.GetName()))
		marks = append(marks, ownerMark(o))
	}
	conn, release, err := b.conn.get(ctx)
	if err != nil {
		return inventory{}, err
	}
	defer release()

	var inv inventory
	rows, err := conn.Query(ctx,
		"SELECT a.rolname, a.rolcanlogin, a.rolconnlimit, coalesce(a.rolpassword, ''), coalesce(shobj_description(a.oid, 'pg_authid'), '') "+
			"FROM pg_authid a WHERE a.rolname = ANY($1) OR shobj_description(a.oid, 'pg_authid') = ANY($2)", names, marks)
	if err != nil {
		return inventory{}, fmt.Errorf("listing roles: %w", err)
	}
	for rows.Next() {
		var r pgRole
		var comment string
		if err := rows.Scan(&r.name, &r.login, &r.limit, &r.verifier, &comment); err != nil {
			rows.Close()
			return inventory{}, fmt.Errorf("reading a role: %w", err)
		}
		r.owner = ownerOf(comment)
		inv.roles = append(inv.roles, r)
	}
	if err := rows.Err(); err != nil {
		return inventory{}, fmt.Errorf("listing roles: %w", err)
	}
	rows, err = conn.Query(ctx,
		"SELECT d.datname, pg_get_userbyid(d.datdba), pg_encoding_to_char(d.encoding), coalesce(shobj_description(d.oid, 'pg_database'), '') "+
			"FROM pg_database d WHERE d.datname = ANY($1) OR shobj_description(d.oid, 'pg_database') = ANY($2)", names, marks)
	if err != nil {
		return inventory{}, fmt.Errorf("listing databases: %w", err)
	}
	for rows.Next() {
		var d pgDatabase
		var comment string
		if err := rows.Scan(&d.name, &d.dba, &d.encoding, &comment); err != nil {
			rows.Close()
			return inventory{}, fmt.Errorf("reading a database: %w", err)
		}
		d.owner = ownerOf(comment)
		inv.databases = append(inv.databases, d)
	}
	if err := rows.Err(); err != nil {
		return inventory{}, fmt.Errorf("listing databases: %w", err)
	}
	return inv, nil
}

// uids returns the UIDs of objs.
func uids(objs []client.Object) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, string(o.GetUID()))
	}
	return out
}

// converged checks the server and the connection Secrets: one role or
// database per object and nothing else under their names (oracle.Externals.OnePer,
// which also refuses an unmarked one or one marked for an earlier object
// of the same name), each with the spec's options; each Role's Secret
// holds the role's name, the server's address and a password that the
// role's verifier accepts.
//
// It reads the namespace's Secrets and Databases with one List each: a
// Get per object would make one check of a thousand objects cost 1,500
// requests, and take minutes on a loaded machine.
func (b battery) converged(ctx context.Context, c client.Client, ns string, objs []client.Object) error {
	inv, err := b.inventory(ctx, objs)
	if err != nil {
		return err
	}
	if err := inv.externals().OnePer(uids(objs)); err != nil {
		return err
	}
	if ns == "" && len(objs) > 0 {
		ns = objs[0].GetNamespace()
	}
	snap, err := listNamespace(ctx, c, ns)
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range objs {
		switch o := o.(type) {
		case *pgv1.Role:
			errs = append(errs, b.roleConverged(ctx, snap, inv, o))
		case *pgv1.Database:
			errs = append(errs, databaseConverged(ctx, snap, inv, o))
		default:
			errs = append(errs, fmt.Errorf("%s: unexpected %T", o.GetName(), o))
		}
	}
	return errors.Join(errs...)
}

// snapshot serves Gets of the Secrets and Databases of one namespace from
// one List of each.
type snapshot struct {
	secrets   map[client.ObjectKey]*corev1.Secret
	databases map[client.ObjectKey]*pgv1.Database
}

// listNamespace lists the Secrets and Databases of ns.
func listNamespace(ctx context.Context, c client.Client, ns string) (*snapshot, error) {
	var secs corev1.SecretList
	var dbs pgv1.DatabaseList
	if err := c.List(ctx, &secs, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing secrets: %w", err)
	}
	if err := c.List(ctx, &dbs, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing databases: %w", err)
	}
	s := &snapshot{secrets: map[client.ObjectKey]*corev1.Secret{}, databases: map[client.ObjectKey]*pgv1.Database{}}
	for i := range secs.Items {
		s.secrets[client.ObjectKeyFromObject(&secs.Items[i])] = &secs.Items[i]
	}
	for i := range dbs.Items {
		s.databases[client.ObjectKeyFromObject(&dbs.Items[i])] = &dbs.Items[i]
	}
	return s, nil
}

// Get copies the listed Secret or Database at key into obj.
func (s *snapshot) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	switch dst := obj.(type) {
	case *corev1.Secret:
		src, ok := s.secrets[key]
		if !ok {
			return apierrors.NewNotFound(corev1.Resource("secrets"), key.Name)
		}
		src.DeepCopyInto(dst)
	case *pgv1.Database:
		src, ok := s.databases[key]
		if !ok {
			return apierrors.NewNotFound(pgv1.GroupVersion.WithResource("databases").GroupResource(), key.Name)
		}
		src.DeepCopyInto(dst)
	default:
		return fmt.Errorf("snapshot: no %T listed", obj)
	}
	return nil
}

// List is not served by a snapshot.
func (s *snapshot) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("snapshot: List is not served")
}

// roleConverged checks the role of r and its connection Secret.
func (b battery) roleConverged(ctx context.Context, c client.Reader, inv inventory, r *pgv1.Role) error {
	want := SQLName(r.Namespace, r.Name)
	i := slices.IndexFunc(inv.roles, func(s pgRole) bool { return s.owner == string(r.UID) })
	if i < 0 {
		return fmt.Errorf("role %s: none marked with its UID", r.Name)
	}
	got := inv.roles[i]
	switch {
	case got.name != want:
		return fmt.Errorf("role %s: its role is %s, want %s", r.Name, got.name, want)
	case !got.login || got.limit != connectionLimit(r):
		return fmt.Errorf("role %s: role %s has login %t and connection limit %d, want true and %d", r.Name, got.name, got.login, got.limit, connectionLimit(r))
	}
	sec := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.Spec.ConnectionSecretName}, sec); err != nil {
		return fmt.Errorf("role %s: connection secret: %w", r.Name, err)
	}
	if u := string(sec.Data[SecretUsername]); u != want {
		return fmt.Errorf("role %s: secret %s has username %q, want %q", r.Name, sec.Name, u, want)
	}
	if h, p := string(sec.Data[SecretHost]), string(sec.Data[SecretPort]); h != b.srv.Host || p != strconv.Itoa(b.srv.Port) {
		return fmt.Errorf("role %s: secret %s has host %q and port %q, want %q and %d", r.Name, sec.Name, h, p, b.srv.Host, b.srv.Port)
	}
	if err := checkVerifier(string(sec.Data[SecretPassword]), got.verifier); err != nil {
		return fmt.Errorf("role %s: the password of secret %s does not match role %s: %w", r.Name, sec.Name, got.name, err)
	}
	return nil
}

// databaseConverged checks the database of d.
func databaseConverged(ctx context.Context, c client.Reader, inv inventory, d *pgv1.Database) error {
	want := SQLName(d.Namespace, d.Name)
	i := slices.IndexFunc(inv.databases, func(s pgDatabase) bool { return s.owner == string(d.UID) })
	if i < 0 {
		return fmt.Errorf("database %s: none marked with its UID", d.Name)
	}
	got := inv.databases[i]
	owner := SQLName(d.Namespace, d.Spec.Owner)
	switch {
	case got.name != want:
		return fmt.Errorf("database %s: its database is %s, want %s", d.Name, got.name, want)
	case got.dba != owner:
		return fmt.Errorf("database %s: database %s is owned by %s, want %s", d.Name, got.name, got.dba, owner)
	case !strings.EqualFold(got.encoding, encoding(d)):
		return fmt.Errorf("database %s: database %s has encoding %s, want %s", d.Name, got.name, got.encoding, encoding(d))
	}
	cur := &pgv1.Database{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), cur); err != nil {
		return fmt.Errorf("database %s: %w", d.Name, err)
	}
	if cur.Status.OwnerRole != owner {
		return fmt.Errorf("database %s: status.ownerRole is %q, want %q", d.Name, cur.Status.OwnerRole, owner)
	}
	return nil
}

// duplicates counts the objects with more than one role or database
// marked with their UID.
func (b battery) duplicates(ctx context.Context, _ client.Client, _ string, objs []client.Object) (int, error) {
	inv, err := b.inventory(ctx, objs)
	if err != nil {
		return 0, err
	}
	per := map[string]int{}
	for _, e := range inv.externals() {
		per[e.Owner]++
	}
	n := 0
	for _, uid := range uids(objs) {
		if per[uid] > 1 {
			n++
		}
	}
	return n, nil
}

// cleaned checks that nothing is left on the server under the names of
// objs or marked with their UIDs, and that the Roles' connection Secrets
// are gone: the operator deletes them before it releases a Role, and the
// garbage collector would collect one it left.
func (b battery) cleaned(ctx context.Context, c client.Client, _ string, objs []client.Object) error {
	inv, err := b.inventory(ctx, objs)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range inv.externals() {
		errs = append(errs, fmt.Errorf("%s left on the server (owner mark %q)", e.ID, e.Owner))
	}
	for _, o := range objs {
		r, ok := o.(*pgv1.Role)
		if !ok || r.Spec.ConnectionSecretName == "" {
			continue
		}
		sec := &corev1.Secret{}
		err := c.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.Spec.ConnectionSecretName}, sec)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			errs = append(errs, err)
		case metav1.IsControlledBy(sec, r):
			errs = append(errs, fmt.Errorf("role %s: connection secret %s left", r.Name, sec.Name))
		}
	}
	return errors.Join(errs...)
}

// batterySecrets returns the passwords of the connection Secrets in ns.
func batterySecrets(ctx context.Context, c client.Client, ns string) ([]string, error) {
	var list corev1.SecretList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing secrets: %w", err)
	}
	var out []string
	for _, s := range list.Items {
		if p := s.Data[SecretPassword]; len(p) > 0 {
			out = append(out, string(p))
		}
	}
	return out, nil
}
