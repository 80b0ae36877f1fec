package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	pgv1 "github.com/bosunkit/bosun/examples/postgres/api/v1alpha1"
	"github.com/bosunkit/bosun/managed"
)

// Keys of the connection Secret of a Role.
const (
	// SecretUsername holds the role's name.
	SecretUsername = "username"
	// SecretPassword holds the password generated when the role was
	// created, or when the operator set a new one because the Secret
	// lacked it.
	SecretPassword = "password"
	// SecretHost holds the server's host.
	SecretHost = "host"
	// SecretPort holds the server's port.
	SecretPort = "port"
)

// roleClient is the managed.ExternalClient of one Role, over one connection.
type roleClient struct {
	conn *pgx.Conn
	host string
	port uint16
}

// batchRoleClient is a roleClient that also observes many roles in one
// query (managed.BatchObserver).
type batchRoleClient struct{ *roleClient }

var (
	_ managed.ExternalClient[*pgv1.Role]     = (*roleClient)(nil)
	_ managed.Disconnecter                   = (*roleClient)(nil)
	_ managed.CredentialRepairer[*pgv1.Role] = (*roleClient)(nil)
	_ managed.BatchObserver[*pgv1.Role]      = batchRoleClient{}
)

// connectionLimit returns the connection limit the spec asks for, -1 for
// none.
func connectionLimit(r *pgv1.Role) int32 {
	if r.Spec.ConnectionLimit == nil {
		return -1
	}
	return *r.Spec.ConnectionLimit
}

// roleOptions returns the role options of the spec in SQL.
func roleOptions(r *pgv1.Role) string {
	login := "NOLOGIN"
	if r.Spec.Login {
		login = "LOGIN"
	}
	return login + " CONNECTION LIMIT " + strconv.FormatInt(int64(connectionLimit(r)), 10)
}

// validateRoleName checks the name of the role r stands for.
func validateRoleName(r *pgv1.Role) error {
	if err := ValidName(nameOf(r)); err != nil {
		return managed.InvalidSpec(fmt.Errorf("role name: %w", err))
	}
	return nil
}

// validateRole checks what of r reaches PostgreSQL.
func validateRole(r *pgv1.Role) error {
	if err := validateRoleName(r); err != nil {
		return err
	}
	if l := connectionLimit(r); l < -1 {
		return managed.InvalidSpec(fmt.Errorf("spec.connectionLimit is %d, want -1 or more", l))
	}
	return nil
}

// details returns the connection details every observation publishes.
func (c *roleClient) details(name string) managed.ConnectionDetails {
	return managed.ConnectionDetails{
		SecretUsername: []byte(name),
		SecretHost:     []byte(c.host),
		SecretPort:     []byte(strconv.Itoa(int(c.port))),
	}
}

// observedRole is a role as pg_roles shows it.
type observedRole struct {
	login bool
	limit int32
	owner string // from the owner mark, empty when there is none
	// at is what the Role's status.atProvider reports.
	at pgv1.RoleObservation
}

// roleColumns are the columns of pg_roles, aliased r, that read and
// readAll read of a role, in the order scanRole scans them.
const roleColumns = "r.oid, r.rolcanlogin, r.rolconnlimit, r.rolsuper, r.rolcreatedb, r.rolcreaterole, r.rolinherit, r.rolreplication, r.rolbypassrls, " +
	"coalesce(pg_catalog.shobj_description(r.oid, 'pg_authid'), '')"

// scanRole scans a row of roleColumns, after the columns of before.
func scanRole(row pgx.Row, before ...any) (observedRole, error) {
	var s observedRole
	var comment string
	var oid uint32
	a := &s.at
	dest := append(slices.Clip(before), &oid, &s.login, &s.limit, &a.Superuser, &a.CreateDB, &a.CreateRole, &a.Inherit, &a.Replication, &a.BypassRLS, &comment)
	if err := row.Scan(dest...); err != nil {
		return observedRole{}, err
	}
	a.OID, a.Login, a.ConnectionLimit = int64(oid), s.login, s.limit
	s.owner = ownerOf(comment)
	return s, nil
}

// read reads the role name; found is false when it does not exist.
func (c *roleClient) read(ctx context.Context, name string) (s observedRole, found bool, err error) {
	s, err = scanRole(c.conn.QueryRow(ctx, "SELECT "+roleColumns+" FROM pg_catalog.pg_roles r WHERE r.rolname = $1", name))
	if errors.Is(err, pgx.ErrNoRows) {
		return observedRole{}, false, nil
	}
	if err != nil {
		return observedRole{}, false, fmt.Errorf("reading role: %w", err)
	}
	return s, true, nil
}

// readAll reads the roles names in one query, by name; a role that does
// not exist is not in the result.
func (c *roleClient) readAll(ctx context.Context, names []string) (map[string]observedRole, error) {
	rows, err := c.conn.Query(ctx, "SELECT r.rolname, "+roleColumns+" FROM pg_catalog.pg_roles r WHERE r.rolname = ANY($1)", names)
	if err != nil {
		return nil, fmt.Errorf("reading roles: %w", err)
	}
	defer rows.Close()
	found := make(map[string]observedRole, len(names))
	for rows.Next() {
		var name string
		s, err := scanRole(rows, &name)
		if err != nil {
			return nil, fmt.Errorf("reading roles: %w", err)
		}
		found[name] = s
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading roles: %w", err)
	}
	return found, nil
}

