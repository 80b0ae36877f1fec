// Package scopes is the code package gen generates from
// gen/testdata/scopes.bosun: states read outside the target's namespace (a
// fixed namespace, a namespace taken from the target's spec, cluster-scoped
// Nodes), set-based label selectors (in, notin, !=, exists, does not
// exist), and a decl for the cluster-scoped Node kind. It is kept here so
// that its tests can run the generated getters, target indexes and watches
// against a real API server (envtest, through bosuntest) with the bosun
// engine.
//
// `make generate` (go generate) rewrites zz_generated.scopes.go with the
// bosun command.
package scopes

//go:generate go run github.com/bosunkit/bosun/cmd/bosun gen -o . --package scopes ../../testdata/scopes.bosun
