package figures_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/bosunkit/bosun/internal/figures"
)

// Figures appended to a file, as Record does when BOSUN_FIGURES names it,
// read back and made into the table of docs/RELIABILITY.md.
func ExampleTable() {
	dir, err := os.MkdirTemp("", "figures")
	if err != nil {
		panic(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	path := filepath.Join(dir, "figures.jsonl")

	err = figures.Append(path,
		figures.Figure{Test: "crash after every write", Example: "postgres", Name: "duplicates", Value: "0", Goal: "0"},
		figures.Figure{Test: "crash after every write", Example: "postgres", Name: "converged", Value: "20/20"},
		figures.Figure{Test: "409 on every second write", Example: "hello", Name: "time against fault-free", Value: "1.4x"},
	)
	if err != nil {
		panic(err)
	}
	figs, err := figures.ReadFile(path)
	if err != nil {
		panic(err)
	}
	fmt.Print(figures.Table(figs))
	// Output:
	// | test | example | figures |
	// | --- | --- | --- |
	// | 409 on every second write | hello | time against fault-free: 1.4x |
	// | crash after every write | postgres | duplicates: 0 (goal 0); converged: 20/20 |
}

func ExampleFigure_String() {
	f := figures.Figure{Test: "crash after every write", Example: "postgres", Name: "duplicates", Value: "0", Goal: "0"}
	fmt.Println(f)
	// Output: duplicates: 0 (goal 0)
}
