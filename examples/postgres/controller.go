package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	pgv1 "github.com/bosunkit/bosun/examples/postgres/api/v1alpha1"
	"github.com/bosunkit/bosun/flow"
	"github.com/bosunkit/bosun/managed"
	"github.com/bosunkit/bosun/watch"
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
// (managed.MetricDriftCorrections and the others) and the engine's.
const (
	// RoleStepName is the name of the Role controller's managed step.
	RoleStepName = "role"
	// DatabaseStepName is the name of the Database controller's managed
	// step.
	DatabaseStepName = "database"
)

// ConditionRoleReady is the condition type by which a Database reports
// whether its owner Role is Ready: False with pgv1.ReasonWaitingForRole
// until it is, which the engine copies into Ready.
const ConditionRoleReady = "RoleReady"

// ReasonRoleReady is the reason of a True RoleReady condition.
const ReasonRoleReady = "RoleReady"

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
func RoleConnector(dsn string) managed.Connector[*pgv1.Role] {
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
		return &roleClient{conn: conn, host: cfg.Host, port: cfg.Port}, nil
	})
}

// DatabaseConnector returns the connector of the Database controller, like
// RoleConnector. Its clients take the owner role from status.ownerRole,
// which the Database controller's first step resolves.
func DatabaseConnector(dsn string) managed.Connector[*pgv1.Database] {
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
		return &databaseClient{conn: conn}, nil
	})
}

// NewRoleReconciler returns the engine reconciler for Roles: one managed
// step, the PostgreSQL role named SQLName of the Role's namespace and
// name, with its connection details in the Secret
// spec.connectionSecretName names.
func NewRoleReconciler(opts Options) *bosun.Reconciler[*pgv1.Role] {
	return newRoleReconciler(RoleConnector(opts.DSN), opts)
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
	return &bosun.Reconciler[*pgv1.Database]{
		Name: DatabaseControllerName,
		Steps: []bosun.Step[*pgv1.Database]{
			awaitRole{interval: wait},
			managed.NewStep(DatabaseConnector(opts.DSN), mopts...),
		},
		Finalizer: DatabaseFinalizer,
	}
}

// SetupRoleWithManager registers the Role controller with mgr; its managed
// step watches the connection Secrets. The manager's scheme must hold the
// types of AddToScheme.
func SetupRoleWithManager(mgr ctrl.Manager, opts Options) error {
	if opts.DSN == "" {
		return ErrNoDSN
	}
	err := bosun.ControllerManagedBy[*pgv1.Role](mgr).Complete(NewRoleReconciler(opts))
	if err != nil {
		return fmt.Errorf("postgres: role controller: %w", err)
	}
	return nil
}

// SetupDatabaseWithManager registers the Database controller with mgr; its
// awaitRole step makes a change of a Role wake the Databases it owns.
func SetupDatabaseWithManager(mgr ctrl.Manager, opts Options) error {
	if opts.DSN == "" {
		return ErrNoDSN
	}
	err := bosun.ControllerManagedBy[*pgv1.Database](mgr).Complete(NewDatabaseReconciler(opts))
	if err != nil {
		return fmt.Errorf("postgres: database controller: %w", err)
	}
	return nil
}

// SetupWithManager registers both controllers with mgr.
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	if err := SetupRoleWithManager(mgr, opts); err != nil {
		return err
	}
	return SetupDatabaseWithManager(mgr, opts)
}

// awaitRole owns ConditionRoleReady: it ends the pass, to look again
// later, while the Database's owner Role is missing or not Ready; once it
// is, it records the Role's external name, the PostgreSQL role that is to
// own the database, in status.ownerRole for the managed step.
type awaitRole struct {
	interval time.Duration
}

var (
	_ bosun.Step[*pgv1.Database]    = awaitRole{}
	_ bosun.Setuper[*pgv1.Database] = awaitRole{}
	_ bosun.ConditionOwner          = awaitRole{}
)

// Conditions returns the condition the step owns.
func (awaitRole) Conditions() []string { return []string{ConditionRoleReady} }

// OwnerIndex is the name of the field index of Databases by spec.owner,
// which maps a Role to the Databases it owns.
const OwnerIndex = "spec.owner"

// SetupWithBuilder makes a change of a Role reconcile the Databases it
// owns, found through the field index OwnerIndex.
func (awaitRole) SetupWithBuilder(b *bosun.Builder[*pgv1.Database]) error {
	return watch.Referenced(&pgv1.Role{}, OwnerIndex, func(d *pgv1.Database) []string { return []string{d.Spec.Owner} })(b)
}

// Do checks the owner Role.
func (a awaitRole) Do(ctx context.Context, req *bosun.Pass[*pgv1.Database]) (ctrl.Result, error) {
	d := req.Object
	conds := d.Status.Conditions
	if err := validateDatabaseSpec(d); err != nil {
		// The managed step refuses the spec, with reason InvalidSpec on
		// Synced; there is no point waiting for a Role first.
		conditions.Set(&conds, metav1.Condition{
			Type: ConditionRoleReady, Status: metav1.ConditionFalse, Reason: managed.ReasonInvalidSpec,
			Message: "the spec is invalid; see the Synced condition", ObservedGeneration: d.Generation,
		}, metav1.Now())
		d.Status.Conditions = conds
		return flow.Continue()
	}
	var role pgv1.Role
	msg := ""
	err := req.Client.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: d.Spec.Owner}, &role)
	switch {
	case apierrors.IsNotFound(err):
		msg = fmt.Sprintf("waiting for Role %q, which does not exist", d.Spec.Owner)
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("reading owner role: %w", err)
	case !isReady(role.Status.Conditions):
		msg = fmt.Sprintf("waiting for Role %q to be Ready", d.Spec.Owner)
	case role.Status.ObservedGeneration != role.Generation || managed.ExternalName(&role) == "":
		msg = fmt.Sprintf("waiting for Role %q to be reconciled", d.Spec.Owner)
	}
	if msg != "" {
		conditions.Set(&conds, metav1.Condition{
			Type: ConditionRoleReady, Status: metav1.ConditionFalse, Reason: pgv1.ReasonWaitingForRole,
			Message: msg, ObservedGeneration: d.Generation,
		}, metav1.Now())
		d.Status.Conditions = conds
		if req.Deleting() {
			return flow.Continue()
		}
		return ctrl.Result{RequeueAfter: a.interval}, flow.ErrExit
	}
	// The role is the one the Role recorded, not one computed from
	// spec.owner: a Role may stand for a role adopted under another
	// name.
	owner := managed.ExternalName(&role)
	if err := validateOwnerRole(d, owner); err != nil {
		conditions.Set(&conds, metav1.Condition{
			Type: ConditionRoleReady, Status: metav1.ConditionFalse, Reason: managed.ReasonInvalidSpec,
			Message: err.Error(), ObservedGeneration: d.Generation,
		}, metav1.Now())
		d.Status.Conditions = conds
		return ctrl.Result{}, err
	}
	d.Status.OwnerRole = owner
	conditions.Set(&conds, metav1.Condition{
		Type: ConditionRoleReady, Status: metav1.ConditionTrue, Reason: ReasonRoleReady,
		Message: fmt.Sprintf("Role %q stands for role %s", d.Spec.Owner, d.Status.OwnerRole), ObservedGeneration: d.Generation,
	}, metav1.Now())
	d.Status.Conditions = conds
	return flow.Continue()
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
