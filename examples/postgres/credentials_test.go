package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	pgv1 "github.com/bosunkit/bosun/examples/postgres/api/v1alpha1"
)

// login connects to the server as the user of the connection Secret sec,
// with its password, host and port, as an application would; the shared
// server asks every role but the superuser for its password.
func login(ctx context.Context, e env, sec *corev1.Secret) error {
	cfg, err := pgx.ParseConfig(e.srv.DSN("postgres"))
	if err != nil {
		return fmt.Errorf("parsing the DSN: %w", err)
	}
	port, err := strconv.ParseUint(string(sec.Data[SecretPort]), 10, 16)
	if err != nil {
		return fmt.Errorf("secret %s: port: %w", sec.Name, err)
	}
	cfg.Host, cfg.Port = string(sec.Data[SecretHost]), uint16(port)
	cfg.User, cfg.Password = string(sec.Data[SecretUsername]), string(sec.Data[SecretPassword])
	cfg.ConnectTimeout = 10 * time.Second
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("logging in as %s with the password of secret %s: %w", cfg.User, sec.Name, err)
	}
	return conn.Close(ctx)
}

// passwordStatements returns the statements from the from-th on that set a
// password of the role name.
func passwordStatements(t *testing.T, e env, from int, name string) []string {
	t.Helper()
	var found []string
	for _, s := range writesSince(t, e, from, name) {
		if strings.Contains(s, " PASSWORD ") {
			found = append(found, s)
		}
	}
	return found
}

// TestDeletedSecretComesBackWithWorkingPassword deletes the connection
// Secret of a Ready Role: it comes back with a new password, set on the
// role with one ALTER ROLE, with which the role logs in to PostgreSQL; the
// old password no longer does.
func TestDeletedSecretComesBackWithWorkingPassword(t *testing.T) {
	e := start(t, nil)
	ctx := t.Context()
	role := &pgv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "app-login"},
		Spec:       pgv1.RoleSpec{Login: true, ConnectionSecretName: "app-login-conn"},
	}
	create(t, e, role)
	key := client.ObjectKeyFromObject(role)
	waitFor(t, e.c, key, role, readyTrue, syncedTrue)
	secretKey := client.ObjectKey{Namespace: e.ns, Name: "app-login-conn"}
	var first corev1.Secret
	if err := e.c.Get(ctx, secretKey, &first); err != nil {
		t.Fatalf("get connection secret: %v", err)
	}
	if err := login(ctx, e, &first); err != nil {
		t.Fatalf("the published password does not log in: %v", err)
	}

	from := statementCount(t, e)
	if err := e.c.Delete(ctx, &first); err != nil {
		t.Fatalf("delete connection secret: %v", err)
	}
	var again corev1.Secret
	bosuntest.Eventually(t, func(ctx context.Context) error {
		again = corev1.Secret{}
		if err := e.c.Get(ctx, secretKey, &again); err != nil {
			return err
		}
		if again.UID == first.UID {
			return errors.New("still the old secret")
		}
		if len(again.Data[SecretPassword]) == 0 {
			return fmt.Errorf("secret is back without a password: keys %v", keys(again.Data))
		}
		return login(ctx, e, &again)
	}, bosuntest.Timeout(time.Minute))
	waitFor(t, e.c, key, role, readyTrue, syncedTrue)
	if err := login(ctx, e, &first); err == nil {
		t.Error("the password of the deleted secret still logs in, want it replaced")
	}
	if got := passwordStatements(t, e, from, externalName(role)); len(got) != 1 {
		t.Errorf("%d statements set the role's password after the secret was deleted, want 1: %q", len(got), got)
	}
	checkNoPassword(t, e, string(again.Data[SecretPassword]))
	deleteAndWait(t, e, role)
}

// keys returns the keys of data.
func keys(data map[string][]byte) []string {
	var ks []string
	for k := range data {
		ks = append(ks, k)
	}
	return ks
}

// crashAfterCreate makes the Role controller's client fail what a stop
// right after a create would leave undone: the first write of one
// connection Secret, and every write that would record the outcome of a
// create of one Role.
type crashAfterCreate struct {
	role, secret string

	mu             sync.Mutex
	secretFailures int
	outcomeBlocks  int
}

