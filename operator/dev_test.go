package operator_test

// The tests of --dev run the embedded control plane, which a release build
// of an operator leaves out.
import _ "github.com/bosunkit/bosun/operator/dev"
