package faults

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/migrate"
)

// migrationInterval is how often the migrators of the migrated feature
// look at the CRD: short, so that the migration starts soon after the
// storage version moves (and migrate.DefaultSettle after that, its first
// rewrite).
const migrationInterval = 200 * time.Millisecond

// crdWritesBudget is what a migration may write to the CRD: its progress
// (one page at the matrix's sizes, so none), the progress's removal and
// the trim of status.storedVersions, with one write to spare for a
// migration a crash or a lost answer makes start again.
const crdWritesBudget = 3

// withMigrator returns setup followed by the addition of a
// migrate.Migrator of crd to the manager, with a client of its own from
// the manager's configuration (the process's faults included) and a
// metrics registry of its own.
func withMigrator(setup func(ctrl.Manager, *Process) error, crd string) func(ctrl.Manager, *Process) error {
	return func(mgr ctrl.Manager, p *Process) error {
		if err := setup(mgr, p); err != nil {
			return err
		}
		c, err := crdClient(mgr.GetConfig(), mgr.GetHTTPClient())
		if err != nil {
			return err
		}
		m, err := migrate.New(c, migrate.Options{CRD: crd, Interval: migrationInterval, Metrics: prometheus.NewRegistry()})
		if err != nil {
			return err
		}
		return mgr.Add(m)
	}
}

// crdClient returns a client of cfg that reads from the API server and
// knows CRDs; a nil hc means one made from cfg.
func crdClient(cfg *rest.Config, hc *http.Client) (client.Client, error) {
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme, HTTPClient: hc})
}

// storageMove is the migrated feature's move of a cell's storage
// version to target, with the kit's own client of CRDs on the cell's
// control plane.
type storageMove struct {
	c      *cell
	cl     client.Client
	target string
}

// moveStorage makes the API server store the kind of the operator's
// objects of cell c at the next version its CRD serves, as the release
// that moves the storage version does.
func moveStorage(c *cell) *storageMove {
	ctx := c.t.Context()
	cl, err := crdClient(c.b.cp.Config, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := cl.Get(ctx, client.ObjectKey{Name: c.b.op.Migration.CRD}, crd); err != nil {
		c.t.Fatal(err)
	}
	vs := crd.Spec.Versions
	at := slices.IndexFunc(vs, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Storage })
	if len(vs) < 2 || at < 0 {
		c.t.Fatalf("the CRD %s serves %d versions, want two or more, one of them stored", crd.Name, len(vs))
	}
	target := vs[(at+1)%len(vs)].Name
	for i := range vs {
		vs[i].Storage = vs[i].Name == target
	}
	if err := cl.Update(ctx, crd); err != nil {
		c.t.Fatal(err)
	}
	c.t.Logf("the CRD %s stores %s from now on", crd.Name, target)
	return &storageMove{c: c, cl: cl, target: target}
}

// waitRewriting waits, from since, the moment the storage version moved,
// until a process's migration has made its first rewrite of an object,
// so that the spec change, and the operator's writes it brings, meet the
// migration at work. Under a network partition the first process is cut
// off until after the change, and its migration with it: the change goes
// at once.
func (m *storageMove) waitRewriting(since time.Time) {
	c := m.c
	if c.x == networkPartition {
		return
	}
	bound := c.b.bound() + migrate.DefaultSettle
	err := poll(c.t.Context(), bound, func(context.Context) error {
		for _, p := range c.procs {
			for _, call := range p.Calls() {
				// The operator patches its objects; the migration
				// updates them.
				if call.At.After(since) && !call.External && call.Verb == "update" && c.ours(call) && !strings.Contains(call.Resource, "/") {
					return nil
				}
			}
		}
		return errors.New("no rewrite by the migration yet")
	})
	if err != nil {
		c.t.Fatalf("the migration did not start within %s: %v", bound, err)
	}
}

// check checks the promise of the migrated feature once the objects
// converged after the spec change: the CRD's storedVersions end as the
// target alone, every object is stored at target, each reads as
// the kit last wrote it, and the migration wrote the CRD at most
// crdWritesBudget times.
func (m *storageMove) check(objs []client.Object) {
	c, target := m.c, m.target
	ctx := c.t.Context()
	name := c.b.op.Migration.CRD
	err := poll(ctx, c.b.bound(), func(ctx context.Context) error {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := m.cl.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return err
		}
		if got := crd.Status.StoredVersions; !slices.Equal(got, []string{target}) {
			return fmt.Errorf("the CRD's storedVersions are %v, want [%s]", got, target)
		}
		if _, ok := crd.Annotations[migrate.ProgressAnnotation]; ok {
			return errors.New("the CRD still records a migration in progress")
		}
		return nil
	})
	if err != nil {
		c.t.Fatalf("the migration did not end within %s: %v", c.b.bound(), err)
	}
	var errs []error
	for _, o := range objs {
		if err := m.checkRewritten(ctx, o); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", o.GetName(), err))
		}
	}
	if n := m.crdWrites(); n > crdWritesBudget {
		errs = append(errs, fmt.Errorf("the migration wrote the CRD %d times, budget %d", n, crdWritesBudget))
	}
	if err := errors.Join(errs...); err != nil {
		c.t.Error(err)
	}
	c.result.oracles++
}

// checkRewritten checks that o reads as the kit last wrote it (its spec,
// and its labels and annotations among the live ones) and is stored at
// the storage version: an update that changes nothing is written to etcd
// only when the object is stored at another version than the API server
// encodes it at now (see package migrate), so its resourceVersion must
// not move.
func (m *storageMove) checkRewritten(ctx context.Context, o client.Object) error {
	c := m.c
	cur, _ := o.DeepCopyObject().(client.Object)
	if err := c.b.cp.Client.Get(ctx, client.ObjectKeyFromObject(o), cur); err != nil {
		return err
	}
	want, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return err
	}
	got, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cur)
	if err != nil {
		return err
	}
	var errs []error
	if d := cmp.Diff(want["spec"], got["spec"]); d != "" {
		errs = append(errs, fmt.Errorf("spec lost in the migration (-written +read):\n%s", d))
	}
	for _, m := range []struct {
		what      string
		want, got map[string]string
	}{{"label", o.GetLabels(), cur.GetLabels()}, {"annotation", o.GetAnnotations(), cur.GetAnnotations()}} {
		for k, v := range m.want {
			if g, ok := m.got[k]; !ok || g != v {
				errs = append(errs, fmt.Errorf("%s %s is %q, want %q", m.what, k, g, v))
			}
		}
	}
	rv := cur.GetResourceVersion()
	if err := c.b.cp.Client.Update(ctx, cur); err != nil {
		return errors.Join(append(errs, fmt.Errorf("writing it unchanged: %w", err))...)
	}
	if cur.GetResourceVersion() != rv {
		errs = append(errs, fmt.Errorf("still stored at an earlier version: an unchanged update moved its resourceVersion from %s to %s", rv, cur.GetResourceVersion()))
	}
	return errors.Join(errs...)
}

// crdWrites counts the writes of CRDs the cell's processes made: the
// migrations', since the operator writes none.
func (m *storageMove) crdWrites() int {
	c, n := m.c, 0
	for _, p := range c.procs {
		for _, call := range p.Calls() {
			if call.TookEffect() && c.migrationOf(call) {
				n++
			}
		}
	}
	return n
}
