// Command figures keeps the figures table of docs/RELIABILITY.md. It is
// bosun's own tool, run by `make reliability` after the battery:
//
//	go run ./hack/figures -in FIGURES -doc docs/RELIABILITY.md -command "make reliability"
//
// replaces the text between the lines <!-- figures:begin --> and
// <!-- figures:end --> of the doc with the command, the machine (CPU model
// and count, memory, operating system, Go version), the date (UTC) and the
// table of the figures recorded in FIGURES (see package
// internal/figures). A doc without the markers gets a section
// "Figures of the battery" holding them at its end. -failed "WHAT" says in
// the doc that WHAT failed during the run.
//
// Two more modes append figures to FIGURES instead:
//
//	go run ./hack/figures -in FIGURES -record "test|example|name|value|goal"
//
// appends one figure (the goal may be left out), for shell scripts, and
//
//	go run ./hack/figures -in FIGURES -fuzz "test|example" LOG...
//
// appends the figures of fuzzing runs from the output of
// `go test -fuzz`, one LOG a target: the targets that failed, the inputs
// run, the panics, and whether every error checked was at a valid
// FILE:LINE:COL (the fuzz targets of dsl and gen fail with "bad error
// position" when one is not).
package main
