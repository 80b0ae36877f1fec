// Package postgres is the bosun example operator for PostgreSQL: it manages
// roles and databases of one PostgreSQL server through the managed step.
//
// A Role (postgres.bosun.dev/v1alpha1) becomes a role with LOGIN or
// NOLOGIN and a connection limit. When the role is created it gets a
// random password, which is published with the user name, host and port in
// the Secret the Role's spec names; PostgreSQL receives only its
// SCRAM-SHA-256 verifier, so the password itself is in no statement, log
// line, event or error.
//
// A Database becomes a database owned by the role of the Role that
// spec.owner names, created with spec.encoding. The reference is resolved
// by package ref: the Database waits, RoleReady and Ready False with reason
// ReferenceNotFound or ReferenceNotReady, until that Role exists, is Ready
// and has recorded its role's name, and a change of the Role wakes it; the role is the one the Role recorded (status.ownerRole
// shows it), never one computed from spec.owner, so a Database can only be
// owned by a role that a Role of its own namespace stands for. An owner
// changed behind the operator's back is changed back at the next poll.
//
// # Names
//
// One server serves every namespace, so the name of a role or database
// says which namespace it belongs to: SQLName of the object's namespace
// and name, "<namespace>__<name>" with dashes made underscores when that is
// a plain identifier of at most 63 bytes (a Database "orders" in namespace
// "shop-a" is the database shop_a__orders), and otherwise a readable
// prefix and a hash of namespace and name. Objects of the same name in two
// namespaces get two roles or two databases; an object made again under
// the same namespace and name gets the same name back. Every generated
// name is a valid identifier that PostgreSQL does not reserve. The managed
// step records the name in the annotation bosun.dev/external-name with its
// first create (or, under observe-only management, once it finds the
// resource), and it never changes.
//
// # Ownership
//
// The operator marks every role and database it creates with the UID of
// its object, as the comment "bosun-owner:<uid>" (COMMENT ON ROLE, COMMENT
// ON DATABASE; a role gets it in the transaction that creates it), and
// Observe reports the mark to the managed step (Observation.Owner). The
// step never alters, drops or publishes credentials of a role or database
// marked for another object (Synced and Ready False with reason
// ExternalResourceConflict), nor of an unmarked one it did not create
// (reason managed.ReasonAdoptionNotGranted), and deleting the object
// leaves such a resource in place.
//
// A user who may create Roles in a namespace can write any annotation on
// them, so naming an existing role in bosun.dev/external-name adopts it
// only where an administrator has granted adoption to the namespace:
//
//	kubectl annotate namespace legacy-apps bosun.dev/adopt-external=true
//
// There, setting the annotation to the name of an existing, unmarked role
// or database adopts it. The operator then brings it in line with the
// spec and marks it (Observe reports the mark missing, and Update writes
// it), and deleting the object drops it like one it created.
// A resource marked for another object, even one that no longer exists, is
// never adopted: clear its comment first. Adopting a role with
// spec.connectionSecretName gives it a new password, since the old one
// cannot be read back. Under observe-only management (annotation
// bosun.dev/management-policies: observe) nothing is marked, altered or
// dropped; Synced is True once the role or database is observed, and
// False with reason ExternalNotFound while it does not exist; observing a
// role or database made outside the operator needs the grant as well.
// Elsewhere an object only ever stands for a role or database the
// operator created for it: under the name of the section above, or under
// a name set by hand that nothing held yet.
//
// The mark is a comment because roles and databases have no other
// free-form property without an extension (security labels need a label
// provider); a user's comment on an adopted resource is replaced by it.
//
// # Refused names
//
// A name set by hand in the annotation must be a plain identifier the
// operator can use as it is: 1 to 63 bytes of ASCII letters, digits and
// underscores, not starting with a digit (ValidIdentifier); and not one
// PostgreSQL keeps for itself: postgres, template0, template1, public,
// none, current_user, current_role, session_user, or anything starting
// with pg_ (Reserved). Other names leave the object Synced and Ready False
// with reason InvalidSpec, and nothing is sent to the server, not even when
// the object is deleted. spec.owner must be a Kubernetes object name; the
// API server refuses other values. Every identifier is quoted in SQL all
// the same.
//
// # Credentials
//
// A Role's Client is a managed.CredentialRepairer: when the role exists
// and its connection Secret lacks the password (someone deleted the
// Secret, or the operator stopped between CREATE ROLE and publishing the
// password), the managed step has it set a new password, with ALTER ROLE
// and a SCRAM verifier like Create, and publishes it. Until then the Role
// is not Ready, so a Ready Role's Secret always holds a password that logs
// in.
//
// # Status
//
// Besides its conditions, each object shows what the operator observed
// and did. status.atProvider is the role or database as PostgreSQL has
// it, refreshed at every poll under every management policy, observe-only
// included: a Role's OID and attributes (login, connection limit,
// superuser, createDB, createRole, inherit, replication, bypassRLS), a
// Database's OID, owner, encoding and size. The size is rounded to two
// significant digits ("7.2Mi"), so that a database in use writes its
// status when its size moves by about one percent, not at every poll: a
// converged, idle object costs no write. status.changes is the managed
// step's change log: the last creates, updates, drops and new passwords,
// with the controller, time, generation and outcome of each.
//
// # Polls, batches and notifications
//
// The managed steps poll every Ready Role and Database (every minute by
// default), each poll a connection and a query of its own. With
// Options.BatchObserve the clients are managed.BatchObservers: the Roles
// whose polls are due together are observed with one query of pg_roles
// (WHERE rolname = ANY($1)), the Databases with one of pg_database, and a
// poll that finds nothing to do costs no connection of its own; a role or
// database a batch finds changed is read again on its own before the
// operator alters it. The operator's command turns it on
// (--postgres-batch-observe).
//
// PostgreSQL tells nobody when a role or database changes: event
// triggers do not fire for the objects shared by the whole server (roles,
// databases, tablespaces), and the system catalogs take no triggers. So
// the operator cannot learn of a change by itself sooner than its next
// poll. With Options.Listen (--postgres-listen) it LISTENs on RoleChannel
// and DatabaseChannel, and a notification that names a role or database,
// sent by whoever changed it in the same transaction, makes the operator
// observe and repair it at once (ListenRoles).
//
// SetupRoleWithManager and SetupDatabaseWithManager register the two
// controllers; Options carries the server's DSN.
package postgres
