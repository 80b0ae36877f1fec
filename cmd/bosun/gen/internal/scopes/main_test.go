package scopes_test

import (
	"testing"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/cmd/bosun/gen/internal/testapi"
	"github.com/bosunkit/bosun/cmd/bosun/gen/internal/testapi/crd"
	"github.com/bosunkit/bosun/controlplane"
)

// shared is the control plane, with the Target CRD installed, that the
// envtest tests of this package share.
var shared = bosuntest.Shared{Options: controlplane.OptionsFor(testapi.AddToScheme, crd.CRDs)}

func TestMain(m *testing.M) { shared.Main(m) }
