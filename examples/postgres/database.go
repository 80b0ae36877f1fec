package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	pgv1 "github.com/bosunkit/bosun/examples/postgres/api/v1alpha1"
	"github.com/bosunkit/bosun/managed"
)

// DefaultEncoding is the encoding of a Database whose spec names none.
const DefaultEncoding = "UTF8"

// databaseClient is the managed.Client of one Database, over one
// connection.
type databaseClient struct {
	conn *pgx.Conn
}

var (
	_ managed.Client[*pgv1.Database] = (*databaseClient)(nil)
	_ managed.Disconnecter           = (*databaseClient)(nil)
)

// encoding returns the encoding the spec asks for.
func encoding(d *pgv1.Database) string {
	if d.Spec.Encoding == "" {
		return DefaultEncoding
	}
	return d.Spec.Encoding
}

// validateDatabase checks the names of d that reach PostgreSQL.
func validateDatabase(d *pgv1.Database) error {
	if err := ValidIdentifier(nameOf(d)); err != nil {
		return managed.InvalidSpec(fmt.Errorf("database name: %w", err))
	}
	if err := ValidIdentifier(SQLName(d.Spec.Owner)); err != nil {
		return managed.InvalidSpec(fmt.Errorf("spec.owner: %w", err))
	}
	if err := ValidIdentifier(encoding(d)); err != nil {
		return managed.InvalidSpec(fmt.Errorf("spec.encoding: %w", err))
	}
	return nil
}

// Observe reads the database's owner and encoding from pg_database.
func (c *databaseClient) Observe(ctx context.Context, d *pgv1.Database) (managed.Observation, error) {
	owner, enc, found, err := c.read(ctx, managed.ExternalName(d))
	if err != nil || !found {
		return managed.Observation{}, err
	}
	var diff []string
	if want := SQLName(d.Spec.Owner); owner != want {
		diff = append(diff, fmt.Sprintf("owner is %s, want %s", owner, want))
	}
	if !strings.EqualFold(enc, encoding(d)) {
		diff = append(diff, fmt.Sprintf("encoding is %s, want %s", enc, encoding(d)))
	}
	return managed.Observation{Exists: true, UpToDate: len(diff) == 0, Available: true, Diff: strings.Join(diff, "; ")}, nil
}

func (c *databaseClient) read(ctx context.Context, name string) (owner, enc string, found bool, err error) {
	err = c.conn.QueryRow(ctx,
		"SELECT pg_catalog.pg_get_userbyid(datdba), pg_catalog.pg_encoding_to_char(encoding) FROM pg_catalog.pg_database WHERE datname = $1",
		name).Scan(&owner, &enc)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, fmt.Errorf("reading database: %w", err)
	}
	return owner, enc, true, nil
}

// Create creates the database from template0, owned by the spec's owner.
func (c *databaseClient) Create(ctx context.Context, d *pgv1.Database) (managed.Creation, error) {
	sql := "CREATE DATABASE " + quote(managed.ExternalName(d)) + " WITH OWNER " + quote(SQLName(d.Spec.Owner)) +
		" ENCODING " + literal(encoding(d)) + " TEMPLATE template0"
	if _, err := c.conn.Exec(ctx, sql); err != nil {
		return managed.Creation{}, fmt.Errorf("creating database: %w", err)
	}
	return managed.Creation{}, nil
}

// Update gives the database back to the spec's owner. The encoding is
// fixed at creation: a Database that asks for another one is an invalid
// spec.
func (c *databaseClient) Update(ctx context.Context, d *pgv1.Database) (managed.Update, error) {
	name := managed.ExternalName(d)
	owner, enc, found, err := c.read(ctx, name)
	if err != nil || !found {
		return managed.Update{}, err
	}
	if !strings.EqualFold(enc, encoding(d)) {
		return managed.Update{}, managed.InvalidSpec(fmt.Errorf("the database has encoding %s, and the encoding of a database cannot change", enc))
	}
	if want := SQLName(d.Spec.Owner); owner != want {
		if _, err := c.conn.Exec(ctx, "ALTER DATABASE "+quote(name)+" OWNER TO "+quote(want)); err != nil {
			return managed.Update{}, fmt.Errorf("altering database owner: %w", err)
		}
	}
	return managed.Update{}, nil
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