// optionsDiff describes how s differs from the options r asks for.
func optionsDiff(s observedRole, r *pgv1.Role) []string {
	var diff []string
	if s.login != r.Spec.Login {
		diff = append(diff, fmt.Sprintf("login is %t, want %t", s.login, r.Spec.Login))
	}
	if want := connectionLimit(r); s.limit != want {
		diff = append(diff, fmt.Sprintf("connection limit is %d, want %d", s.limit, want))
	}
	return diff
}

// Observe reads the role and its owner mark from pg_roles, and reports
// the role in status.atProvider.
func (c *roleClient) Observe(ctx context.Context, r *pgv1.Role) (managed.Observation, error) {
	name := managed.ExternalName(r)
	s, found, err := c.read(ctx, name)
	if err != nil {
		return managed.Observation{}, err
	}
	return c.observation(r, name, s, found), nil
}

// ObserveBatch reads the roles of roles and their owner marks in one
// query of pg_roles, and reports each in its Role's status.atProvider, as
// Observe does.
func (c batchRoleClient) ObserveBatch(ctx context.Context, roles []*pgv1.Role) ([]managed.Observation, error) {
	names := make([]string, len(roles))
	for i, r := range roles {
		names[i] = managed.ExternalName(r)
	}
	found, err := c.readAll(ctx, names)
	if err != nil {
		return nil, err
	}
	out := make([]managed.Observation, len(roles))
	for i, r := range roles {
		s, ok := found[names[i]]
		out[i] = c.observation(r, names[i], s, ok)
	}
	return out, nil
}

// observation returns the observation of the role name, s as read when
// found, and reports it in r's status.atProvider.
func (c *roleClient) observation(r *pgv1.Role, name string, s observedRole, found bool) managed.Observation {
	if !found {
		r.Status.AtProvider = nil
		return managed.Observation{}
	}
	r.Status.AtProvider = &s.at
	diff := optionsDiff(s, r)
	if d := markDiff(s.owner, r); d != "" {
		diff = append(diff, d)
	}
	return managed.Observation{
		Exists:            true,
		UpToDate:          len(diff) == 0,
		Available:         true,
		ConnectionDetails: c.details(name),
		Diff:              strings.Join(diff, "; "),
		Owner:             s.owner,
	}
}

// Create creates the role with a new password, of which PostgreSQL gets
// only the SCRAM verifier, and marks it as r's, in one transaction.
func (c *roleClient) Create(ctx context.Context, r *pgv1.Role) (managed.Creation, error) {
	name := managed.ExternalName(r)
	password, verifier, err := newCredentials()
	if err != nil {
		return managed.Creation{}, err
	}
	err = pgx.BeginFunc(ctx, c.conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "CREATE ROLE "+quote(name)+" WITH "+roleOptions(r)+" PASSWORD "+literal(verifier)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, markStatement("ROLE", name, r))
		return err
	})
	if err != nil {
		return managed.Creation{}, createError("creating role", err)
	}
	d := c.details(name)
	d[SecretPassword] = []byte(password)
	return managed.Creation{ConnectionDetails: d}, nil
}

// Update sets the role's options to the spec's and marks it as r's, each
// only when it differs. The managed step calls it only for a role that is
// r's: made for r, or adopted because the user asked.
func (c *roleClient) Update(ctx context.Context, r *pgv1.Role) (managed.UpdateResult, error) {
	name := managed.ExternalName(r)
	s, found, err := c.read(ctx, name)
	if err != nil || !found {
		return managed.UpdateResult{}, err
	}
	if len(optionsDiff(s, r)) > 0 {
		if _, err := c.conn.Exec(ctx, "ALTER ROLE "+quote(name)+" WITH "+roleOptions(r)); err != nil {
			return managed.UpdateResult{}, fmt.Errorf("altering role: %w", err)
		}
	}
	if markDiff(s.owner, r) != "" {
		if _, err := c.conn.Exec(ctx, markStatement("ROLE", name, r)); err != nil {
			return managed.UpdateResult{}, fmt.Errorf("marking role: %w", err)
		}
	}
	return managed.UpdateResult{}, nil
}

// Delete drops the role if it exists.
func (c *roleClient) Delete(ctx context.Context, r *pgv1.Role) error {
	if _, err := c.conn.Exec(ctx, "DROP ROLE IF EXISTS "+quote(managed.ExternalName(r))); err != nil {
		return fmt.Errorf("dropping role: %w", err)
	}
	return nil
}

// CredentialKeys names the key only Create and RepairCredentials know:
// the password.
func (c *roleClient) CredentialKeys() []string { return []string{SecretPassword} }

// RepairCredentials gives the role a new password, of which PostgreSQL
// gets only the SCRAM verifier, and returns it with the other connection
// details. The managed step calls it when the connection Secret lacks the
// password: deleted by someone, or never written because the operator
// stopped between Create and publishing it.
func (c *roleClient) RepairCredentials(ctx context.Context, r *pgv1.Role) (managed.ConnectionDetails, error) {
	name := managed.ExternalName(r)
	password, verifier, err := newCredentials()
	if err != nil {
		return nil, err
	}
	if _, err := c.conn.Exec(ctx, "ALTER ROLE "+quote(name)+" PASSWORD "+literal(verifier)); err != nil {
		return nil, fmt.Errorf("setting a new password: %w", err)
	}
	d := c.details(name)
	d[SecretPassword] = []byte(password)
	return d, nil
}

// Disconnect closes the connection.
func (c *roleClient) Disconnect(ctx context.Context) error { return c.conn.Close(ctx) }
