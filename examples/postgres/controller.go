package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	pgv1 "github.com/bosunkit/bosun/examples/postgres/api/v1alpha1"
	"github.com/bosunkit/bosun/managed"
	"github.com/bosunkit/bosun/ref"
)

// Names of the controllers in logs, metrics and events, and their
// finalizers.
const (
	// RoleControllerName is the name of the Role controller.
	RoleControllerName = "postgres-role"
	// DatabaseControllerName is the name of the Database controller.
	DatabaseControllerName = "postgres-database"
	// RoleFinalizer keeps a Role until its PostgreSQL role is dropped.
	RoleFinalizer = "postgres.bosun.dev/role"
	// DatabaseFinalizer keeps a Database until its PostgreSQL database is
	// dropped.
	DatabaseFinalizer = "postgres.bosun.dev/database"
)

// Names of the managed steps, which label their metrics
// ("bosun_managed_drift_corrections_total" and the others) and the engine's.
const (
	// RoleStepName is the name of the Role controller's managed step.
	RoleStepName = "role"
	// DatabaseStepName is the name of the Database controller's managed
	// step.
	DatabaseStepName = "database"
)

// ConditionRoleReady is the condition type by which a Database reports
// whether its owner Role is Ready: False with "ReferenceNotFound" or
// "ReferenceNotReady" until it is, which the engine copies into Ready.
const ConditionRoleReady = "RoleReady"

// DefaultWaitInterval is how often a Database waiting for its Role looks
// again, besides being woken by changes of Roles.
const DefaultWaitInterval = 5 * time.Second

// Options configures the controllers.
type Options struct {
	// DSN is the connection string of the PostgreSQL server, as pgx
	// understands it, for a superuser, or a role with CREATEROLE and
	// CREATEDB that may comment on the roles it makes and is a member of
	// those that own databases (to create them with that owner and
	// comment on them). It is never logged.
	DSN string
	// Managed are extra options of the managed steps, after the
	// operator's own (the external name is SQLName of the object's
	// namespace and name; the Role's connection Secret is
	// spec.connectionSecretName).
	Managed []managed.Option
	// WaitInterval is how often a Database waiting for its Role looks
	// again; zero means DefaultWaitInterval.
	WaitInterval time.Duration
	// BatchObserve makes the controllers' clients managed.BatchObservers:
	// the Roles (the Databases) whose polls are due together are observed
	// with one query of pg_roles (of pg_database), rather than each with a
	// connection and a query of its own.
	BatchObserve bool
	// Listen makes the controllers LISTEN on RoleChannel and
	// DatabaseChannel, and observe at once the role or database a
	// notification names (see ListenRoles).
	Listen bool
}

// ErrNoDSN is returned by the setup functions when Options.DSN is empty.
var ErrNoDSN = errors.New("postgres: Options.DSN is empty")

// connect opens a connection to the server of dsn, with an error that
// leaves the DSN out.
func connect(ctx context.Context, dsn string) (*pgx.Conn, *pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, nil, errors.New("parsing the DSN failed")
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to postgresql at %s:%d: %w", cfg.Host, cfg.Port, err)
	}
	return conn, cfg, nil
}

// RoleConnector returns the connector of the Role controller: it validates
// the Role's names, then opens a connection to dsn, closed at the end of the
// pass. A Role with an invalid or reserved name never causes a connection;
// when it is deleted, it is let go at once, since nothing was ever made
// under that name.
func RoleConnector(dsn string) managed.Connector[*pgv1.Role] { return roleConnector(dsn, false) }

// roleConnector is RoleConnector, whose clients are also
// managed.BatchObservers with batch: one query of pg_roles observes the
// roles of many Roles.
func roleConnector(dsn string, batch bool) managed.Connector[*pgv1.Role] {
	return managed.ConnectorFunc[*pgv1.Role](func(ctx context.Context, r *pgv1.Role) (managed.ExternalClient[*pgv1.Role], error) {
		if deleting(r) {
			if err := validateRoleName(r); err != nil {
				return refused[*pgv1.Role](), nil
			}
		} else if err := validateRole(r); err != nil {
			return nil, err
		}
		conn, cfg, err := connect(ctx, dsn)
		if err != nil {
			return nil, err
		}
		c := &roleClient{conn: conn, host: cfg.Host, port: cfg.Port}
		if batch {
			return batchRoleClient{c}, nil
		}
		return c, nil
	})
}

// DatabaseConnector returns the connector of the Database controller, like
// RoleConnector. Its clients take the owner role from status.ownerRole,
// which the Database controller's first step resolves.
func DatabaseConnector(dsn string) managed.Connector[*pgv1.Database] {
	return databaseConnector(dsn, false)
}

