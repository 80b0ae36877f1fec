package postgres

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	pgv1 "github.com/bosunkit/bosun/examples/postgres/api/v1alpha1"
	"github.com/bosunkit/bosun/operator"
)

// planOperator describes the postgres operator to operator.Run as its
// command does, managing the server of e and the objects of e's namespace
// alone.
func planOperator(e env) operator.Options {
	return operator.Options{
		Name:        "postgres",
		AddToScheme: AddToScheme,
		CRDs:        CRDs,
		Setup: func(mgr ctrl.Manager) error {
			return SetupWithManager(mgr, Options{DSN: e.srv.DSN("postgres")})
		},
		Manager: func(o *ctrl.Options) {
			o.Cache.DefaultNamespaces = map[string]cache.Config{e.ns: {}}
			o.Controller.SkipNameValidation = ptr.To(true)
		},
	}
}

// planEnv is the env of a plan test: the shared control plane, found
// through KUBECONFIG as the operator's command finds its cluster, the
// shared server and a namespace of its own. No operator runs yet.
func planEnv(t *testing.T) env {
	t.Helper()
	srv := server(t)
	cp := shared.ControlPlane(t)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(path); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", path)
	return env{c: cp.Client, srv: srv, ns: bosuntest.Namespace(t, cp.Client)}
}

// running is an operator that runOperator started.
type running struct {
	cancel context.CancelFunc
	done   chan error
	out    *strings.Builder
}

// runOperator runs the operator of opts, with --plan when plan is set,
// without probes, until it returns or stop is called; the test's end
// stops it.
func runOperator(t *testing.T, opts operator.Options, plan bool) *running {
	t.Helper()
	flags := operator.DefaultFlags()
	flags.ProbeAddr = "0"
	flags.Plan = plan
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	r := &running{cancel: cancel, done: make(chan error, 1), out: &strings.Builder{}}
	go func() { r.done <- operator.Run(ctx, opts, flags, r.out) }()
	t.Cleanup(func() { _ = r.wait(true) })
	return r
}

// wait waits for the operator to return, ending it first when stop is
// set, and returns what Run returned; out may be read after it.
func (r *running) wait(stop bool) error {
	if stop {
		r.cancel()
	}
	err := <-r.done
	r.done <- err
	return err
}

// convergedRole makes a Role that logs in with a connection Secret, runs
// the operator until it is Ready and stops it; it returns the Role and its
// Secret.
func convergedRole(t *testing.T, e env, name string) (*pgv1.Role, *corev1.Secret) {
	t.Helper()
	role := &pgv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec:       pgv1.RoleSpec{Login: true, ConnectionSecretName: name + "-conn"},
	}
	create(t, e, role)
	r := runOperator(t, planOperator(e), false)
	waitFor(t, e.c, client.ObjectKeyFromObject(role), role, readyTrue, syncedTrue)
	sec := &corev1.Secret{}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: role.Spec.ConnectionSecretName}, sec); err != nil {
			return err
		}
		if len(sec.Data[SecretPassword]) == 0 {
			return errors.New("the connection secret has no password yet")
		}
		return nil
	})
	if err := r.wait(true); err != nil {
		t.Fatalf("the operator: %v", err)
	}
	return role, sec
}

// plan runs the operator with --plan to its end and returns what it
// printed.
func plan(t *testing.T, e env) string {
	t.Helper()
	r := runOperator(t, planOperator(e), true)
	if err := r.wait(false); err != nil {
		t.Fatalf("--plan: %v\n%s", err, r.out.String())
	}
	t.Logf("--plan printed:\n%s", r.out.String())
	return r.out.String()
}

