package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	pgv1 "github.com/bosunkit/bosun/examples/postgres/api/v1alpha1"
	"github.com/bosunkit/bosun/examples/postgres/pgserver"
	"github.com/bosunkit/bosun/managed"
)

// errLostOutcome is the error the crash-window interceptor injects.
var errLostOutcome = errors.New("injected: the create outcome was lost")

// outcomeBlocker fails every write of the Role controller that would record
// the outcome of a create, and remembers the objects it did this to.
type outcomeBlocker struct {
	mu      sync.Mutex
	blocked map[string]int
}

// recordsOutcome reports whether a write carries a create outcome.
func recordsOutcome(s string) bool {
	return strings.Contains(s, "bosun.dev/external-create-succeeded") || strings.Contains(s, "bosun.dev/external-create-failed")
}

// block counts a failed write of the object name.
func (b *outcomeBlocker) block(name string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.blocked[name]++
	return errLostOutcome
}

// count returns how many writes of the object name were failed.
func (b *outcomeBlocker) count(name string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.blocked[name]
}

// noWatch gives a client that cannot watch the Watch method of
// client.WithWatch, which the interceptor needs; the controllers never call
// it.
type noWatch struct {
	client.Client
}

// Watch fails.
func (noWatch) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	return nil, errors.New("watch is not supported by this client")
}

// wrap returns c with the outcome writes failing.
func (b *outcomeBlocker) wrap(c client.Client) client.Client {
	w, ok := c.(client.WithWatch)
	if !ok {
		w = noWatch{c}
	}
	return interceptor.NewClient(w, interceptor.Funcs{
		Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			data, err := patch.Data(obj)
			if err == nil && recordsOutcome(string(data)) {
				return b.block(obj.GetName())
			}
			return cl.Patch(ctx, obj, patch, opts...)
		},
		Update: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			for k := range obj.GetAnnotations() {
				if recordsOutcome(k) {
					return b.block(obj.GetName())
				}
			}
			return cl.Update(ctx, obj, opts...)
		},
	})
}

// runRoles runs the Role controller alone, with connector in place of
// RoleConnector and the operator's managed options followed by opts. wrap,
// when not nil, wraps the client the controller writes through.
func runRoles(t *testing.T, connector managed.Connector[*pgv1.Role], wrap func(client.Client) client.Client, opts ...managed.Option) env {
	t.Helper()
	return run(t, wrap, func(mgr ctrl.Manager, srv *pgserver.Server) error {
		r := newRoleReconciler(connector, Options{DSN: srv.DSN("postgres"), Managed: opts})
		return bosun.ControllerManagedBy[*pgv1.Role](mgr).Owns(&corev1.Secret{}).Complete(r)
	})
}

// runSuffix returns a suffix that keeps the PostgreSQL role names of one
// run of a test apart from those of another on the shared server.
func runSuffix() string { return fmt.Sprintf("%06x", time.Now().UnixNano()&0xffffff) }

// createRoleStatements returns the CREATE ROLE statements the server
// received for the role name.
func createRoleStatements(t *testing.T, e env, name string) []string {
	t.Helper()
	prefix := "CREATE ROLE " + quote(name) + " "
	var found []string
	for _, st := range statementsContaining(t, e.srv, quote(name)) {
		if strings.HasPrefix(strings.TrimSpace(st), prefix) {
			found = append(found, st)
		}
	}
	return found
}

// crashTrials is the number of Roles whose create outcome is lost.
const crashTrials = 100

// crashBatch is how many of them are created at a time.
const crashBatch = 25

