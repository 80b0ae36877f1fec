package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"sigs.k8s.io/controller-runtime/pkg/log"

	pgv1 "github.com/bosunkit/bosun/examples/postgres/api/v1alpha1"
	"github.com/bosunkit/bosun/managed"
)

// DefaultEncoding is the encoding of a Database whose spec names none.
const DefaultEncoding = "UTF8"

// errOwnerUnresolved is the error of a create or update of a database
// whose owner role is not known yet; awaitRole resolves it first, so it
// means a programming error.
var errOwnerUnresolved = errors.New("the owner role is not resolved yet (status.ownerRole is empty)")

// databaseClient is the managed.ExternalClient of one Database, over one
// connection.
type databaseClient struct {
	conn *pgx.Conn
}

// batchDatabaseClient is a databaseClient that also observes many
// databases in one query (managed.BatchObserver).
type batchDatabaseClient struct{ *databaseClient }

var (
	_ managed.ExternalClient[*pgv1.Database] = (*databaseClient)(nil)
	_ managed.Disconnecter                   = (*databaseClient)(nil)
	_ managed.BatchObserver[*pgv1.Database]  = batchDatabaseClient{}
)

// encoding returns the encoding the spec asks for.
func encoding(d *pgv1.Database) string {
	if d.Spec.Encoding == "" {
		return DefaultEncoding
	}
	return d.Spec.Encoding
}

// validateDatabaseName checks the name of the database d stands for.
func validateDatabaseName(d *pgv1.Database) error {
	if err := ValidName(nameOf(d)); err != nil {
		return managed.InvalidSpec(fmt.Errorf("database name: %w", err))
	}
	return nil
}

// validateDatabaseSpec checks the name and the encoding of d.
func validateDatabaseSpec(d *pgv1.Database) error {
	if err := validateDatabaseName(d); err != nil {
		return err
	}
	if err := ValidIdentifier(encoding(d)); err != nil {
		return managed.InvalidSpec(fmt.Errorf("spec.encoding: %w", err))
	}
	return nil
}

// validateOwnerRole checks role, the role of the Role d's spec.owner
// names.
func validateOwnerRole(d *pgv1.Database, role string) error {
	if err := ValidName(role); err != nil {
		return managed.InvalidSpec(fmt.Errorf("the role of Role %s: %w", d.Spec.Owner, err))
	}
	return nil
}

// validateDatabase checks what of d reaches PostgreSQL: its name, its
// encoding, and the owner role once awaitRole has resolved it.
func validateDatabase(d *pgv1.Database) error {
	if err := validateDatabaseSpec(d); err != nil {
		return err
	}
	if o := d.Status.OwnerRole; o != "" {
		return validateOwnerRole(d, o)
	}
	return nil
}

// observedDatabase is a database as pg_database shows it.
type observedDatabase struct {
	owner    string // the owning role
	encoding string
	mark     string // from the owner mark, empty when there is none
	oid      uint32
	size     int64 // in bytes
}

// atProvider returns what the Database's status.atProvider reports of s.
func (s observedDatabase) atProvider() *pgv1.DatabaseObservation {
	return &pgv1.DatabaseObservation{OID: int64(s.oid), Owner: s.owner, Encoding: s.encoding, Size: approxSize(s.size)}
}

// approxSize returns n bytes in binary units, rounded down to two
// significant digits below 10 of a unit ("7.4Mi") and to whole units above
// ("12Gi", "512Mi"), so that the text changes only when the size changes
// by about one percent or more.
func approxSize(n int64) string {
	units := []string{"", "Ki", "Mi", "Gi", "Ti", "Pi"}
	v, i := float64(max(n, 0)), 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if v < 10 && i > 0 {
		return strconv.FormatFloat(math.Floor(v*10)/10, 'f', -1, 64) + units[i]
	}
	return strconv.FormatInt(int64(v), 10) + units[i]
}

