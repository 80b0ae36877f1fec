// Command site runs the site example operator: in a cluster from its
// Deployment (see ../config), against the cluster of a kubeconfig, or with
// --dev against an embedded control plane with its samples. Run it with
// --help for the flags; package operator describes them.
//
// With --shard-ring, the replica is a member of a shard ring (package
// shard): the replicas share the Sites, each reconciling its own, and a
// canary rollout (`bosun canary`) can give a new build a share of them;
// --shard-standby gives every Site a standby replica that takes it over
// the moment the sharder closes the Lease of a replica that died.
// The build's version, the member's shard.Options.Version, is set at link
// time: go build -ldflags "-X main.version=v2".
package main

import (
	"flag"
	"os"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/examples/site"
	sitev1 "github.com/bosunkit/bosun/examples/site/api/v1alpha1"
	"github.com/bosunkit/bosun/operator"
	"github.com/bosunkit/bosun/shard"
)

// version is this build's version in its shard ring.
var version = ""

var (
	shardRing      = flag.String("shard-ring", "", "share the Sites with the other replicas of this shard ring (empty: this replica reconciles them all)")
	shardIdentity  = flag.String("shard-identity", os.Getenv("POD_NAME"), "this replica's name in the ring (default: $POD_NAME)")
	shardNamespace = flag.String("shard-namespace", os.Getenv("POD_NAMESPACE"), "the namespace of the ring's Leases (default: $POD_NAMESPACE)")
	shardStandby   = flag.Bool("shard-standby", false, "give every Site a standby replica that takes it over the moment its replica's Lease is closed; each replica caches about twice its share (set it alike on every replica)")
)

func main() { operator.Main(options()) }

// options describe the operator to operator.Main, and to its tests.
func options() operator.Options {
	var member *shard.Member
	var memberErr error
	return operator.Options{
		Name:        "site",
		AddToScheme: site.AddToScheme,
		CRDs:        site.CRDs,
		Prepare:     site.PrepareSamples,
		Samples:     site.Samples,
		// Called once the flags are parsed, before the manager is made.
		Manager: func(o *ctrl.Options) {
			if *shardRing == "" {
				return
			}
			member, memberErr = shard.New(shard.Options{Ring: *shardRing, Identity: *shardIdentity, Namespace: *shardNamespace, Object: &sitev1.Site{}, Version: version, Standby: *shardStandby})
			if memberErr == nil {
				member.ConfigureCache(&o.Cache)
			}
		},
		Setup: func(mgr ctrl.Manager) error {
			if memberErr != nil {
				return memberErr
			}
			if member == nil {
				return site.SetupWithManager(mgr)
			}
			if err := member.SetupWithManager(mgr); err != nil {
				return err
			}
			return bosun.ControllerManagedBy[*sitev1.Site](mgr).
				For(nil, builder.WithPredicates(member.Predicate())).
				WatchesRawSource(member.Takeovers()).
				WithOptions(controller.Options{NeedLeaderElection: ptr.To(false)}).
				WrapReconciler(member.Wrap).
				Complete(site.NewReconciler())
		},
	}
}