// TestCreateCrashWindow fails every write that would record the outcome of
// a create, for 100 Roles: PostgreSQL never receives a second CREATE ROLE
// for any of them, and since the names are deterministic each Role adopts
// the role its lost create made and becomes Ready (the alternative the leak
// guard allows, stopping with CreateIncomplete, fails the test early with
// its own message). The password that only the lost create knew still
// reaches each Role's connection Secret, published before the outcome:
// the wrapper around the client hides its CredentialRepairer, and no
// statement but the CREATE ROLE sets a password.
func TestCreateCrashWindow(t *testing.T) {
	srv := server(t)
	blocker := &outcomeBlocker{blocked: map[string]int{}}
	// Observe also misses a new role for a while, shorter than the
	// creation grace period: a step that took that "not found" at its word
	// after a lost outcome would create again.
	lag := &laggingRoles{lag: 2 * time.Second, created: map[string]time.Time{}}
	e := runRoles(t, lag.connector(srv.DSN("postgres")), blocker.wrap,
		managed.WithTiming(managed.Timing{Poll: 5 * time.Second, MinPoll: time.Second, Short: 200 * time.Millisecond, CreationGrace: 4 * time.Second}),
		managed.WithOutcomeRetry(2, 10*time.Millisecond),
	)
	ctx := t.Context()
	from := statementCount(t, e)
	suffix := runSuffix()
	names := make([]string, crashTrials)
	for i := range names {
		names[i] = fmt.Sprintf("crash-%s-%03d", suffix, i)
	}

	settled := func(ctx context.Context, name string) (*pgv1.Role, error) {
		r := &pgv1.Role{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: name}, r); err != nil {
			return nil, err
		}
		if s := conditions.Find(r.Status.Conditions, "Synced"); s != nil && s.Reason == string(managed.ReasonCreateIncomplete) {
			return r, nil
		}
		if err := hasConditions(r.Status.Conditions, r.Generation, readyTrue, syncedTrue); err != nil {
			return nil, err
		}
		return r, nil
	}
	for start := 0; start < crashTrials; start += crashBatch {
		batch := names[start:min(start+crashBatch, crashTrials)]
		for _, name := range batch {
			r := &pgv1.Role{
				ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
				Spec:       pgv1.RoleSpec{Login: true, ConnectionSecretName: name + "-conn"},
			}
			if err := e.c.Create(ctx, r); err != nil {
				t.Fatalf("create role %s: %v", name, err)
			}
		}
		for _, name := range batch {
			var r *pgv1.Role
			bosuntest.Eventually(t, func(ctx context.Context) error {
				var err error
				r, err = settled(ctx, name)
				return err
			}, bosuntest.Timeout(time.Minute))
			if s := conditions.Find(r.Status.Conditions, "Synced"); s.Reason == string(managed.ReasonCreateIncomplete) {
				t.Errorf("%s stopped with CreateIncomplete (%q), want it to adopt the role: its name is deterministic", name, s.Message)
				continue
			}
			// The create did happen, and its outcome was never recorded:
			// the Role was adopted through the crash window.
			if _, ok := r.Annotations[managed.AnnotationCreatePending]; !ok {
				t.Errorf("%s: annotations %v lack %s", name, r.Annotations, managed.AnnotationCreatePending)
			}
			if _, ok := r.Annotations["bosun.dev/external-create-succeeded"]; ok {
				t.Errorf("%s: the create outcome was recorded despite the interceptor", name)
			}
			if blocker.count(name) == 0 {
				t.Errorf("%s: no outcome write was failed, the crash window was not exercised", name)
			}
		}
	}

	// Let every adopted Role be polled again before counting: a poll that
	// took a lost create's "not found" at its word would create again.
	sqlNames := make([]string, len(names))
	for i, name := range names {
		sqlNames[i] = SQLName(e.ns, name)
	}
	waitPolledAgain(t, e, sqlNames...)
	for _, name := range names {
		sqlName := SQLName(e.ns, name)
		if got := createRoleStatements(t, e, sqlName); len(got) != 1 {
			t.Errorf("%s: %d CREATE ROLE statements, want exactly 1: %q", sqlName, len(got), got)
		}
		if got := readRole(t, e, sqlName); got == nil || !got.Login {
			t.Errorf("%s: role in postgresql = %+v, want it there with login", sqlName, got)
		}
		if got := passwordStatements(t, e, from, sqlName); len(got) != 1 {
			t.Errorf("%s: %d statements set a password, want 1 (CREATE ROLE): %q", sqlName, len(got), got)
		}
		// The password only Create knew reached the connection Secret
		// although the outcome was never recorded.
		var secret corev1.Secret
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: name + "-conn"}, &secret); err != nil {
			t.Errorf("%s: connection secret: %v", name, err)
			continue
		}
		var verifier string
		if err := query(t, e.srv, "SELECT rolpassword FROM pg_authid WHERE rolname = $1", []any{sqlName}, &verifier); err != nil {
			t.Fatalf("reading the stored verifier of %s: %v", sqlName, err)
		}
		if err := checkVerifier(string(secret.Data[SecretPassword]), verifier); err != nil {
			t.Errorf("%s: the connection secret's password does not match the role's: %v", name, err)
		}
	}

	// Deleting drops the adopted roles. A hundred Roles deleted at once
	// are a mass deletion, which the breaker would hold: this one is
	// meant.
	allow := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"true"}}}`, bosun.AnnotationAllowMassDeletion)
	for _, name := range names {
		role := &pgv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name}}
		if err := e.c.Patch(ctx, role, client.RawPatch(types.MergePatchType, allow)); err != nil {
			t.Fatalf("allowing the deletion of %s: %v", name, err)
		}
	}
	if err := e.c.DeleteAllOf(ctx, &pgv1.Role{}, client.InNamespace(e.ns)); err != nil {
		t.Fatalf("delete roles: %v", err)
	}
	for _, name := range names {
		waitGone(t, e.c, client.ObjectKey{Namespace: e.ns, Name: name}, &pgv1.Role{})
		if got := readRole(t, e, SQLName(e.ns, name)); got != nil {
			t.Errorf("%s: role still in postgresql after delete: %+v", SQLName(e.ns, name), got)
		}
	}
}

// laggingRoles wraps the Role connector so that Observe does not see a role
// for a while after the wrapper's own Create made it, like an eventually
// consistent API. Its clients are not CredentialRepairers: a password in a
// connection Secret is the one Create returned.
type laggingRoles struct {
	lag time.Duration

	mu      sync.Mutex
	created map[string]time.Time
	hidden  int
}

// connector returns the wrapped connector of dsn.
func (l *laggingRoles) connector(dsn string) managed.Connector[*pgv1.Role] {
	inner := RoleConnector(dsn)
	return managed.ConnectorFunc[*pgv1.Role](func(ctx context.Context, r *pgv1.Role) (managed.ExternalClient[*pgv1.Role], error) {
		cl, err := inner.Connect(ctx, r)
		if err != nil {
			return nil, err
		}
		return managed.ExternalClientFuncs[*pgv1.Role]{
			ObserveFn: func(ctx context.Context, r *pgv1.Role) (managed.Observation, error) {
				obs, err := cl.Observe(ctx, r)
				if err != nil || !obs.Exists {
					return obs, err
				}
				l.mu.Lock()
				defer l.mu.Unlock()
				if at, ok := l.created[managed.ExternalName(r)]; ok && time.Since(at) < l.lag {
					l.hidden++
					return managed.Observation{}, nil
				}
				return obs, nil
			},
			CreateFn: func(ctx context.Context, r *pgv1.Role) (managed.Creation, error) {
				cr, err := cl.Create(ctx, r)
				if err == nil {
					l.mu.Lock()
					l.created[managed.ExternalName(r)] = time.Now()
					l.mu.Unlock()
				}
				return cr, err
			},
			UpdateFn: cl.Update,
			DeleteFn: cl.Delete,
			DisconnectFn: func(ctx context.Context) error {
				if d, ok := cl.(managed.Disconnecter); ok {
					return d.Disconnect(ctx)
				}
				return nil
			},
		}, nil
	})
}

// hiddenCount returns how many observations the wrapper hid a role from.
func (l *laggingRoles) hiddenCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hidden
}

// TestEventuallyConsistentObserve puts a Role behind a client that reports
// "not found" for 5s after its create: the step keeps looking within the
// creation grace period, PostgreSQL receives exactly one CREATE ROLE, and
// the Role ends Ready.
func TestEventuallyConsistentObserve(t *testing.T) {
	srv := server(t)
	lag := &laggingRoles{lag: 5 * time.Second, created: map[string]time.Time{}}
	e := runRoles(t, lag.connector(srv.DSN("postgres")), nil,
		managed.WithTiming(managed.Timing{Poll: time.Second, MinPoll: time.Second, Short: 500 * time.Millisecond}),
	)
	ctx := t.Context()
	name := "lagging-" + runSuffix()
	sqlName := SQLName(e.ns, name)
	role := &pgv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec:       pgv1.RoleSpec{Login: true, ConnectionSecretName: name + "-conn"},
	}
	if err := e.c.Create(ctx, role); err != nil {
		t.Fatalf("create role: %v", err)
	}
	key := client.ObjectKeyFromObject(role)
	// While the client hides the new role, the Role waits as Creating.
	waitFor(t, e.c, key, role, condition{conditions.TypeReady, metav1.ConditionFalse, "Creating"})
	waitFor(t, e.c, key, role, readyTrue, syncedTrue)

	if n := lag.hiddenCount(); n < 3 {
		t.Errorf("the client hid the role from %d observations, want the step to have looked again several times within 5s", n)
	}
	if got := createRoleStatements(t, e, sqlName); len(got) != 1 {
		t.Errorf("%d CREATE ROLE statements for %s, want exactly 1: %q", len(got), sqlName, got)
	}
	if got := readRole(t, e, sqlName); got == nil || !got.Login {
		t.Errorf("role in postgresql = %+v, want it there with login", got)
	}

	if err := e.c.Delete(ctx, role); err != nil {
		t.Fatalf("delete role: %v", err)
	}
	waitGone(t, e.c, key, &pgv1.Role{})
	if got := readRole(t, e, sqlName); got != nil {
		t.Errorf("role still in postgresql after delete: %+v", got)
	}
}