// diff describes how s differs from what d asks for; the owner role is
// compared once it is resolved.
func (s observedDatabase) diff(d *pgv1.Database) []string {
	var diff []string
	if want := d.Status.OwnerRole; want != "" && s.owner != want {
		diff = append(diff, fmt.Sprintf("owner is %s, want %s", s.owner, want))
	}
	if !strings.EqualFold(s.encoding, encoding(d)) {
		diff = append(diff, fmt.Sprintf("encoding is %s, want %s", s.encoding, encoding(d)))
	}
	if m := markDiff(s.mark, d); m != "" {
		diff = append(diff, m)
	}
	return diff
}

// Observe reads the database's owner, encoding, owner mark and size from
// pg_database, and reports the database in status.atProvider.
func (c *databaseClient) Observe(ctx context.Context, d *pgv1.Database) (managed.Observation, error) {
	s, found, err := c.read(ctx, managed.ExternalName(d))
	if err != nil {
		return managed.Observation{}, err
	}
	return observeDatabase(d, s, found), nil
}

// ObserveBatch reads the databases of dbs, their owners, encodings, owner
// marks and sizes, in one query of pg_database, and reports each in its
// Database's status.atProvider, as Observe does.
func (c batchDatabaseClient) ObserveBatch(ctx context.Context, dbs []*pgv1.Database) ([]managed.Observation, error) {
	names := make([]string, len(dbs))
	for i, d := range dbs {
		names[i] = managed.ExternalName(d)
	}
	found, err := c.readAll(ctx, names)
	if err != nil {
		return nil, err
	}
	out := make([]managed.Observation, len(dbs))
	for i, d := range dbs {
		s, ok := found[names[i]]
		out[i] = observeDatabase(d, s, ok)
	}
	return out, nil
}

// observeDatabase returns the observation of d's database, s as read when
// found, and reports it in d's status.atProvider.
func observeDatabase(d *pgv1.Database, s observedDatabase, found bool) managed.Observation {
	if !found {
		d.Status.AtProvider = nil
		return managed.Observation{}
	}
	d.Status.AtProvider = s.atProvider()
	diff := s.diff(d)
	return managed.Observation{Exists: true, UpToDate: len(diff) == 0, Available: true, Diff: strings.Join(diff, "; "), Owner: s.mark}
}

// databaseColumns are the columns of pg_database, aliased d, that read and
// readAll read of a database, in the order scanDatabase scans them.
const databaseColumns = "d.oid, pg_catalog.pg_get_userbyid(d.datdba), pg_catalog.pg_encoding_to_char(d.encoding), " +
	"coalesce(pg_catalog.shobj_description(d.oid, 'pg_database'), ''), pg_catalog.pg_database_size(d.oid)"

// scanDatabase scans a row of databaseColumns, after the columns of
// before.
func scanDatabase(row pgx.Row, before ...any) (observedDatabase, error) {
	var s observedDatabase
	var comment string
	dest := append(slices.Clip(before), &s.oid, &s.owner, &s.encoding, &comment, &s.size)
	if err := row.Scan(dest...); err != nil {
		return observedDatabase{}, err
	}
	s.mark = ownerOf(comment)
	return s, nil
}

// read reads the database name; found is false when it does not exist.
func (c *databaseClient) read(ctx context.Context, name string) (s observedDatabase, found bool, err error) {
	s, err = scanDatabase(c.conn.QueryRow(ctx, "SELECT "+databaseColumns+" FROM pg_catalog.pg_database d WHERE d.datname = $1", name))
	if errors.Is(err, pgx.ErrNoRows) {
		return observedDatabase{}, false, nil
	}
	if err != nil {
		return observedDatabase{}, false, fmt.Errorf("reading database: %w", err)
	}
	return s, true, nil
}

