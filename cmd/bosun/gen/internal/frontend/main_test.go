package frontend_test

import (
	"testing"

	"github.com/bosunkit/bosun/bosuntest"
)

// shared is the control plane the envtest tests of this package share; the
// states read built-in kinds only, so it needs no CRDs. Each test runs its own
// manager and works in namespaces of its own.
var shared bosuntest.Shared

func TestMain(m *testing.M) { shared.Main(m) }
