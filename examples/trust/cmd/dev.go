//go:build bosundev

package main

// A development build (go run -tags bosundev ./cmd --dev, or bosun dev)
// links the embedded control plane of --dev; a release build does not.
import _ "github.com/bosunkit/bosun/operator/dev"