// databaseConnector is DatabaseConnector, whose clients are also
// managed.BatchObservers with batch: one query of pg_database observes
// the databases of many Databases.
func databaseConnector(dsn string, batch bool) managed.Connector[*pgv1.Database] {
	return managed.ConnectorFunc[*pgv1.Database](func(ctx context.Context, d *pgv1.Database) (managed.ExternalClient[*pgv1.Database], error) {
		if deleting(d) {
			if err := validateDatabaseName(d); err != nil {
				return refused[*pgv1.Database](), nil
			}
		} else if err := validateDatabase(d); err != nil {
			return nil, err
		}
		conn, _, err := connect(ctx, dsn)
		if err != nil {
			return nil, err
		}
		if batch {
			return batchDatabaseClient{&databaseClient{conn: conn}}, nil
		}
		return &databaseClient{conn: conn}, nil
	})
}

// NewRoleReconciler returns the engine reconciler for Roles: one managed
// step, the PostgreSQL role named SQLName of the Role's namespace and
// name, with its connection details in the Secret
// spec.connectionSecretName names.
func NewRoleReconciler(opts Options) *bosun.Reconciler[*pgv1.Role] {
	return newRoleReconciler(roleConnector(opts.DSN, opts.BatchObserve), opts)
}

// newRoleReconciler is NewRoleReconciler with another connector, for tests
// that put a wrapper around the real one.
func newRoleReconciler(c managed.Connector[*pgv1.Role], opts Options) *bosun.Reconciler[*pgv1.Role] {
	mopts := append([]managed.Option{
		managed.WithName(RoleStepName),
		managed.WithExternalName(externalName),
		managed.WithConnectionSecret(func(r *pgv1.Role) string { return r.Spec.ConnectionSecretName }),
	}, opts.Managed...)
	return &bosun.Reconciler[*pgv1.Role]{
		Name:      RoleControllerName,
		Steps:     []bosun.Step[*pgv1.Role]{managed.NewStep(c, mopts...)},
		Finalizer: RoleFinalizer,
	}
}

// NewDatabaseReconciler returns the engine reconciler for Databases: a step
// that waits for the owner Role and resolves its role, then a managed step
// for the PostgreSQL database named SQLName of the Database's namespace
// and name.
func NewDatabaseReconciler(opts Options) *bosun.Reconciler[*pgv1.Database] {
	wait := opts.WaitInterval
	if wait <= 0 {
		wait = DefaultWaitInterval
	}
	mopts := append([]managed.Option{managed.WithName(DatabaseStepName), managed.WithExternalName(externalName)}, opts.Managed...)
	owner := ownerRole(wait)
	return &bosun.Reconciler[*pgv1.Database]{
		Name: DatabaseControllerName,
		Steps: []bosun.Step[*pgv1.Database]{
			checkSpec(),
			owner,
			recordOwner(owner),
			managed.NewStep(databaseConnector(opts.DSN, opts.BatchObserve), mopts...),
		},
		Finalizer: DatabaseFinalizer,
	}
}

// SetupRoleWithManager registers the Role controller with mgr; its managed
// step watches the connection Secrets. The manager's scheme must hold the
// types of AddToScheme. With Options.Listen it also listens for
// notifications of changed roles (ListenRoles).
func SetupRoleWithManager(mgr ctrl.Manager, opts Options) error {
	if opts.DSN == "" {
		return ErrNoDSN
	}
	r := NewRoleReconciler(opts)
	if err := bosun.ControllerManagedBy[*pgv1.Role](mgr).Complete(r); err != nil {
		return fmt.Errorf("postgres: role controller: %w", err)
	}
	if opts.Listen {
		return ListenRoles(mgr, r, opts.DSN)
	}
	return nil
}

// SetupDatabaseWithManager registers the Database controller with mgr; its
// owner Role step makes a change of a Role wake the Databases it owns.
// With Options.Listen it also listens for notifications of changed
// databases (ListenDatabases).
func SetupDatabaseWithManager(mgr ctrl.Manager, opts Options) error {
	if opts.DSN == "" {
		return ErrNoDSN
	}
	r := NewDatabaseReconciler(opts)
	if err := bosun.ControllerManagedBy[*pgv1.Database](mgr).Complete(r); err != nil {
		return fmt.Errorf("postgres: database controller: %w", err)
	}
	if opts.Listen {
		return ListenDatabases(mgr, r, opts.DSN)
	}
	return nil
}

