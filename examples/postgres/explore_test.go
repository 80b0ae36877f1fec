package postgres

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/explore"
	"github.com/bosunkit/bosun/bosuntest/oracle"
	pgv1 "github.com/bosunkit/bosun/examples/postgres/api/v1alpha1"
	"github.com/bosunkit/bosun/internal/figures"
)

// TestBatteryExplore drives the PostgreSQL operator, set up as
// SetupWithManager sets it up with its default intervals, against the
// shared server through sequences of spec changes read off its CRDs. Roles
// get login on and off, connection limits at -1, 0, 1 and the largest
// int32, and connection Secrets named "", "bbb" and a name too long for a
// Secret; Databases, owned by a Role made first, get encodings and copy
// strategies, which are fixed at creation. On each change the operator
// settles, a pass that finds nothing new writes nothing, no step takes
// more than 10 passes, no error is logged behind a Ready True, and each
// object goes once deleted, leaving no role or database on the server and
// no Secret of its own. The kinds are explored in namespaces of their own,
// as Roles and Databases of one name are told apart by their namespace
// only in the passes counted. It runs 2 seeds of 6 steps of each kind, 20
// of 12 at the battery's full size, and records the figures of the
// exploration.
func TestBatteryExplore(t *testing.T) {
	seeds, steps := figures.Size(2, 20), figures.Size(6, 12)
	passes, writes := &bosuntest.ReconcileCounter{}, &bosuntest.WriteCounter{}
	cp := shared.ControlPlane(t)
	e := env{c: cp.Client, srv: server(t), ns: bosuntest.Namespace(t, cp.Client), logs: &bosuntest.LogRecorder{}}
	dbs := bosuntest.Namespace(t, e.c)
	// The manager sees the test's namespaces only, not the Roles and
	// Databases other tests leave behind.
	bosuntest.RunManagerWith(t, cp, bosuntest.ManagerOptions{Namespaces: []string{e.ns, dbs}}, func(mgr ctrl.Manager) error {
		bosun.ObservationOf(mgr).AddObserver(bosun.PassObserverFunc(func(_ context.Context, r bosun.PassReport) {
			passes.Record(bosuntest.ReconcileCall{Request: reconcile.Request{NamespacedName: r.Object}, Start: r.Start, Duration: r.Duration})
		}))
		mgr = bosuntest.ManagerWithLogger(mgr, e.logs.Wrap(mgr.GetLogger()))
		mgr = bosuntest.ManagerWithClient(mgr, writes.Wrap(passes.WrapClient(mgr.GetClient())))
		return SetupWithManager(mgr, Options{DSN: e.srv.DSN("postgres")})
	})
	b := battery{srv: e.srv, conn: &sharedConn{dsn: e.srv.DSN("postgres")}}
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	// leftovers checks that nothing is left on the server under the name
	// of obj or marked with its UID, and that the garbage collector took
	// the Secrets it controlled.
	leftovers := func(ctx context.Context, obj client.Object) error {
		inv, err := b.inventory(ctx, []client.Object{obj})
		if err != nil {
			return err
		}
		if ext := inv.externals(); len(ext) > 0 {
			return fmt.Errorf("%s left on the server (owner mark %q)", ext[0].ID, ext[0].Owner)
		}
		return oracle.NoOrphans(ctx, e.c, obj.GetNamespace(), oracle.UIDs([]client.Object{obj}), &corev1.SecretList{})
	}
	roles := explore.Target{
		Client: e.c,
		GVK:    pgv1.GroupVersion.WithKind("Role"),
		Spec:   specOf(t, crds, "Role"),
		// The sample's Role.
		Base:      map[string]any{"login": true, "connectionLimit": int64(5), "connectionSecretName": "shop-credentials"},
		Passes:    passes,
		Writes:    writes,
		Logs:      e.logs,
		Leftovers: leftovers,
	}
	databases := roles
	databases.GVK = pgv1.GroupVersion.WithKind("Database")
	databases.Spec = specOf(t, crds, "Database")
	// The sample's Database, owned by the Role "owner" made below.
	databases.Base = map[string]any{"owner": "owner", "encoding": DefaultEncoding}
	owner := &pgv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: dbs, Name: "owner"}}
	if err := e.c.Create(t.Context(), owner); err != nil {
		t.Fatal(err)
	}
	// The owner's own writes, while it is made, are in the namespace the
	// Databases are explored in: they must be over first.
	waitFor(t, e.c, client.ObjectKeyFromObject(owner), owner, readyTrue)

	stats, failures := &explore.Stats{}, 0
	for seed := range uint64(seeds) {
		for _, k := range []struct {
			target explore.Target
			ns     string
		}{{roles, e.ns}, {databases, dbs}} {
			if err := explore.Run(t.Context(), k.target, k.ns, explore.Options{Seed: seed, Steps: steps, Stats: stats}); err != nil {
				failures++
				t.Errorf("%s, seed %d: %v", k.target.GVK.Kind, seed, err)
			}
		}
	}
	stats.Record(t, "postgres", failures)
}

// specOf returns the schema of the spec of the kind of crds.
func specOf(t *testing.T, crds []*apiextensionsv1.CustomResourceDefinition, kind string) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	for _, crd := range crds {
		if crd.Spec.Names.Kind == kind {
			spec, err := explore.SpecSchema(crd, pgv1.GroupVersion.Version)
			if err != nil {
				t.Fatal(err)
			}
			return spec
		}
	}
	t.Fatalf("no CRD of kind %s", kind)
	return nil
}
