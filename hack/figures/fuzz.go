package main

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/bosunkit/bosun/internal/figures"
)

// badPositionMessage is how the fuzz targets of dsl and gen say that an
// error was not at a valid FILE:LINE:COL.
const badPositionMessage = "bad error position"

// execsPattern finds the running count of inputs in go test -fuzz's
// progress lines ("fuzz: elapsed: 3s, execs: 12345 (4115/sec), ...").
var execsPattern = regexp.MustCompile(`\bexecs: ([0-9]+)`)

// fuzzRun is what the output of one `go test -fuzz` run tells.
type fuzzRun struct {
	passed      bool
	panicked    bool
	badPosition bool
	execs       int64 // -1 when the output reports none
}

// readFuzzLog reads the output of one `go test -fuzz` run. A run passed
// when go test said ok and no test failed; an output without a result
// (cut short, say) counts as failed.
func readFuzzLog(out string) fuzzRun {
	r := fuzzRun{execs: -1}
	if m := execsPattern.FindAllStringSubmatch(out, -1); m != nil {
		r.execs, _ = strconv.ParseInt(m[len(m)-1][1], 10, 64)
	}
	ok, failed := false, false
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "ok ") || strings.HasPrefix(line, "ok\t"):
			ok = true
		case strings.HasPrefix(strings.TrimSpace(line), "--- FAIL"), line == "FAIL", strings.HasPrefix(line, "FAIL\t"), strings.HasPrefix(line, "FAIL "):
			failed = true
		}
	}
	r.passed = ok && !failed
	r.panicked = !r.passed && strings.Contains(out, "panic: ")
	r.badPosition = strings.Contains(out, badPositionMessage)
	return r
}

// fuzzFigures returns the figures of a row of fuzzing runs: the panics, the
// errors at a valid FILE:LINE:COL, the inputs run, and the targets that
// passed.
func fuzzFigures(test, example string, runs []fuzzRun) []figures.Figure {
	var panics, passed int
	var execs int64
	allValid, execsKnown := true, false
	for _, r := range runs {
		if r.panicked {
			panics++
		}
		if r.passed {
			passed++
		}
		if r.badPosition {
			allValid = false
		}
		if r.execs >= 0 {
			execs += r.execs
			execsKnown = true
		}
	}
	valid := "all"
	if !allValid {
		valid = "not all"
	}
	inputs := "unknown"
	if execsKnown {
		inputs = thousands(execs)
	}
	fig := func(name, value, goal string) figures.Figure {
		return figures.Figure{Test: test, Example: example, Name: name, Value: value, Goal: goal}
	}
	n := strconv.Itoa(len(runs))
	return []figures.Figure{
		fig("panics", strconv.Itoa(panics), "0"),
		fig("errors at a valid FILE:LINE:COL", valid, "all"),
		fig("inputs", inputs, ""),
		fig("targets passed", strconv.Itoa(passed)+"/"+n, n+"/"+n),
	}
}

// recordFuzz appends to the figures file in the figures of the fuzzing
// outputs in logs, under row, "test|example".
func recordFuzz(in, row string, logs []string) error {
	test, example, ok := strings.Cut(row, "|")
	if !ok || strings.Contains(example, "|") {
		return fmt.Errorf("-fuzz %q: want test|example", row)
	}
	if len(logs) == 0 {
		return fmt.Errorf("-fuzz %q: no go test -fuzz outputs given", row)
	}
	runs := make([]fuzzRun, len(logs))
	for i, path := range logs {
		out, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read fuzzing output: %w", err)
		}
		runs[i] = readFuzzLog(string(out))
	}
	return figures.Append(in, fuzzFigures(strings.TrimSpace(test), strings.TrimSpace(example), runs)...)
}

// thousands writes n with commas between groups of three digits.
func thousands(n int64) string {
	if n < 0 {
		return "-" + thousands(-n)
	}
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
