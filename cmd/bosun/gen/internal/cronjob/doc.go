// Package cronjob is the code package gen generates from
// gen/testdata/cronjob.bosun, kept here so that its tests can run it against
// a fake client. The golden test of package gen fails when the file differs
// from the generator's output; `go test ./gen -update` rewrites it.
package cronjob

//go:generate go run github.com/bosunkit/bosun/cmd/bosun gen -o . --package cronjob ../../testdata/cronjob.bosun
