// Package frontend is the code package gen generates from
// gen/testdata/frontend.bosun: single-object states on built-in kinds, for
// a Deployment target. It is kept here so that its tests can run the
// generated code against a fake client and, with the bosun engine
// reconciling Deployments and the generated watches, against a real API
// server (envtest, through bosuntest).
//
// `make generate` (go generate) rewrites zz_generated.frontend.go with the
// bosun command; the golden test of package gen fails when the file differs
// from the generator's output, and `go test ./gen -update` rewrites it too.
package frontend

//go:generate go run github.com/bosunkit/bosun/cmd/bosun gen -o . --package frontend ../../testdata/frontend.bosun
