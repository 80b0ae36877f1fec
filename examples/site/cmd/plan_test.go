package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/examples/site"
	sitev1 "github.com/bosunkit/bosun/examples/site/api/v1alpha1"
	"github.com/bosunkit/bosun/operator"
	"github.com/bosunkit/bosun/shard"
)

// TestPlanOfAShardedOperator runs the site operator as a member of a shard
// ring that holds every Site, then a --plan of the same operator as
// another member of the ring beside it: the plan covers every Site,
// though its member's dry-run Lease holds none, and changes nothing.
func TestPlanOfAShardedOperator(t *testing.T) {
	cp := bosuntest.Start(t, mustOptions(t))
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	ns := bosuntest.Namespace(t, cp.Client)
	if err := site.PrepareSamples(t.Context(), cp.Client, ns); err != nil {
		t.Fatal(err)
	}
	const ring, n = "sites", 6
	for i := range n {
		s := &sitev1.Site{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("site-%d", i)},
			Spec:       sitev1.SiteSpec{Title: fmt.Sprintf("Site %d", i), Pages: []string{"index"}},
		}
		if err := cp.Client.Create(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
	*shardRing, *shardNamespace = ring, ns
	t.Cleanup(func() { *shardRing, *shardIdentity, *shardNamespace = "", "", "" })

	// The live member, which leads and so runs the sharder.
	*shardIdentity = "live"
	flags := operator.DefaultFlags()
	flags.ProbeAddr, flags.MetricsAddr = "0", "0"
	flags.LeaderElect, flags.LeaderElectionNamespace, flags.LeaderElectionID = true, ns, "site-plan"
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- operator.Run(ctx, inProcess(), flags, &strings.Builder{}) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the live member: %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("the live member still runs a minute after its context ended")
		}
	})
	bosuntest.Eventually(t, func(ctx context.Context) error {
		var list sitev1.SiteList
		if err := cp.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, s := range list.Items {
			if s.Labels[shard.LabelPrefix+ring] != "live" || !meta.IsStatusConditionTrue(s.Status.Conditions, "Ready") {
				return fmt.Errorf("%s: labelled for %q, conditions %v", s.Name, s.Labels[shard.LabelPrefix+ring], s.Status.Conditions)
			}
		}
		if len(list.Items) != n {
			return fmt.Errorf("%d Sites, want %d", len(list.Items), n)
		}
		return nil
	}, bosuntest.Timeout(2*time.Minute))
	before := versions(t, cp.Client, ns)

	*shardIdentity = "plan"
	pflags := operator.DefaultFlags()
	pflags.ProbeAddr, pflags.MetricsAddr, pflags.Plan = "0", "0", true
	pctx, pcancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer pcancel()
	out := &strings.Builder{}
	if err := operator.Run(pctx, inProcess(), pflags, out); err != nil {
		t.Fatalf("--plan: %v\n%s", err, out)
	}
	report := out.String()
	if !strings.Contains(report, fmt.Sprintf("plan: %d objects, ", n)) || strings.Contains(report, "no pass ran") {
		t.Errorf("the plan of a member beside the live one does not cover the %d Sites:\n%s", n, report)
	}
	for i := range n {
		if !strings.Contains(report, fmt.Sprintf("Site %s/site-%d ", ns, i)) {
			t.Errorf("the plan has no section for site-%d:\n%s", i, report)
		}
	}
	if after := versions(t, cp.Client, ns); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("--plan changed the Sites:\nbefore %v\nafter  %v", before, after)
	}
}

// inProcess is options() for a run beside others in the test's process:
// controller names may repeat.
func inProcess() operator.Options {
	opts := options()
	configure := opts.Manager
	opts.Manager = func(o *ctrl.Options) {
		configure(o)
		o.Controller.SkipNameValidation = ptr.To(true)
	}
	return opts
}

// versions returns the resourceVersions of the Sites of ns.
func versions(t *testing.T, c client.Client, ns string) map[string]string {
	t.Helper()
	var list sitev1.SiteList
	if err := c.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range list.Items {
		got[s.Name] = s.ResourceVersion
	}
	return got
}
