package main

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/bosunkit/bosun/internal/figures"
)

var runTime = time.Date(2026, 3, 4, 23, 30, 0, 0, time.FixedZone("UTC-2", -2*60*60))

func testMachine() string { return "Test CPU, 2 CPUs; 4.0 GiB memory; Test OS; go1.26 linux/amd64" }

// runOK runs the tool with args and fails the test on an error.
func runOK(t *testing.T, args ...string) {
	t.Helper()
	if err := run(args, io.Discard, runTime, testMachine); err != nil {
		t.Fatalf("run %q: %v", args, err)
	}
}

func TestRunReplacesTheSection(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "figures.jsonl")
	doc := filepath.Join(dir, "RELIABILITY.md")
	before := "# Reliability\n\nText before.\n\n## Figures of the battery\n\nHow to make them.\n\n" +
		beginMarker + "\nold table\n" + endMarker + "\n\nText after.\n"
	if err := os.WriteFile(doc, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	runOK(t, "-in", in, "-record", "crash after every write|postgres|duplicates|0|0")
	runOK(t, "-in", in, "-record", " crash after every write | postgres | converged | 20/20 ")
	runOK(t, "-in", in, "-record", "conflicts|hello|time against fault-free|1.4x")
	runOK(t, "-in", in, "-doc", doc, "-command", "make reliability")

	want := "# Reliability\n\nText before.\n\n## Figures of the battery\n\nHow to make them.\n\n" +
		beginMarker + "\n" +
		"- Command: `make reliability`\n" +
		"- Machine: Test CPU, 2 CPUs; 4.0 GiB memory; Test OS; go1.26 linux/amd64\n" +
		"- Date: 2026-03-05 (UTC)\n" +
		"- Result: every test and fuzz target passed\n" +
		"\n" +
		"| test | example | figures |\n" +
		"| --- | --- | --- |\n" +
		"| conflicts | hello | time against fault-free: 1.4x |\n" +
		"| crash after every write | postgres | duplicates: 0 (goal 0); converged: 20/20 |\n" +
		endMarker + "\n\nText after.\n"
	if diff := cmp.Diff(want, readDoc(t, doc)); diff != "" {
		t.Errorf("doc (-want +got):\n%s", diff)
	}

	// A second run replaces the section again, and says what failed.
	runOK(t, "-in", in, "-record", "conflicts|hello|time against fault-free|1.5x")
	runOK(t, "-in", in, "-doc", doc, "-failed", "battery tests")
	want = strings.Replace(want, "1.4x", "1.5x", 1)
	want = strings.Replace(want, "- Result: every test and fuzz target passed",
		"- Result: failed (battery tests); the figures are those of the failed run", 1)
	if diff := cmp.Diff(want, readDoc(t, doc)); diff != "" {
		t.Errorf("doc after the second run (-want +got):\n%s", diff)
	}
}

func TestRunAddsTheSection(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "figures.jsonl")
	doc := filepath.Join(dir, "RELIABILITY.md")
	if err := os.WriteFile(doc, []byte("# Reliability\n\nNo figures yet."), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	runOK(t, "-in", in, "-doc", doc, "-command", "make reliability")
	want := "# Reliability\n\nNo figures yet.\n\n## Figures of the battery\n\n" +
		beginMarker + "\n" +
		"- Command: `make reliability`\n" +
		"- Machine: Test CPU, 2 CPUs; 4.0 GiB memory; Test OS; go1.26 linux/amd64\n" +
		"- Date: 2026-03-05 (UTC)\n" +
		"- Result: every test and fuzz target passed\n" +
		"\n" +
		"| test | example | figures |\n" +
		"| --- | --- | --- |\n" +
		endMarker + "\n"
	if diff := cmp.Diff(want, readDoc(t, doc)); diff != "" {
		t.Errorf("doc (-want +got):\n%s", diff)
	}
}

