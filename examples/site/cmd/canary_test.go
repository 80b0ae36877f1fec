package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/examples/site"
	sitev1 "github.com/bosunkit/bosun/examples/site/api/v1alpha1"
	"github.com/bosunkit/bosun/internal/rollout"
	"github.com/bosunkit/bosun/shard"
)

// TestCanaryRollout builds the site operator twice, as versions v1 and
// v2, and runs one replica of each in a shard ring. A canary gives v2 the
// Sites labelled track=canary; then it is promoted to every Site, and
// then aborted, which hands every Site back to v1. At each stage every
// Site is labelled for the replica of the version that the canary
// chooses, a change to a Site is reconciled there, and no child is made
// twice. The replicas publish their passes by version on their Leases.
func TestCanaryRollout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs processes")
	}
	cp := bosuntest.Start(t, mustOptions(t))
	dir := t.TempDir()
	bins := map[string]string{}
	for _, v := range []string{"v1", "v2"} {
		bins[v] = filepath.Join(dir, "site-"+v)
		build := exec.CommandContext(t.Context(), "go", "build", "-ldflags", "-X main.version="+v, "-o", bins[v], ".")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	ns := bosuntest.Namespace(t, cp.Client)
	if err := site.PrepareSamples(t.Context(), cp.Client, ns); err != nil {
		t.Fatal(err)
	}
	const ring = "sites"
	// The canary comes first: a replica of v2 that started without one
	// would take an even share.
	if err := (shard.Canary{Version: "v2", Selector: "track=canary"}).Write(t.Context(), cp.Client, ns, ring); err != nil {
		t.Fatal(err)
	}
	start := func(v, identity string) *replica {
		return startReplica(t, bins[v], kubeconfig, "--leader-election-namespace", ns, "--leader-election-id", "site-canary",
			"--shard-ring", ring, "--shard-identity", identity, "--shard-namespace", ns)
	}
	start("v1", "old")
	start("v2", "new")

	const n = 12
	var sites []*sitev1.Site
	for i := range n {
		s := &sitev1.Site{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("site-%d", i)},
			Spec:       sitev1.SiteSpec{Title: fmt.Sprintf("Site %d", i), Pages: []string{"index"}},
		}
		if i%3 == 0 {
			s.Labels = map[string]string{"track": "canary"}
		}
		if err := cp.Client.Create(t.Context(), s); err != nil {
			t.Fatal(err)
		}
		sites = append(sites, s)
	}
	// settle waits until every Site is labelled for the member want names
	// and Ready for its current generation.
	settle := func(stage string, want func(*sitev1.Site) string) {
		t.Helper()
		bosuntest.Eventually(t, func(ctx context.Context) error {
			var errs []error
			for _, s := range sites {
				got := &sitev1.Site{}
				if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(s), got); err != nil {
					return err
				}
				if m, w := got.Labels[shard.LabelPrefix+ring], want(got); m != w || got.Labels[shard.DrainPrefix+ring] != "" {
					errs = append(errs, fmt.Errorf("%s: %s is labelled for %q, want %q", stage, got.Name, m, w))
				}
				if !meta.IsStatusConditionTrue(got.Status.Conditions, "Ready") || got.Status.ObservedGeneration != got.Generation {
					errs = append(errs, fmt.Errorf("%s: %s not Ready for generation %d: %v", stage, got.Name, got.Generation, got.Status.Conditions))
				}
			}
			return errors.Join(errs...)
		}, bosuntest.Timeout(2*time.Minute))
	}
	// change retitles every Site, so that each member must reconcile its
	// own for them to be Ready again.
	change := func(title string) {
		t.Helper()
		for _, s := range sites {
			bosuntest.Eventually(t, func(ctx context.Context) error {
				got := &sitev1.Site{}
				if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(s), got); err != nil {
					return err
				}
				got.Spec.Title = title + " " + got.Name
				return cp.Client.Update(ctx, got)
			})
		}
	}
	byLabel := func(s *sitev1.Site) string {
		if s.Labels["track"] == "canary" {
			return "new"
		}
		return "old"
	}
	settle("canary by label", byLabel)

	if err := (shard.Canary{Version: "v2", Percent: 100}).Write(t.Context(), cp.Client, ns, ring); err != nil {
		t.Fatal(err)
	}
	change("promoted")
	settle("promoted", func(*sitev1.Site) string { return "new" })

	if err := (shard.Canary{Version: "v2"}).Write(t.Context(), cp.Client, ns, ring); err != nil {
		t.Fatal(err)
	}
	change("handed back")
	settle("handed back", func(*sitev1.Site) string { return "old" })

	if got, want := countChildren(t.Context(), t, cp, ns), 2*n; got != want {
		t.Errorf("%d children (ConfigMaps and Services) for %d Sites; want %d, one of each per Site", got, n, want)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		var leases coordinationv1.LeaseList
		if err := cp.Client.List(ctx, &leases, client.InNamespace(ns), client.MatchingLabels{rollout.LabelRing: ring}); err != nil {
			return err
		}
		sum := rollout.Summarize(ring, leases.Items, time.Now())
		if len(sum.Versions) != 2 {
			return fmt.Errorf("versions of the ring: %+v", sum.Versions)
		}
		for _, v := range sum.Versions {
			if v.Passes == 0 || v.Seconds <= 0 {
				return fmt.Errorf("version %s: %d passes in %.3fs", v.Version, v.Passes, v.Seconds)
			}
		}
		return nil
	})
}
