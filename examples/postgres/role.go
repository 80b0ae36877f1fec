package postgres

import (
	"context"
	"errors"
	"fmt"
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
	// created.
	SecretPassword = "password"
	// SecretHost holds the server's host.
	SecretHost = "host"
	// SecretPort holds the server's port.
	SecretPort = "port"
)

// roleClient is the managed.Client of one Role, over one connection.
type roleClient struct {
	conn *pgx.Conn
	host string
	port uint16
}

var (
	_ managed.Client[*pgv1.Role] = (*roleClient)(nil)
	_ managed.Disconnecter       = (*roleClient)(nil)
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

// validateRole checks the names of r that reach PostgreSQL.
func validateRole(r *pgv1.Role) error {
	if err := ValidIdentifier(nameOf(r)); err != nil {
		return managed.InvalidSpec(fmt.Errorf("role name: %w", err))
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

// Observe reads the role from pg_roles.
func (c *roleClient) Observe(ctx context.Context, r *pgv1.Role) (managed.Observation, error) {
	name := managed.ExternalName(r)
	var login bool
	var limit int32
	err := c.conn.QueryRow(ctx, "SELECT rolcanlogin, rolconnlimit FROM pg_catalog.pg_roles WHERE rolname = $1", name).Scan(&login, &limit)
	if errors.Is(err, pgx.ErrNoRows) {
		return managed.Observation{}, nil
	}
	if err != nil {
		return managed.Observation{}, fmt.Errorf("reading role: %w", err)
	}
	var diff []string
	if login != r.Spec.Login {
		diff = append(diff, fmt.Sprintf("login is %t, want %t", login, r.Spec.Login))
	}
	if want := connectionLimit(r); limit != want {
		diff = append(diff, fmt.Sprintf("connection limit is %d, want %d", limit, want))
	}
	return managed.Observation{
		Exists:            true,
		UpToDate:          len(diff) == 0,
		Available:         true,
		ConnectionDetails: c.details(name),
		Diff:              strings.Join(diff, "; "),
	}, nil
}

// Create creates the role with a new password, of which PostgreSQL gets
// only the SCRAM verifier.
func (c *roleClient) Create(ctx context.Context, r *pgv1.Role) (managed.Creation, error) {
	name := managed.ExternalName(r)
	password, err := newPassword()
	if err != nil {
		return managed.Creation{}, err
	}
	verifier, err := scramVerifier(password)
	if err != nil {
		return managed.Creation{}, err
	}
	if _, err := c.conn.Exec(ctx, "CREATE ROLE "+quote(name)+" WITH "+roleOptions(r)+" PASSWORD "+literal(verifier)); err != nil {
		return managed.Creation{}, fmt.Errorf("creating role: %w", err)
	}
	d := c.details(name)
	d[SecretPassword] = []byte(password)
	return managed.Creation{ConnectionDetails: d}, nil
}

// Update sets the role's options to the spec's.
func (c *roleClient) Update(ctx context.Context, r *pgv1.Role) (managed.Update, error) {
	if _, err := c.conn.Exec(ctx, "ALTER ROLE "+quote(managed.ExternalName(r))+" WITH "+roleOptions(r)); err != nil {
		return managed.Update{}, fmt.Errorf("altering role: %w", err)
	}
	return managed.Update{}, nil
}

// Delete drops the role if it exists.
func (c *roleClient) Delete(ctx context.Context, r *pgv1.Role) error {
	if _, err := c.conn.Exec(ctx, "DROP ROLE IF EXISTS "+quote(managed.ExternalName(r))); err != nil {
		return fmt.Errorf("dropping role: %w", err)
	}
	return nil
}

// Disconnect closes the connection.
func (c *roleClient) Disconnect(ctx context.Context) error { return c.conn.Close(ctx) }
