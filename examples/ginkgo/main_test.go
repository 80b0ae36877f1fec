package ginkgo_test

import (
	"testing"

	"github.com/bosunkit/bosun/bosuntest"
)

// shared is the control plane of this package's tests, started once.
var shared bosuntest.Shared

func TestMain(m *testing.M) { shared.Main(m) }
