package hello

import (
	"testing"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
)

// shared is the control plane (a real kube-apiserver and etcd, with the
// Greeting CRD installed) that the envtest tests of this package share; the
// first of them starts it. Each runs its own manager with runController and
// works in a namespace of its own from bosuntest.Namespace.
var shared = bosuntest.Shared{Options: controlplane.OptionsFor(AddToScheme, CRDs)}

func TestMain(m *testing.M) { shared.Main(m) }

// runController runs the Greeting controller, set up as the demo sets it up,
// until the calling test ends, and returns the shared control plane.
func runController(t *testing.T) *controlplane.ControlPlane {
	t.Helper()
	cp := shared.ControlPlane(t)
	bosuntest.RunManager(t, cp, SetupWithManager)
	return cp
}