func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "figures.jsonl")
	missing := filepath.Join(dir, "missing")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no -in", []string{"-doc", "x"}, "-in is required"},
		{"a record of three fields", []string{"-in", in, "-record", "a|b|c"}, `-record "a|b|c": want test|example|name|value or test|example|name|value|goal`},
		{"a record without a value", []string{"-in", in, "-record", "a|b|c|"}, `figure "c" of "a" has no Value`},
		{"record and fuzz", []string{"-in", in, "-record", "a|b|c|d", "-fuzz", "a|b"}, "-record and -fuzz cannot be used together"},
		{"fuzz without logs", []string{"-in", in, "-fuzz", "a|b"}, `-fuzz "a|b": no go test -fuzz outputs given`},
		{"fuzz row without example", []string{"-in", in, "-fuzz", "a", "log"}, `-fuzz "a": want test|example`},
		{"missing figures file", []string{"-in", missing, "-doc", "x"}, "read figures: open " + missing + ": no such file or directory"},
		{"stray arguments", []string{"-in", in, "-doc", "x", "y"}, `unexpected arguments ["y"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(tt.args, io.Discard, runTime, testMachine)
			if err == nil || err.Error() != tt.want {
				t.Errorf("run %q = %v, want %q", tt.args, err, tt.want)
			}
		})
	}
}

func TestReplaceSection(t *testing.T) {
	const body = "new\n"
	tests := []struct {
		name    string
		doc     string
		want    string
		wantErr string
	}{{
		name: "markers",
		doc:  "a\n" + beginMarker + "\nold\nold\n" + endMarker + "\nb\n",
		want: "a\n" + beginMarker + "\nnew\n" + endMarker + "\nb\n",
	}, {
		name: "adjacent markers, end without a line end",
		doc:  beginMarker + "\n" + endMarker,
		want: beginMarker + "\nnew\n" + endMarker,
	}, {
		name: "markers with blanks around them",
		doc:  "  " + beginMarker + " \nold\n\t" + endMarker + "\n",
		want: "  " + beginMarker + " \nnew\n\t" + endMarker + "\n",
	}, {
		name: "no markers",
		doc:  "# Doc\n",
		want: "# Doc\n\n" + sectionHeading + "\n\n" + beginMarker + "\nnew\n" + endMarker + "\n",
	}, {
		name: "empty doc",
		doc:  "",
		want: "\n" + sectionHeading + "\n\n" + beginMarker + "\nnew\n" + endMarker + "\n",
	}, {
		name: "a marker inside a line is not a marker",
		doc:  "see " + beginMarker + " and " + endMarker + "\n",
		want: "see " + beginMarker + " and " + endMarker + "\n\n" + sectionHeading + "\n\n" + beginMarker + "\nnew\n" + endMarker + "\n",
	}, {
		name:    "begin only",
		doc:     beginMarker + "\n",
		wantErr: beginMarker + " without " + endMarker,
	}, {
		name:    "end only",
		doc:     endMarker + "\n",
		wantErr: endMarker + " without " + beginMarker,
	}, {
		name:    "end before begin",
		doc:     endMarker + "\n" + beginMarker + "\n",
		wantErr: endMarker + " before " + beginMarker,
	}, {
		name:    "begin twice",
		doc:     beginMarker + "\n" + beginMarker + "\n" + endMarker + "\n",
		wantErr: beginMarker + " appears twice",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := replaceSection(tt.doc, body)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("replaceSection error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("replaceSection (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDescribeMachine(t *testing.T) {
	const goVersion = "go1.26.1 linux/amd64"
	tests := []struct {
		name                        string
		cpuinfo, meminfo, osRelease string
		want                        string
	}{{
		name: "x86",
		cpuinfo: "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu\n\n" +
			"processor\t: 1\nmodel name\t: AMD EPYC 7B13\n",
		meminfo:   "MemTotal:       24683620 kB\nMemFree:         1000000 kB\n",
		osRelease: "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\n",
		want:      "AMD EPYC 7B13, 2 CPUs; 23.5 GiB memory; Debian GNU/Linux 12 (bookworm); go1.26.1 linux/amd64",
	}, {
		name:      "no model name, no pretty name",
		cpuinfo:   "processor\t: 0\nBogoMIPS\t: 50.00\n",
		meminfo:   "MemTotal: 1048576 kB\n",
		osRelease: "NAME='Alpine Linux'\nVERSION=3.21\n",
		want:      "unknown CPU, 1 CPU; 1.0 GiB memory; Alpine Linux 3.21; go1.26.1 linux/amd64",
	}, {
		name: "nothing to read",
		want: "unknown CPU, 8 CPUs; unknown memory; unknown OS; go1.26.1 linux/amd64",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, describeMachine(tt.cpuinfo, tt.meminfo, tt.osRelease, 8, goVersion)); diff != "" {
				t.Errorf("describeMachine (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMachine reads this computer's files: on Linux every part is known.
func TestMachine(t *testing.T) {
	got := machine()
	if !strings.HasSuffix(got, runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("machine() = %q, want the Go version at the end", got)
	}
	if runtime.GOOS == "linux" && strings.Contains(got, "unknown") {
		t.Errorf("machine() = %q, want every part known on Linux", got)
	}
}

// Outputs of go test -fuzz, cut down.
const (
	passedLog = "fuzz: elapsed: 0s, gathering baseline coverage: 0/24 completed\n" +
		"fuzz: elapsed: 3s, execs: 120000 (40000/sec), new interesting: 1 (total: 25)\n" +
		"fuzz: elapsed: 5m0s, execs: 1234567 (4115/sec), new interesting: 9 (total: 33)\n" +
		"PASS\nok  \tgithub.com/bosunkit/bosun/cmd/bosun/dsl\t300.412s\n"
	panicLog = "fuzz: elapsed: 3s, execs: 5000 (1666/sec), new interesting: 0 (total: 9)\n" +
		"--- FAIL: FuzzGenerate (3.45s)\n    --- FAIL: FuzzGenerate (0.00s)\n" +
		"        testing.go:1927: panic: assignment to entry in nil map\n" +
		"    Failing input written to testdata/fuzz/FuzzGenerate/1a4feb8ad1fe53b6\n" +
		"FAIL\nexit status 1\nFAIL\tgithub.com/bosunkit/bosun/cmd/bosun/gen\t3.501s\n"
	badPositionLog = "fuzz: elapsed: 0s, gathering baseline coverage: 0/192 completed\n" +
		"--- FAIL: FuzzParse (0.12s)\n    --- FAIL: FuzzParse (0.00s)\n" +
		"        fuzz_test.go:72: bad error position: error \"decl  has no target\" is not fuzz.bosun:LINE:COL: message\n" +
		"FAIL\nexit status 1\nFAIL\tgithub.com/bosunkit/bosun/cmd/bosun/dsl\t0.138s\n"
	cutLog = "fuzz: elapsed: 3s, execs: 777 (259/sec), new interesting: 0 (total: 9)\n"
)

func TestReadFuzzLog(t *testing.T) {
	tests := []struct {
		name string
		log  string
		want fuzzRun
	}{
		{"passed", passedLog, fuzzRun{passed: true, execs: 1234567}},
		{"panic", panicLog, fuzzRun{panicked: true, execs: 5000}},
		{"bad error position", badPositionLog, fuzzRun{badPosition: true, execs: -1}},
		{"cut short", cutLog, fuzzRun{execs: 777}},
		{"empty", "", fuzzRun{execs: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, readFuzzLog(tt.log), cmp.AllowUnexported(fuzzRun{})); diff != "" {
				t.Errorf("readFuzzLog (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunRecordsFuzzFigures(t *testing.T) {
	const row = "DSL fuzz, 10 min (parser and generator)"
	tests := []struct {
		name string
		logs []string
		want []string
	}{{
		name: "both passed",
		logs: []string{passedLog, strings.Replace(passedLog, "1234567", "2000000", 1)},
		want: []string{"panics: 0 (goal 0)", "errors at a valid FILE:LINE:COL: all (goal all)", "inputs: 3,234,567", "targets passed: 2/2 (goal 2/2)"},
	}, {
		name: "a panic and a bad position",
		logs: []string{panicLog, badPositionLog},
		want: []string{"panics: 1 (goal 0)", "errors at a valid FILE:LINE:COL: not all (goal all)", "inputs: 5,000", "targets passed: 0/2 (goal 2/2)"},
	}, {
		name: "no counts",
		logs: []string{badPositionLog},
		want: []string{"panics: 0 (goal 0)", "errors at a valid FILE:LINE:COL: not all (goal all)", "inputs: unknown", "targets passed: 0/1 (goal 1/1)"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "figures.jsonl")
			args := []string{"-in", in, "-fuzz", row + "|dsl"}
			for i, l := range tt.logs {
				path := filepath.Join(dir, "fuzz"+string(rune('0'+i))+".log")
				if err := os.WriteFile(path, []byte(l), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, path)
			}
			runOK(t, args...)
			figs, err := figures.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range figs {
				if f.Test != row || f.Example != "dsl" {
					t.Errorf("figure %+v is not in row %q / dsl", f, row)
				}
				got = append(got, f.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("figures (-want +got):\n%s", diff)
			}
		})
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 123456: "123,456", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestKeepRoundTrips checks that -keep reads back every row the table
// wrote, and that fresh figures replace the rows of their test and
// example.
func TestKeepRoundTrips(t *testing.T) {
	old := []figures.Figure{
		{Test: "stale reads", Example: "simple", Name: "lag 1: stale reads", Value: "54"},
		{Test: "stale reads", Example: "simple", Name: "lag 1: wrong-object deletes", Value: "0", Goal: "0"},
		{Test: "30% 409", Example: "hello", Name: "time against fault-free", Value: "1.27x (4.699s vs 3.71s)"},
		{Test: "a | b", Example: "x", Name: "converged in", Value: "31.9s", Goal: "< 1m0s"},
	}
	doc := "# Doc\n\n" + beginMarker + "\n" + section(old, "make reliability", testMachine(), time.Now(), "") + endMarker + "\n"
	fresh := []figures.Figure{{Test: "30% 409", Example: "hello", Name: "time against fault-free", Value: "1.01x"}}
	got, err := kept(doc, fresh)
	if err != nil {
		t.Fatal(err)
	}
	want := []figures.Figure{old[3], old[0], old[1], fresh[0]} // in the table's order
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if _, err := kept(beginMarker+"\n| a | b |\n"+endMarker+"\n", nil); err == nil {
		t.Error("a row of two cells: no error")
	}
}
