// Command bare runs the memcached example's controller on a bare
// controller-runtime manager: no flags beyond controller-runtime's own, no
// tracing, no debug page, no plan, no dev cluster. It is the baseline the
// binary-size bench (bench/binsize) compares package operator with.
package main

import (
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/bosunkit/bosun/examples/memcached"
)

func main() {
	ctrl.SetLogger(zap.New())
	log := ctrl.Log.WithName("bare")
	scheme := runtime.NewScheme()
	if err := memcached.AddToScheme(scheme); err != nil {
		log.Error(err, "building the scheme")
		os.Exit(1)
	}
	opts := ctrl.Options{Scheme: scheme, LeaderElection: true, LeaderElectionID: "memcached.bosun.dev"}
	memcached.LimitPodCache(&opts)
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), opts)
	if err != nil {
		log.Error(err, "making the manager")
		os.Exit(1)
	}
	if err := memcached.SetupWithManager(mgr); err != nil {
		log.Error(err, "setting up the controller")
		os.Exit(1)
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "running the manager")
		os.Exit(1)
	}
}
