// Package readme tests the "Your first operator" section of the repository's
// README.md, so that its code never drifts from bosun.
//
// The test takes the section's code blocks, each of which names its file on
// its first line ("// greeting.go", "# crd.yaml"), writes them into a new Go
// module that requires this checkout of bosun through a replace directive,
// and runs `go mod tidy` and `go test ./...` there, as a reader who pasted
// them would. Its envtest test finds the control plane binaries the way any
// module's does: in the user cache, or through KUBEBUILDER_ASSETS.
//
// The package holds no code of its own; everything is in its test.
package readme
