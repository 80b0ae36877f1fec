package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	pgv1 "github.com/bosunkit/bosun/examples/postgres/api/v1alpha1"
	"github.com/bosunkit/bosun/managed"
)

// tenant returns a client that acts as a user who may, in namespace ns,
// read Secrets and do to Roles what verbs name ("create" when none), and
// nothing else: the API server impersonates the user for the control
// plane's administrator, and a Role bound to the user in ns grants the
// rest.
func tenant(t *testing.T, e env, ns string, verbs ...string) client.Client {
	t.Helper()
	cp := shared.ControlPlane(t)
	user := "tenant-of-" + ns
	rules := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{pgv1.GroupVersion.Group}, Resources: []string{"roles"}, Verbs: append([]string{"create"}, verbs...)},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}},
		},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: rules.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	create(t, e, rules, binding)
	cfg := rest.CopyConfig(cp.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := client.New(cfg, client.Options{Scheme: cp.Scheme})
	if err != nil {
		t.Fatalf("a client for %s: %v", user, err)
	}
	// RBAC takes effect when the authorizer's cache has seen the binding.
	probe := &corev1.Secret{}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "no-such-secret"}, probe)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading a secret as %s: %w, want NotFound", user, err)
	})
	return c
}

// loginAs connects to the server as user with password, as an application
// would; the shared server asks every role but the superuser for its
// password.
func loginAs(ctx context.Context, e env, user, password string) error {
	cfg, err := pgx.ParseConfig(e.srv.DSN("postgres"))
	if err != nil {
		return fmt.Errorf("parsing the DSN: %w", err)
	}
	cfg.User, cfg.Password = user, password
	cfg.ConnectTimeout = 10 * time.Second
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("logging in as %s: %w", user, err)
	}
	return conn.Close(ctx)
}

// TestTenantCannotTakeOverRoles acts as a user who may only create Roles and
// read Secrets in one namespace. The user creates Roles whose external
// names name a role made with plain SQL (one of them with a forged record
// of a create as well) and the role of another namespace's Role. None is
// taken over: the first two are Ready False with reason AdoptionNotGranted,
// the third with ExternalResourceConflict; the owners' passwords still log
// in; no statement but reads names the two roles; the user's Secrets hold
// no password for them; the user cannot grant adoption to its own
// namespace; and deleting the user's Roles leaves both roles in place.
func TestTenantCannotTakeOverRoles(t *testing.T) {
	e := start(t, nil)
	ctx := t.Context()

	// A role made by hand, with a password its owner knows.
	outside := "outside_role_" + runSuffix()
	password, verifier, err := newCredentials()
	if err != nil {
		t.Fatal(err)
	}
	exec(t, e.srv, "CREATE ROLE "+quote(outside)+" LOGIN PASSWORD "+literal(verifier))

	// Another namespace's Role, with its password in its Secret.
	other := bosuntest.Namespace(t, e.c)
	theirs := &pgv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "app"},
		Spec:       pgv1.RoleSpec{Login: true, ConnectionSecretName: "app-conn"},
	}
	create(t, e, theirs)
	waitFor(t, e.c, client.ObjectKeyFromObject(theirs), theirs, readyTrue, syncedTrue)
	theirRole := managed.ExternalName(theirs)
	theirSecret := &corev1.Secret{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: other, Name: "app-conn"}, theirSecret); err != nil {
		t.Fatalf("reading the other namespace's connection secret: %v", err)
	}
	if err := login(ctx, e, theirSecret); err != nil {
		t.Fatalf("before the test: %v", err)
	}
	from := statementCount(t, e)

	user := tenant(t, e, e.ns)
	longAgo := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339Nano)
	grabs := []*pgv1.Role{
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "grab", Annotations: withExternalName(outside)},
			Spec:       pgv1.RoleSpec{Login: true, ConnectionSecretName: "grab-conn"},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "grab-forged", Annotations: map[string]string{
				managed.AnnotationExternalName:        outside,
				managed.AnnotationCreatePending:       longAgo,
				"bosun.dev/external-create-succeeded": longAgo,
			}},
			Spec: pgv1.RoleSpec{Login: true, ConnectionSecretName: "grab-forged-conn"},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "grab-theirs", Annotations: withExternalName(theirRole)},
			Spec:       pgv1.RoleSpec{Login: true, ConnectionSecretName: "grab-theirs-conn"},
		},
	}
	for _, g := range grabs {
		if err := user.Create(ctx, g); err != nil {
			t.Fatalf("creating Role %s as the tenant: %v", g.Name, err)
		}
	}
	// The user may not grant itself adoption, nor reach another namespace.
	ns := &corev1.Namespace{}
	if err := e.c.Get(ctx, client.ObjectKey{Name: e.ns}, ns); err != nil {
		t.Fatal(err)
	}
	ns.Annotations = map[string]string{managed.AnnotationAdoptExternal: "true"}
	if err := user.Update(ctx, ns); !apierrors.IsForbidden(err) {
		t.Errorf("the tenant annotating its namespace: %v, want Forbidden", err)
	}
	elsewhere := &pgv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "grab"}}
	if err := user.Create(ctx, elsewhere); !apierrors.IsForbidden(err) {
		t.Errorf("the tenant creating a Role in another namespace: %v, want Forbidden", err)
	}

	waitFor(t, e.c, client.ObjectKeyFromObject(grabs[0]), grabs[0], notGranted)
	waitFor(t, e.c, client.ObjectKeyFromObject(grabs[1]), grabs[1], notGranted)
	waitFor(t, e.c, client.ObjectKeyFromObject(grabs[2]), grabs[2], conflict)
	// A few more polls of each, to give a takeover its chance.
	waitPasses(t, e, RoleControllerName, grabs[0].Name, 2)
	waitPasses(t, e, RoleControllerName, grabs[1].Name, 2)
	waitPasses(t, e, RoleControllerName, grabs[2].Name, 2)

	check := func(when string) {
		t.Helper()
		for _, name := range []string{outside, theirRole} {
			if w := writesSince(t, e, from, name); len(w) != 0 {
				t.Errorf("%s: role %s received writes: %q", when, name, w)
			}
		}
		if err := loginAs(ctx, e, outside, password); err != nil {
			t.Errorf("%s: the owner of the role made by hand is locked out: %v", when, err)
		}
		if err := login(ctx, e, theirSecret); err != nil {
			t.Errorf("%s: the other namespace's application is locked out: %v", when, err)
		}
		if got, ok := roleComment(t, e, theirRole); !ok || got != markOf(theirs) {
			t.Errorf("%s: role %s: comment %q (exists %t), want it still marked %q", when, theirRole, got, ok, markOf(theirs))
		}
		if got, ok := roleComment(t, e, outside); !ok || got != "" {
			t.Errorf("%s: role %s: comment %q (exists %t), want it there unmarked", when, outside, got, ok)
		}
	}
	check("while the tenant's Roles exist")
	for _, g := range grabs {
		sec := &corev1.Secret{}
		err := user.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: g.Spec.ConnectionSecretName}, sec)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			t.Errorf("reading secret %s as the tenant: %v", g.Spec.ConnectionSecretName, err)
		case len(sec.Data[SecretPassword]) != 0:
			t.Errorf("the tenant's secret %s holds a password", g.Spec.ConnectionSecretName)
		}
	}

	deleteAndWait(t, e, grabs[0], grabs[1], grabs[2])
	check("after the tenant's Roles are deleted")
	deleteAndWait(t, e, theirs)
	exec(t, e.srv, "DROP ROLE "+quote(outside))
}
