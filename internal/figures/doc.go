// Package figures records the numbers that bosun's reliability battery
// measures, and turns them into the figures table of docs/RELIABILITY.md.
//
// The battery is a set of tests, spread over bosun's packages and examples,
// that inject faults (crashes, conflicts, lost responses, slow servers) and
// report what came out: "duplicates: 0", "converged: 20/20", "time against
// fault-free: 1.4x". Their names contain "Battery", so that
// `go test -run Battery ./...` runs them all. A test reports each number
// as a Figure with Record:
//
//	figures.Record(t,
//		figures.Figure{Test: "crash after every write", Example: "postgres", Name: "duplicates", Value: "0", Goal: "0"},
//		figures.Figure{Test: "crash after every write", Example: "postgres", Name: "converged", Value: fmt.Sprintf("%d/%d", ok, n)},
//	)
//
// Record logs the figures. When the environment variable BOSUN_FIGURES
// names a file, it also appends them there, one JSON object a line; test
// processes running at the same time may share the file.
//
// Every battery test has two sizes. `make test` runs the short one, which
// keeps the whole suite within minutes: a few objects, a few faults.
// `make reliability` sets BOSUN_BATTERY=full and runs the full one, which
// may take hours, then writes the recorded figures into docs/RELIABILITY.md
// with ReadFile and Table (through hack/figures). A test picks its sizes
// with Size:
//
//	objects := figures.Size(5, 200) // 5 in make test, 200 in make reliability
//
// Maturity: experimental. It is internal to bosun, and its file format
// follows what hack/figures needs.
package figures
