package figures

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/bosunkit/bosun/bosuntest"
)

// The environment variables the package reads.
const (
	// FileEnv names the file Record appends figures to. Unset or empty,
	// Record only logs them.
	FileEnv = "BOSUN_FIGURES"
	// BatteryEnv set to "full" makes Full true: the battery runs at its
	// full size. `make reliability` sets it; `make test` does not.
	BatteryEnv = "BOSUN_BATTERY"
)

// Figure is one number of the reliability battery.
type Figure struct {
	// Test is the battery row the figure belongs to, such as "crash after
	// every write".
	Test string `json:"test"`
	// Example is what the test ran against, such as "postgres".
	Example string `json:"example"`
	// Name is what was measured, such as "duplicates".
	Name string `json:"name"`
	// Value is the measurement, such as "0", "20/20" or "1.4x".
	Value string `json:"value"`
	// Goal is what Value should be, such as "0"; empty when the figure is
	// only reported.
	Goal string `json:"goal,omitempty"`
}

// String returns "name: value", followed by " (goal G)" when the figure has
// a goal.
func (f Figure) String() string {
	s := f.Name + ": " + f.Value
	if f.Goal != "" {
		s += " (goal " + f.Goal + ")"
	}
	return s
}

// validate reports a figure that cannot be placed in the table.
func (f Figure) validate() error {
	switch {
	case f.Test == "":
		return fmt.Errorf("figure %q has no Test", f.String())
	case f.Name == "":
		return fmt.Errorf("figure of %q has no Name", f.Test)
	case f.Value == "":
		return fmt.Errorf("figure %q of %q has no Value", f.Name, f.Test)
	}
	return nil
}

// Record reports figures of a battery test: each is logged on one line
// and, when BOSUN_FIGURES names a file, appended to it with Append. A
// figure without a Test, Name or Value, or a failed write, fails the test.
// Record may be called from any goroutine of the test.
func Record(t bosuntest.TB, figs ...Figure) {
	t.Helper()
	for _, f := range figs {
		t.Logf("figure: %s | %s | %s", f.Test, f.Example, f)
	}
	path := os.Getenv(FileEnv)
	if path == "" {
		for _, f := range figs {
			if err := f.validate(); err != nil {
				t.Errorf("record figures: %v", err)
			}
		}
		return
	}
	if err := Append(path, figs...); err != nil {
		t.Errorf("record figures: %v", err)
	}
}

// Append appends figures to the file at path, creating it if needed, one
// JSON object a line. Each line is a single write to a file opened for
// appending, so processes appending to the same file at the same time do
// not mix their lines. A figure without a Test, Name or Value is refused
// before anything is written.
func Append(path string, figs ...Figure) error {
	lines := make([][]byte, 0, len(figs))
	for _, f := range figs {
		if err := f.validate(); err != nil {
			return err
		}
		line, err := json.Marshal(f)
		if err != nil {
			return fmt.Errorf("encode figure %q: %w", f.Name, err)
		}
		lines = append(lines, append(line, '\n'))
	}
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("open figures file: %w", err)
	}
	for _, line := range lines {
		if _, err := file.Write(line); err != nil {
			_ = file.Close()
			return fmt.Errorf("append to figures file %s: %w", path, err)
		}
	}
	if err := file.Close(); err != nil {
		return fmt.Errorf("close figures file %s: %w", path, err)
	}
	return nil
}

// Full reports whether the battery runs at its full size: whether
// BOSUN_BATTERY is "full", as `make reliability` sets it. `make test` runs
// the short size.
func Full() bool { return os.Getenv(BatteryEnv) == "full" }

// Size returns full when Full reports true, short otherwise: the size of a
// battery test under `make reliability` and under `make test`.
func Size[T any](short, full T) T {
	if Full() {
		return full
	}
	return short
}

// ReadFile returns the figures Append wrote to the file at path, in the
// order they were written. Blank lines are skipped.
func ReadFile(path string) ([]Figure, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read figures: %w", err)
	}
	var figs []Figure
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var f Figure
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return nil, fmt.Errorf("read figures %s: line %d: %w", path, n, err)
		}
		if err := f.validate(); err != nil {
			return nil, fmt.Errorf("read figures %s: line %d: %w", path, n, err)
		}
		figs = append(figs, f)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read figures %s: %w", path, err)
	}
	return figs, nil
}

// Table returns figs as a markdown table with the columns test, example
// and figures: one row for each Test and Example, sorted by Test then
// Example, its figures joined by "; " in the order they were first
// recorded. A later figure with the Test, Example and Name of an earlier
// one replaces it. Without figures the table has only its header.
func Table(figs []Figure) string {
	type row struct {
		test, example string
		names         []string
		byName        map[string]Figure
	}
	type key struct{ test, example string }
	rows := make(map[key]*row)
	var order []*row
	for _, f := range figs {
		k := key{f.Test, f.Example}
		r := rows[k]
		if r == nil {
			r = &row{test: f.Test, example: f.Example, byName: make(map[string]Figure)}
			rows[k] = r
			order = append(order, r)
		}
		if _, ok := r.byName[f.Name]; !ok {
			r.names = append(r.names, f.Name)
		}
		r.byName[f.Name] = f
	}
	slices.SortStableFunc(order, func(a, b *row) int {
		if c := strings.Compare(a.test, b.test); c != 0 {
			return c
		}
		return strings.Compare(a.example, b.example)
	})
	var b strings.Builder
	b.WriteString("| test | example | figures |\n| --- | --- | --- |\n")
	for _, r := range order {
		parts := make([]string, len(r.names))
		for i, n := range r.names {
			parts[i] = r.byName[n].String()
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", cell(r.test), cell(r.example), cell(strings.Join(parts, "; ")))
	}
	return b.String()
}

// cell makes s safe inside a markdown table cell: pipes are escaped and
// line ends become spaces.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\r\n", " ")
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
}
