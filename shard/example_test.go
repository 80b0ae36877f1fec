package shard_test

import (
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/shard"
)

// The same members always give the same owner; a member that leaves takes
// only its own keys away.
func ExampleRing() {
	three := shard.NewRing([]string{"a", "b", "c"}, 0)
	two := shard.NewRing([]string{"a", "b"}, 0)
	moved := 0
	for i := range 1000 {
		key := fmt.Sprintf("default/w%d", i)
		if was, is := three.Owner(key), two.Owner(key); was != is {
			if was != "c" {
				fmt.Println("a key of a staying member moved")
			}
			moved++
		}
	}
	fmt.Println(moved > 0 && moved < 500)
	// Output: true
}

// A replica of a sharded operator: every replica runs this, with its own
// identity (its Pod's name).
func Example_replica() {
	member, err := shard.New(shard.Options{
		Ring:      "widgets",
		Identity:  os.Getenv("POD_NAME"),
		Namespace: "widgets-system",
		Object:    &testapi.Widget{},
	})
	if err != nil {
		panic(err)
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = testapi.AddToScheme(scheme)
	opts := ctrl.Options{Scheme: scheme, LeaderElection: true, LeaderElectionID: "widgets-sharder"}
	member.ConfigureCache(&opts.Cache)
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), opts)
	if err != nil {
		panic(err)
	}
	if err := member.SetupWithManager(mgr); err != nil {
		panic(err)
	}
	var r reconcile.Reconciler // the operator's reconciler
	if err := ctrl.NewControllerManagedBy(mgr).
		For(&testapi.Widget{}, builder.WithPredicates(member.Predicate())).
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false)}).
		Complete(member.Wrap(r)); err != nil {
		panic(err)
	}
	_ = mgr.Start(ctrl.SetupSignalHandler())
}
