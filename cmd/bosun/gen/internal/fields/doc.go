// Package fields is the code package gen generates from
// gen/testdata/fields.bosun: list states on Pods selected by field
// selectors on real JSON paths (.spec.nodeName, .status.phase) and a label,
// for a Target of package testapi. It is kept here so that its tests can run
// the generated field indexes, getters and watches against a real API server
// (envtest, through bosuntest) with the bosun engine.
//
// `make generate` (go generate) rewrites zz_generated.fields.go with the
// bosun command.
package fields

//go:generate go run github.com/bosunkit/bosun/cmd/bosun gen -o . --package fields ../../testdata/fields.bosun
