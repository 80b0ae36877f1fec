package migrate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/migrate"
)

// TestMigrateRightAfterTheStorageVersionMoves runs a migration
// the moment the CRD's storage version moves, as a leader whose check
// falls right after a release's CRD update does (or the matrix's
// migrators, which look every 200 ms). The API server takes a new storage
// version up only when its own watch of CRDs delivers the update to the
// handler of custom resources, which needs that handler's lock; until
// then the requests it serves use the handler built for the old CRD, and
// an unchanged update encodes at the old version and writes nothing. The
// test keeps that lock busy, as any CRD's first request after a change
// does while the server builds its handler (a large schema takes long),
// by changing and reading a CRD with a large schema in a loop.
//
// The objects were all stored at the old version, so each must get a new
// resourceVersion before storedVersions lists the new version alone;
// otherwise an object is left at a version the CRD says no object is
// stored at, and dropping that version from the CRD makes it unreadable.
//
// Without Options.Settle's wait it failed on every run (objects left with
// their resourceVersion while storedVersions was trimmed). It loads the
// API server for about 20 s.
func TestMigrateRightAfterTheStorageVersionMoves(t *testing.T) {
	const n, rounds = 10, 3
	c, crd, rvs := fixture(t, "Doohickey", "doohickeys", n)
	m, err := migrate.New(c, migrate.Options{CRD: crd, RateLimit: 1e6, Metrics: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	busy := busyCRDHandler(t, c)
	for round := range rounds {
		target := []string{"v2", "v1"}[round%2]
		func() {
			if round == 0 {
				// The fixture moved the storage to v2: the first
				// round migrates to it without a busy server.
				if err := m.Migrate(t.Context()); err != nil {
					t.Fatalf("round %d: Migrate: %v", round, err)
				}
				return
			}
			defer busy()()
			setStorage(t, c, crd, target)
			if err := m.Migrate(t.Context()); err != nil {
				t.Fatalf("round %d: Migrate: %v", round, err)
			}
		}()
		if got := storedVersions(t.Context(), t, c, crd); !slices.Equal(got, []string{target}) {
			t.Fatalf("round %d: storedVersions = %v, want [%s]", round, got, target)
		}
		_, after := objects(t, c, "Doohickey")
		var stale []string
		for name, rv := range rvs {
			if after[name] == rv {
				stale = append(stale, name)
			}
		}
		if len(stale) > 0 {
			slices.Sort(stale)
			t.Fatalf("round %d: storedVersions says [%s] alone, but %d of %d objects were not written since they were stored at the other version (resourceVersion unchanged): %v",
				round, target, len(stale), n, stale)
		}
		rvs = after
		t.Logf("round %d: all %d objects rewritten at %s", round, n, target)
	}
}

// busyCRDHandler installs a CRD with a large schema and returns a function
// that starts changing it and listing its objects in a loop, each list
// after a change making the API server build the CRD's handler under the
// lock that every CRD's update waits for; the function it returns stops
// the loop and waits for it.
// lag is how long a list of the large CRD's objects takes when the API
// server's handler of custom resources has a backlog of CRD updates: the
// list waits for the lock behind them.
const lag = time.Second

func busyCRDHandler(t *testing.T, c client.Client) func() func() {
	t.Helper()
	heavy := newCRD("Heavy", "heavies")
	heavy.Spec.Versions = heavy.Spec.Versions[:1]
	props := map[string]apiextensionsv1.JSONSchemaProps{}
	for i := range 1500 {
		inner := map[string]apiextensionsv1.JSONSchemaProps{}
		for j := range 10 {
			inner[fmt.Sprintf("f%d", j)] = apiextensionsv1.JSONSchemaProps{Type: "string"}
		}
		props[fmt.Sprintf("p%d", i)] = apiextensionsv1.JSONSchemaProps{Type: "object", Properties: inner}
	}
	heavy.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props}
	if err := c.Create(t.Context(), heavy); err != nil {
		t.Fatal(err)
	}
	waitServed(t, c, heavy.Name, "v1")
	return func() func() {
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		lagging := make(chan struct{}, 1)
		wg.Add(2)
		go func() {
			defer wg.Done()
			for k := 0; ctx.Err() == nil; k++ {
				cur := &apiextensionsv1.CustomResourceDefinition{}
				if err := c.Get(ctx, types.NamespacedName{Name: heavy.Name}, cur); err != nil {
					continue
				}
				cur.Spec.Versions[0].Schema.OpenAPIV3Schema.Description = fmt.Sprint(k)
				_ = c.Update(ctx, cur)
			}
		}()
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				list := &unstructured.UnstructuredList{}
				list.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: "v1", Kind: "HeavyList"})
				start := time.Now()
				_ = c.List(ctx, list)
				if time.Since(start) > lag {
					select {
					case lagging <- struct{}{}:
					default:
					}
				}
			}
		}()
		select {
		case <-lagging:
		case <-t.Context().Done():
		}
		return func() { cancel(); wg.Wait() }
	}
}

