// Package parity keeps docs/PARITY.md honest. That page lists, for each of
// the five designs bosun joins, every feature of the design, where it lives
// in bosun and the tests that prove it.
//
// The tests parse the page's tables and check that every cited test or
// example (written `DIR.Name`, DIR a package directory from the repository
// root, `bosun` for the root itself) is a function of that name in a
// _test.go file of that directory, read with go/parser and never run; and
// that no row says a feature, or its test, is missing.
//
// The package holds no code of its own; everything is in its tests.
package parity