// readAll reads the databases names in one query, by name; a database
// that does not exist is not in the result.
func (c *databaseClient) readAll(ctx context.Context, names []string) (map[string]observedDatabase, error) {
	rows, err := c.conn.Query(ctx, "SELECT d.datname, "+databaseColumns+" FROM pg_catalog.pg_database d WHERE d.datname = ANY($1)", names)
	if err != nil {
		return nil, fmt.Errorf("reading databases: %w", err)
	}
	defer rows.Close()
	found := make(map[string]observedDatabase, len(names))
	for rows.Next() {
		var name string
		s, err := scanDatabase(rows, &name)
		if err != nil {
			return nil, fmt.Errorf("reading databases: %w", err)
		}
		found[name] = s
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading databases: %w", err)
	}
	return found, nil
}

// Create creates the database from template0, owned by the owner role,
// and marks it as d's. CREATE DATABASE cannot share a transaction, so a
// mark that fails after it is logged and left to the next pass: Observe
// reports it missing, and Update, which the managed step calls for a
// database it created, writes it.
func (c *databaseClient) Create(ctx context.Context, d *pgv1.Database) (managed.Creation, error) {
	owner := d.Status.OwnerRole
	if owner == "" {
		return managed.Creation{}, errOwnerUnresolved
	}
	name := managed.ExternalName(d)
	sql := "CREATE DATABASE " + quote(name) + " WITH OWNER " + quote(owner) +
		" ENCODING " + literal(encoding(d)) + " TEMPLATE template0"
	switch d.Spec.Strategy {
	case "":
	case "WAL_LOG", "FILE_COPY":
		sql += " STRATEGY " + d.Spec.Strategy
	default:
		return managed.Creation{}, managed.InvalidSpec(fmt.Errorf("strategy %q is neither WAL_LOG nor FILE_COPY", d.Spec.Strategy))
	}
	if _, err := c.conn.Exec(ctx, sql); err != nil {
		return managed.Creation{}, createError("creating database", err)
	}
	if _, err := c.conn.Exec(ctx, markStatement("DATABASE", name, d)); err != nil {
		log.FromContext(ctx).Info("marking a new database failed, the next pass marks it", "externalName", name, "error", err.Error())
	}
	return managed.Creation{}, nil
}

// Update gives the database back to the owner role and marks it as d's,
// each only when it differs. The encoding is fixed at creation: a Database
// that asks for another one is an invalid spec. The managed step calls
// Update only for a database that is d's: made for d, or adopted because
// the user asked.
func (c *databaseClient) Update(ctx context.Context, d *pgv1.Database) (managed.UpdateResult, error) {
	name := managed.ExternalName(d)
	s, found, err := c.read(ctx, name)
	if err != nil || !found {
		return managed.UpdateResult{}, err
	}
	if !strings.EqualFold(s.encoding, encoding(d)) {
		return managed.UpdateResult{}, managed.InvalidSpec(fmt.Errorf("the database has encoding %s, and the encoding of a database cannot change", s.encoding))
	}
	want := d.Status.OwnerRole
	if want == "" {
		return managed.UpdateResult{}, errOwnerUnresolved
	}
	if s.owner != want {
		if _, err := c.conn.Exec(ctx, "ALTER DATABASE "+quote(name)+" OWNER TO "+quote(want)); err != nil {
			return managed.UpdateResult{}, fmt.Errorf("altering database owner: %w", err)
		}
	}
	if markDiff(s.mark, d) != "" {
		if _, err := c.conn.Exec(ctx, markStatement("DATABASE", name, d)); err != nil {
			return managed.UpdateResult{}, fmt.Errorf("marking database: %w", err)
		}
	}
	return managed.UpdateResult{}, nil
}

// Delete drops the database if it exists, ending its sessions.
func (c *databaseClient) Delete(ctx context.Context, d *pgv1.Database) error {
	if _, err := c.conn.Exec(ctx, "DROP DATABASE IF EXISTS "+quote(managed.ExternalName(d))+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("dropping database: %w", err)
	}
	return nil
}

// Disconnect closes the connection.
func (c *databaseClient) Disconnect(ctx context.Context) error { return c.conn.Close(ctx) }
