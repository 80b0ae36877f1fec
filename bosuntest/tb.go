package bosuntest

import "context"

// TB is what the helpers of bosuntest and its packages need of a test:
// *testing.T and *testing.B satisfy it, and so does Ginkgo's GinkgoT(), so
// Ginkgo suites use the helpers as they are.
type TB interface {
	Helper()
	Cleanup(func())
	Context() context.Context
	Name() string
	Error(args ...any)
	Errorf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Log(args ...any)
	Logf(format string, args ...any)
}