// TestPlanHidesConnectionSecret: a Ready Role's connection Secret was
// edited by hand (a stale host) and its spec changed while the operator
// was stopped. The plan says that the Secret's host would change, and
// prints none of the Secret's values (the password, the stale host, the
// server's host and port), plain or in base64; the cluster is unchanged.
func TestPlanHidesConnectionSecret(t *testing.T) {
	e := planEnv(t)
	ctx := t.Context()
	role, sec := convergedRole(t, e, "app")
	password, host, port := string(sec.Data[SecretPassword]), string(sec.Data[SecretHost]), string(sec.Data[SecretPort])
	const stale = "stale-host-Vn83.invalid"
	sec.Data[SecretHost] = []byte(stale)
	if err := e.c.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	// A spec change, so that the pass observes the role at once.
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(role), role); err != nil {
			return err
		}
		role.Spec.ConnectionLimit = ptr.To[int32](5)
		return e.c.Update(ctx, role)
	})

	report := plan(t, e)

	section := planSection(report, "Role "+e.ns+"/app ")
	for _, line := range []string{
		fmt.Sprintf("external update %q", externalName(role)),
		"update Secret " + e.ns + "/app-conn",
		"data.host: (sensitive value) -> (sensitive value)",
	} {
		if !strings.Contains(section, line) {
			t.Errorf("the plan of Role app lacks %q:\n%s", line, section)
		}
	}
	var found []string
	for _, v := range []string{password, stale, `"` + host + `"`, `"` + port + `"`} {
		if strings.Contains(report, v) {
			found = append(found, v)
		}
	}
	for _, v := range []string{password, stale, host, port} {
		if b := base64.StdEncoding.EncodeToString([]byte(v)); strings.Contains(report, b) {
			found = append(found, b)
		}
	}
	if diff := cmp.Diff([]string(nil), found); diff != "" {
		t.Errorf("the plan prints values of the connection Secret (-want +got):\n%s", diff)
	}
	after := &corev1.Secret{}
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(sec), after); err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != sec.ResourceVersion {
		t.Errorf("--plan wrote the connection Secret: resourceVersion %s, was %s", after.ResourceVersion, sec.ResourceVersion)
	}
}

// planSection returns the lines of report from the one that starts with
// header to the next object's.
func planSection(report, header string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(report, "\n") {
		switch {
		case strings.HasPrefix(line, header):
			in = true
		case in && !strings.HasPrefix(line, " "):
			return b.String()
		}
		if in {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// TestPlanSetsNoPassword: the password was removed from a Ready Role's
// connection Secret, and its spec changed, while the operator was
// stopped; a running operator repairs the Secret by giving the role a new
// password. The plan records
// the repair and makes none: no statement sets the role's password, the
// removed password still logs in, and the plan prints no password.
func TestPlanSetsNoPassword(t *testing.T) {
	e := planEnv(t)
	ctx := t.Context()
	role, sec := convergedRole(t, e, "app")
	old := sec.DeepCopy()
	delete(sec.Data, SecretPassword)
	if err := e.c.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	// A spec change, so that the pass observes the role at once.
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(role), role); err != nil {
			return err
		}
		role.Spec.ConnectionLimit = ptr.To[int32](5)
		return e.c.Update(ctx, role)
	})
	from := statementCount(t, e)

	report := plan(t, e)

	section := planSection(report, "Role "+e.ns+"/app ")
	if want := fmt.Sprintf("external repair credentials %q", externalName(role)); !strings.Contains(section, want) {
		t.Errorf("the plan of Role app lacks %q:\n%s", want, section)
	}
	if got := passwordStatements(t, e, from, externalName(role)); len(got) != 0 {
		t.Errorf("--plan ran %d statements that set the role's password, want none: %q", len(got), got)
	}
	if err := login(ctx, e, old); err != nil {
		t.Errorf("after --plan the role's password no longer logs in: %v", err)
	}
	password := string(old.Data[SecretPassword])
	if b := base64.StdEncoding.EncodeToString([]byte(password)); strings.Contains(report, password) || strings.Contains(report, b) {
		t.Errorf("the plan prints the password:\n%s", report)
	}
}
