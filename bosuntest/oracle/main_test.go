package oracle_test

import (
	"testing"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/internal/testapi"
)

// shared is the control plane, with the Widget CRD installed, that the
// envtest tests of this package share.
var shared = bosuntest.Shared{Options: testapi.ControlPlaneOptions}

func TestMain(m *testing.M) { shared.Main(m) }