// What the controller may do, from which controller-gen writes
// config/rbac/role.yaml.
//
// +kubebuilder:rbac:groups=postgres.bosun.dev,resources=roles,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get,resourceNames=roles.postgres.bosun.dev
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get,resourceNames=databases.postgres.bosun.dev
// +kubebuilder:rbac:groups=postgres.bosun.dev,resources=roles/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=postgres.bosun.dev,resources=roles/finalizers,verbs=update
// +kubebuilder:rbac:groups=postgres.bosun.dev,resources=databases,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=postgres.bosun.dev,resources=databases/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers both controllers with mgr.
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	if err := SetupRoleWithManager(mgr, opts); err != nil {
		return err
	}
	return SetupDatabaseWithManager(mgr, opts)
}

// ownerRole resolves the Database's spec.owner to its Role through package
// ref: it owns ConditionRoleReady, False with "ReferenceNotFound" or
// "ReferenceNotReady" (copied into Ready) while the Role is missing, not
// Ready for its generation or has no PostgreSQL role recorded yet, and
// ends the pass until a change of the Role (or the recheck interval)
// brings the next one. It sets up the field index and the watch of Roles
// that wake the Databases a Role owns.
func ownerRole(recheck time.Duration) *ref.Step[*pgv1.Database, *pgv1.Role] {
	return ref.Resolve[*pgv1.Database, *pgv1.Role]("owner",
		func(d *pgv1.Database) ref.Reference { return ref.ByName(d.Spec.Owner) },
		ref.WithCondition(ConditionRoleReady),
		ref.WithRecheck(recheck),
		ref.ReadyWhen(func(r *pgv1.Role) (bool, string) {
			switch {
			case !isReady(r.Status.Conditions):
				return false, "its Ready condition is not True"
			case r.Status.ObservedGeneration != r.Generation || managed.ExternalName(r) == "":
				return false, "it has not been reconciled yet"
			}
			return true, ""
		}))
}

// checkSpec refuses an invalid spec at once, in Synced (with reason
// InvalidSpec, as the managed step would), without waiting for the owner
// Role first.
func checkSpec() bosun.StepFunc[*pgv1.Database] {
	return bosun.NewStep("spec", func(_ context.Context, req *bosun.Pass[*pgv1.Database]) (ctrl.Result, error) {
		if err := validateDatabaseSpec(req.Object); err != nil {
			return ctrl.Result{}, &conditions.Error{Type: "Synced", Reason: managed.ReasonInvalidSpec, Severity: conditions.SeverityError, Err: err}
		}
		return ctrl.Result{}, nil
	})
}

// recordOwner records in status.ownerRole the PostgreSQL role of the Role
// owner resolved, for the managed step; a Role that stands for a reserved
// role is refused in ConditionRoleReady. The role is the one the Role
// recorded, not one computed from spec.owner: a Role may stand for a role
// adopted under another name.
func recordOwner(owner *ref.Step[*pgv1.Database, *pgv1.Role]) bosun.StepFunc[*pgv1.Database] {
	return bosun.NewStep("owner-role", func(_ context.Context, req *bosun.Pass[*pgv1.Database]) (ctrl.Result, error) {
		role, ok := owner.Resolved(req)
		if !ok {
			return ctrl.Result{}, errors.New("the owner Role was not resolved")
		}
		name := managed.ExternalName(role)
		if err := validateOwnerRole(req.Object, name); err != nil {
			return ctrl.Result{}, &conditions.Error{Type: ConditionRoleReady, Reason: managed.ReasonInvalidSpec, Severity: conditions.SeverityError, Err: err}
		}
		req.Object.Status.OwnerRole = name
		return ctrl.Result{}, nil
	})
}

// externalName is the external name of Roles and Databases: SQLName of
// the object's namespace and name.
func externalName(obj client.Object) string { return SQLName(obj.GetNamespace(), obj.GetName()) }

// deleting reports whether obj is being deleted.
func deleting(obj client.Object) bool { return !obj.GetDeletionTimestamp().IsZero() }

// refused returns the client of a deleted object whose name the operator
// refuses: no statement ever named it, so nothing of the object's exists,
// and Observe says so without asking the server.
func refused[T client.Object]() managed.ExternalClient[T] {
	return managed.ExternalClientFuncs[T]{
		ObserveFn: func(context.Context, T) (managed.Observation, error) { return managed.Observation{}, nil },
	}
}

// nameOf returns the external name of obj: the one recorded on it, or, before
// the managed step's first pass has recorded one, the one it will record.
func nameOf(obj client.Object) string {
	if n := managed.ExternalName(obj); n != "" {
		return n
	}
	return externalName(obj)
}

// isReady reports whether conds hold a True Ready condition.
func isReady(conds []metav1.Condition) bool {
	c := conditions.Find(conds, conditions.TypeReady)
	return c != nil && c.Status == metav1.ConditionTrue
}