// failSecret reports whether the write of the Secret name fails, counting
// the failure: only the first one does.
func (c *crashAfterCreate) failSecret(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if name != c.secret || c.secretFailures > 0 {
		return false
	}
	c.secretFailures++
	return true
}

// blockOutcome counts a failed outcome write.
func (c *crashAfterCreate) blockOutcome() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.outcomeBlocks++
	return errLostOutcome
}

// counts returns how many Secret writes and outcome writes failed.
func (c *crashAfterCreate) counts() (secret, outcome int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.secretFailures, c.outcomeBlocks
}

// wrap returns cl with the writes failing.
func (c *crashAfterCreate) wrap(cl client.Client) client.Client {
	w, ok := cl.(client.WithWatch)
	if !ok {
		w = noWatch{cl}
	}
	isRole := func(obj client.Object) bool { _, ok := obj.(*pgv1.Role); return ok && obj.GetName() == c.role }
	return interceptor.NewClient(w, interceptor.Funcs{
		Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.Secret); ok && c.failSecret(obj.GetName()) {
				return errLostOutcome
			}
			return cl.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if _, ok := obj.(*corev1.Secret); ok && c.failSecret(obj.GetName()) {
				return errLostOutcome
			}
			if isRole(obj) {
				for k := range obj.GetAnnotations() {
					if recordsOutcome(k) {
						return c.blockOutcome()
					}
				}
			}
			return cl.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if isRole(obj) {
				if data, err := patch.Data(obj); err == nil && recordsOutcome(string(data)) {
					return c.blockOutcome()
				}
			}
			return cl.Patch(ctx, obj, patch, opts...)
		},
	})
}

// TestCrashAfterCreateStillPublishesWorkingPassword loses what a stop
// right after CREATE ROLE loses: the Secret with the password only Create
// knew, and the record of the create. The Role ends Ready with a Secret
// whose password logs in, set on the role by one ALTER ROLE, after exactly
// one CREATE ROLE; and the first time it is seen Ready, the Secret already
// works: it is never Ready with an incomplete Secret.
func TestCrashAfterCreateStillPublishesWorkingPassword(t *testing.T) {
	crash := &crashAfterCreate{role: "crashed-login", secret: "crashed-login-conn"}
	e := start(t, crash.wrap)
	role := &pgv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: crash.role},
		Spec:       pgv1.RoleSpec{Login: true, ConnectionSecretName: crash.secret},
	}
	from := statementCount(t, e)
	create(t, e, role)
	key := client.ObjectKeyFromObject(role)
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := e.c.Get(ctx, key, role); err != nil {
			return err
		}
		if err := hasConditions(role.Status.Conditions, role.Generation, readyTrue); err != nil {
			return err
		}
		var sec corev1.Secret
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: crash.secret}, &sec); err != nil {
			t.Fatalf("the Role is Ready and its connection secret cannot be read: %v", err)
		}
		if err := login(ctx, e, &sec); err != nil {
			t.Fatalf("the Role is Ready with a connection secret that does not log in: %v", err)
		}
		return nil
	}, bosuntest.Timeout(time.Minute))

	secretFailures, outcomeBlocks := crash.counts()
	if secretFailures != 1 || outcomeBlocks == 0 {
		t.Errorf("failed %d secret writes and %d outcome writes, want 1 and some: the crash was not exercised", secretFailures, outcomeBlocks)
	}
	if s := conditions.Find(role.Status.Conditions, conditions.TypeReady); s == nil || s.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v, want True", s)
	}
	name := externalName(role)
	if got := createRoleStatements(t, e, name); len(got) != 1 {
		t.Errorf("%d CREATE ROLE statements, want exactly 1: %q", len(got), got)
	}
	if got := passwordStatements(t, e, from, name); len(got) != 2 {
		t.Errorf("%d statements set a password of the role (CREATE and repair), want 2: %q", len(got), got)
	}
	deleteAndWait(t, e, role)
}
