package shard_test

import (
	"context"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/shard"
)

// The same members always give the same owner; a member that leaves takes
// only its own keys away.
func ExampleRing() {
	three := shard.NewRing([]string{"a", "b", "c"}, 0)
	two := shard.NewRing([]string{"a", "b"}, 0)
	moved, stayed := 0, true
	for i := range 1000 {
		key := fmt.Sprintf("default/w%d", i)
		if was, is := three.Owner(key), two.Owner(key); was != is {
			stayed = stayed && was == "c"
			moved++
		}
	}
	fmt.Println("only c's keys moved:", stayed)
	fmt.Println("about a third moved:", moved > 250 && moved < 420)
	// Output:
	// only c's keys moved: true
	// about a third moved: true
}

// A replica of a sharded operator: every replica runs this, with its own
// identity (its Pod's name). The bosun controller reconciles only this
// replica's Widgets.
func Example() {
	identity := os.Getenv("POD_NAME")
	if identity == "" {
		identity = "widgets-0"
	}
	member, err := shard.New(shard.Options{
		Ring:      "widgets",
		Identity:  identity,
		Namespace: "widgets-system",
		Object:    &testapi.Widget{},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = testapi.AddToScheme(scheme)
	opts := ctrl.Options{Scheme: scheme, LeaderElection: true, LeaderElectionID: "widgets-sharder", LeaderElectionNamespace: "widgets-system"}
	member.ConfigureCache(&opts.Cache)
	run := func(ctx context.Context) error {
		mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), opts)
		if err != nil {
			return err
		}
		if err := member.SetupWithManager(mgr); err != nil {
			return err
		}
		r := &bosun.Reconciler[*testapi.Widget]{
			Name: "widgets",
			Steps: []bosun.Step[*testapi.Widget]{bosun.NewStep("work", func(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
				return ctrl.Result{}, nil
			})},
		}
		if err := bosun.ControllerManagedBy[*testapi.Widget](mgr).
			For(nil, builder.WithPredicates(member.Predicate())).
			// The objects taken over as their standby (Options.Standby).
			WatchesRawSource(member.Takeovers()).
			WithOptions(member.ControllerOptions(controller.Options{})).
			Complete(r); err != nil {
			return err
		}
		return mgr.Start(ctx)
	}
	_ = run // run(ctrl.SetupSignalHandler()) in main
	fmt.Println(member.ShardLabel(), member.DrainLabel())
	// Output: shard.bosun.dev/widgets drain.shard.bosun.dev/widgets
}

// Roll version v1.5.0 of an operator out to a tenth of the Widgets, then
// to all of them. Its replicas run with Options.Version "v1.5.0"; the
// others keep the rest until the promotion.
func ExampleCanary() {
	ctx := context.Background()
	c, err := client.New(ctrl.GetConfigOrDie(), client.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	canary := shard.Canary{Version: "v1.5.0", Percent: 10}
	if err := canary.Write(ctx, c, "widgets-system", "widgets"); err != nil {
		fmt.Println(err)
		return
	}
	// ... compare the versions: bosun canary status widgets -n widgets-system
	canary.Percent = 100
	if err := canary.Write(ctx, c, "widgets-system", "widgets"); err != nil {
		fmt.Println(err)
	}
}
