package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/internal/rollout"
	"github.com/bosunkit/bosun/shard"
)

// TestCanaryCommands runs `bosun canary` against a control plane whose
// ring has two live members, of versions v1 and v2, as their Leases say
// (the members themselves are package shard's TestCanary): set, promote,
// abort and end write the record the sharder reads, and status compares
// the versions from the members' pass counts.
func TestCanaryCommands(t *testing.T) {
	cp := bosuntest.Start(t, controlplane.Options{})
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	ns := bosuntest.Namespace(t, cp.Client)
	now := metav1.NewMicroTime(time.Now())
	for member, v := range map[string]struct {
		version string
		stats   rollout.Stats
	}{
		"a": {"v1", rollout.Stats{Passes: 200, Errors: 2, Seconds: 4}},
		"b": {"v2", rollout.Stats{Passes: 50, Errors: 10, Seconds: 5}},
	} {
		lease := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: ns, Name: shard.LeaseName("widgets", member),
				Labels:      map[string]string{rollout.LabelRing: "widgets", rollout.LabelVersion: v.version},
				Annotations: map[string]string{rollout.AnnotationPasses: v.stats.Encode()},
			},
			// An hour, so that the members stay alive through the test.
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(member), LeaseDurationSeconds: ptr.To[int32](3600), RenewTime: &now, AcquireTime: &now},
		}
		if err := cp.Client.Create(t.Context(), lease); err != nil {
			t.Fatal(err)
		}
	}
	canary := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		cmd := newRootCommand()
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(append(append([]string{"canary"}, args...), "widgets", "-n", ns, "--kubeconfig", kubeconfig))
		if err := cmd.ExecuteContext(t.Context()); err != nil {
			t.Fatalf("bosun canary %v: %v\n%s", args, err, out.String())
		}
		return out.String()
	}
	record := func() map[string]string {
		t.Helper()
		var lease coordinationv1.Lease
		if err := cp.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "widgets.canary"}, &lease); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for k, v := range lease.Annotations {
			if strings.HasPrefix(k, "canary.shard.bosun.dev/") {
				got[strings.TrimPrefix(k, "canary.shard.bosun.dev/")] = v
			}
		}
		return got
	}
	want := func(stage string, w map[string]string) {
		t.Helper()
		if diff := cmp.Diff(w, record()); diff != "" {
			t.Errorf("%s: the canary record (-want +got):\n%s", stage, diff)
		}
	}

	if out := canary("status"); !strings.Contains(out, "no canary") {
		t.Errorf("status before a canary:\n%s", out)
	}
	canary("set", "--version", "v2", "--percent", "10", "--selector", "tier=test")
	want("set", map[string]string{"version": "v2", "percent": "10", "selector": "tier=test"})
	out := canary("status")
	for _, line := range []string{
		"ring widgets: canary v2 takes 10% of the objects and those matching tier=test",
		"v1       1        200     2       1.0%        20ms",
		"v2       1        50      10      20.0%       100ms",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("status does not say %q:\n%s", line, out)
		}
	}
	canary("promote")
	want("promote", map[string]string{"version": "v2", "percent": "100", "selector": ""})
	canary("abort")
	want("abort", map[string]string{"version": "v2", "percent": "0", "selector": ""})
	canary("end")
	var leases coordinationv1.LeaseList
	if err := cp.Client.List(t.Context(), &leases, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(leases.Items) != 2 {
		t.Errorf("%d leases after end, want the two members'", len(leases.Items))
	}

	// Promote and abort need a canary; set needs a version.
	for _, args := range [][]string{{"promote"}, {"set", "--percent", "5"}, {"set", "--version", "v2", "--percent", "200"}} {
		cmd := newRootCommand()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(append(append([]string{"canary"}, args...), "widgets", "-n", ns, "--kubeconfig", kubeconfig))
		if err := cmd.ExecuteContext(t.Context()); err == nil {
			t.Errorf("bosun canary %v succeeded:\n%s", args, out.String())
		}
	}
}
