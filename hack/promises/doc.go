// Command promises checks that every test the docs cite exists. It reads
// each Markdown file given (docs/*.md by default), outside fenced code
// blocks, and takes as a citation each code span that is a test, fuzz
// target, benchmark or example name alone:
//
//	`TestX`                   anywhere in the repository
//	`pkg.TestX`               in the package pkg: a directory from the
//	                          repository root (`examples/postgres.TestX`),
//	                          or a package or directory name
//	                          (`managed.TestX`, `bosun.TestX` for the root)
//	`TestX/sub`               the test TestX (a subtest or sub-benchmark)
//	`TestX` (DIR or FILE)     in that directory or file, from the root or
//	                          at the end of a longer path; (root package)
//	                          names the root
//
// A citation holds when a _test.go file there declares func TestX( (or
// FuzzX, BenchmarkX, ExampleX). Each one that does not is printed as
// FILE:LINE with the reason, and the command exits 1. It reads the working
// tree, so a test in a file not yet committed counts.
//
//	go run ./hack/promises [-root DIR] [FILE.md...]
//
// `make verify` runs it.
package main