// TestResumeAfterTheStorageVersionWentBackAndForth stops a
// migration to v2 after its first page, as a crash does, with its
// progress recorded on the CRD; then the release is rolled back (v1
// stored again) and an object of that first page is written meanwhile,
// so it is stored at v1; then v2 is stored again and a new Migrator
// resumes. The recorded progress targets v2, as the storage version is
// again, but the first page is no longer all at v2: skipping it leaves
// the object at v1 while storedVersions says [v2].
func TestResumeAfterTheStorageVersionWentBackAndForth(t *testing.T) {
	const n, batch = 6, 3
	c, crd, _ := fixture(t, "Thingamajig", "thingamajigs", n)
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "default", Name: name} }
	// rewriteMoves writes the object unchanged until the API server, once
	// it encodes at the other version than the object's, stores it anew.
	rewriteMoves := func(name string) {
		t.Helper()
		bosuntest.Eventually(t, func(ctx context.Context) error {
			obj := object("Thingamajig", "v2", name)
			if err := c.Get(ctx, key(name), obj); err != nil {
				return err
			}
			rv := obj.GetResourceVersion()
			if err := c.Update(ctx, obj); err != nil {
				return err
			}
			if obj.GetResourceVersion() == rv {
				return fmt.Errorf("%s: an unchanged update wrote nothing yet", name)
			}
			return nil
		})
	}

	// A migration to v2 that got through its first page and recorded its
	// progress, as the Migrator does, before its process ended.
	page := &unstructured.UnstructuredList{}
	page.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: "v2", Kind: "ThingamajigList"})
	if err := c.List(t.Context(), page, client.Limit(batch)); err != nil {
		t.Fatal(err)
	}
	for _, item := range page.Items {
		rewriteMoves(item.GetName())
	}
	progress, err := json.Marshal(migrate.Progress{Target: "v2", Continue: page.GetContinue()})
	if err != nil {
		t.Fatal(err)
	}
	cur := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(t.Context(), types.NamespacedName{Name: crd}, cur); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(cur.DeepCopy())
	metav1.SetMetaDataAnnotation(&cur.ObjectMeta, migrate.ProgressAnnotation, string(progress))
	if err := c.Patch(t.Context(), cur, patch); err != nil {
		t.Fatal(err)
	}

	// The rollback: v1 stored again, and the first page's first object
	// written meanwhile (stored at v1 again).
	first := page.Items[0].GetName()
	setStorage(t, c, crd, "v1")
	rewriteMoves(first)
	// The upgrade again: v2 stored, and the API server encodes at v2 once
	// the last object (of the second page, stored at v1) is written anew.
	setStorage(t, c, crd, "v2")
	rewriteMoves(fmt.Sprintf("obj-%03d", n-1))

	m, err := migrate.New(c, migrate.Options{CRD: crd, BatchSize: batch, Metrics: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	if got := storedVersions(t.Context(), t, c, crd); !slices.Equal(got, []string{"v2"}) {
		t.Fatalf("storedVersions = %v, want [v2]", got)
	}
	obj := object("Thingamajig", "v2", first)
	if err := c.Get(t.Context(), key(first), obj); err != nil {
		t.Fatal(err)
	}
	rv := obj.GetResourceVersion()
	if err := c.Update(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
	if obj.GetResourceVersion() != rv {
		t.Errorf("storedVersions says [v2] alone, but %s, written while v1 was stored again, was still stored at v1 (an unchanged update wrote it: resourceVersion %s -> %s)", first, rv, obj.GetResourceVersion())
	}
}
