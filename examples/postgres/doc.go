// Package postgres is the bosun example operator for PostgreSQL: it manages
// roles and databases of one PostgreSQL server through the managed step.
//
// A Role (postgres.bosun.dev/v1alpha1) becomes a role named after it
// (SQLName: dashes become underscores),
// with LOGIN or NOLOGIN and a connection limit. When the role is created it
// gets a random password, which is published with the user name, host and
// port in the Secret the Role's spec names; PostgreSQL receives only its
// SCRAM-SHA-256 verifier, so the password itself is in no statement, log
// line, event or error.
//
// A Database becomes a database named after it, owned by the role of the
// Role that spec.owner names and created with spec.encoding. It waits, Ready False
// with reason WaitingForRole, until that Role exists and is Ready. An owner
// changed behind the operator's back is changed back at the next poll.
//
// Names from the API, once dashes are replaced, must be PostgreSQL identifiers the operator can use as
// they are: 1 to 63 bytes of ASCII letters, digits and underscores, not
// starting with a digit. Other names leave the object Synced False with
// reason InvalidSpec, and nothing is sent to the server. Every identifier
// is quoted in SQL all the same.
//
// SetupRoleWithManager and SetupDatabaseWithManager register the two
// controllers; Options carries the server's DSN.
package postgres
