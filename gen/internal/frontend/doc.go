// Package frontend is the code package gen generates from
// gen/testdata/frontend.bosun, kept here so that its tests can run its
// single-object states against a fake client. The golden test of package gen
// fails when the file differs from the generator's output;
// `go test ./gen -update` rewrites it.
package frontend
