package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	pgv1 "github.com/bosunkit/bosun/examples/postgres/api/v1alpha1"
	"github.com/bosunkit/bosun/managed"
)

// The channels on which the controllers LISTEN (Options.Listen): a
// notification on RoleChannel whose payload is the name of a role makes
// the Role controller observe that role at once, and one on
// DatabaseChannel does the same for a database, so that a change made
// outside the operator is repaired within a second or so rather than at
// the next poll.
//
// PostgreSQL does not send these notifications by itself: it has no
// notification of changes to roles and databases (event triggers do not
// fire for roles, databases and other objects shared by the whole
// server, and the system catalogs take no triggers). Whoever changes a
// role or database behind the operator (a migration tool, an
// administrator's script) sends one in the same transaction, delivered
// when it commits:
//
//	BEGIN;
//	ALTER ROLE shop_a__app CONNECTION LIMIT 10;
//	SELECT pg_notify('bosun_role_changed', 'shop_a__app');
//	COMMIT;
//
// Changes made without one are found at the next poll, as they are
// without Listen.
const (
	// RoleChannel is the channel of changed roles.
	RoleChannel = "bosun_role_changed"
	// DatabaseChannel is the channel of changed databases.
	DatabaseChannel = "bosun_database_changed"
)

// externalNameField is the field index of Roles and Databases by the name
// of their role or database, through which a listener finds the object a
// notification names.
const externalNameField = "postgres.bosun.dev/external-name"

// ListenRoles adds to mgr a runnable that, while mgr's controllers run
// (it needs leader election when they do), LISTENs on RoleChannel over a
// connection of its own to dsn and, for each notification, wakes the
// managed step of r, a reconciler of NewRoleReconciler, for the Roles that
// stand for the role the payload names (managed.Step.Wake): their next
// passes observe the role at once and repair it. It also adds the field
// index of Roles by role name that it looks them up with. When the
// connection breaks, the runnable connects again after a second, then
// twice as long each time up to half a minute; notifications sent
// meanwhile are lost, and the changes they told of are found at the next
// poll.
func ListenRoles(mgr ctrl.Manager, r *bosun.Reconciler[*pgv1.Role], dsn string) error {
	return listen(mgr, r, dsn, RoleChannel, &pgv1.Role{}, &pgv1.RoleList{})
}

// ListenDatabases is ListenRoles for the Database controller: it LISTENs on
// DatabaseChannel and wakes the managed step of r, a reconciler of
// NewDatabaseReconciler, for the Databases that stand for the database the
// payload names.
func ListenDatabases(mgr ctrl.Manager, r *bosun.Reconciler[*pgv1.Database], dsn string) error {
	return listen(mgr, r, dsn, DatabaseChannel, &pgv1.Database{}, &pgv1.DatabaseList{})
}

// listen adds the index and the listener of channel for r's managed step,
// whose objects are like obj and list like list.
func listen[T client.Object](mgr ctrl.Manager, r *bosun.Reconciler[T], dsn, channel string, obj T, list client.ObjectList) error {
	var step *managed.Step[T]
	for _, s := range r.Steps {
		if m, ok := s.(*managed.Step[T]); ok {
			step = m
		}
	}
	if step == nil {
		return fmt.Errorf("postgres: listening on %s: reconciler %s has no managed step", channel, r.Name)
	}
	if dsn == "" {
		return ErrNoDSN
	}
	err := mgr.GetFieldIndexer().IndexField(context.Background(), obj, externalNameField, func(o client.Object) []string {
		if n := managed.ExternalName(o); n != "" {
			return []string{n}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: listening on %s: indexing by name: %w", channel, err)
	}
	l := &listener{dsn: dsn, channel: channel, wake: step.Wake, log: mgr.GetLogger().WithValues("channel", channel),
		lookup: func(ctx context.Context, name string) ([]client.ObjectKey, error) {
			l := list.DeepCopyObject().(client.ObjectList)
			if err := mgr.GetClient().List(ctx, l, client.MatchingFields{externalNameField: name}); err != nil {
				return nil, err
			}
			return keysOf(l)
		}}
	return mgr.Add(l)
}

// keysOf returns the keys of the items of list, a RoleList or a
// DatabaseList.
func keysOf(list client.ObjectList) ([]client.ObjectKey, error) {
	var keys []client.ObjectKey
	switch l := list.(type) {
	case *pgv1.RoleList:
		for i := range l.Items {
			keys = append(keys, client.ObjectKeyFromObject(&l.Items[i]))
		}
	case *pgv1.DatabaseList:
		for i := range l.Items {
			keys = append(keys, client.ObjectKeyFromObject(&l.Items[i]))
		}
	default:
		return nil, fmt.Errorf("postgres: cannot list %T", list)
	}
	return keys, nil
}

// listener is the runnable of ListenRoles and ListenDatabases.
type listener struct {
	dsn, channel string
	// lookup returns the objects that stand for the role or database
	// name; wake wakes one of them.
	lookup func(ctx context.Context, name string) ([]client.ObjectKey, error)
	wake   func(client.ObjectKey)
	log    logr.Logger
}

// NeedLeaderElection reports that the listener runs with the controllers
// it wakes: only while mgr leads, when they do.
func (l *listener) NeedLeaderElection() bool { return true }

// Start listens until ctx ends, connecting again when the connection
// breaks.
func (l *listener) Start(ctx context.Context) error {
	const first, longest = time.Second, 30 * time.Second
	wait := first
	for {
		listened, err := l.listen(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if listened {
			wait = first
		}
		l.log.Error(err, "listening for changes failed, listening again", "after", wait)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, longest)
	}
}

// listen connects, LISTENs and wakes the objects each notification names,
// until the connection breaks or ctx ends; listened reports that it got
// as far as listening.
func (l *listener) listen(ctx context.Context) (listened bool, err error) {
	conn, _, err := connect(ctx, l.dsn)
	if err != nil {
		return false, err
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	if _, err := conn.Exec(ctx, "LISTEN "+quote(l.channel)); err != nil {
		return false, fmt.Errorf("listening: %w", err)
	}
	l.log.V(1).Info("listening for changes")
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		keys, err := l.lookup(ctx, n.Payload)
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return true, err
			}
			l.log.Error(err, "finding the objects a notification names")
			continue
		}
		for _, k := range keys {
			l.wake(k)
		}
		l.log.V(1).Info("woken by a notification", "name", n.Payload, "objects", len(keys))
	}
}
