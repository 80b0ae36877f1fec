package bosuntest_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
)

// A package whose tests share one control plane declares a Shared; the first
// test that calls ControlPlane starts it and TestMain stops it at the end.
func ExampleShared() {
	shared := &bosuntest.Shared{Options: func() (controlplane.Options, error) {
		return controlplane.Options{CRDPaths: []string{"../config/crd"}}, nil
	}}
	testMain := func(m *testing.M) { shared.Main(m) }
	testSomething := func(t *testing.T) {
		cp := shared.ControlPlane(t)
		_ = cp.Client
	}
	_, _ = testMain, testSomething
}

// A test runs its controller in a manager, works in its own namespace and
// waits for the controller's result.
func ExampleRunManager() {
	testCopier := func(t *testing.T) {
		cp := bosuntest.Start(t, controlplane.Options{})
		ns := bosuntest.Namespace(t, cp.Client)
		bosuntest.RunManager(t, cp, func(mgr ctrl.Manager) error {
			// Register the controller under test here, e.g.
			// return (&CopierReconciler{}).SetupWithManager(mgr)
			return nil
		})

		bosuntest.Eventually(t, func(ctx context.Context) error {
			var cm corev1.ConfigMap
			return cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "result"}, &cm)
		})
	}
	_ = testCopier
}
