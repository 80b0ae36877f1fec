package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCitations(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []citation
	}{
		{
			name: "bare, with a package, with a directory",
			text: "`TestA`, `managed.TestB` and `examples/postgres.ExampleC`.",
			want: []citation{
				{Line: 1, Span: "TestA", Name: "TestA"},
				{Line: 1, Span: "managed.TestB", Pkg: "managed", Name: "TestB"},
				{Line: 1, Span: "examples/postgres.ExampleC", Pkg: "examples/postgres", Name: "ExampleC"},
			},
		},
		{
			name: "subtests and sub-benchmarks name their function",
			text: "`TestBattery/Matrix/<feature>/<fault>` and `BenchmarkStatusPatch/status-only`, `FuzzParse`",
			want: []citation{
				{Line: 1, Span: "TestBattery/Matrix/<feature>/<fault>", Name: "TestBattery"},
				{Line: 1, Span: "BenchmarkStatusPatch/status-only", Name: "BenchmarkStatusPatch"},
				{Line: 1, Span: "FuzzParse", Name: "FuzzParse"},
			},
		},
		{
			name: "a path in parentheses",
			text: "`TestA` (root package), `TestB` (cmd/bosun), `plan.TestC` (internal/plan),\n" +
				"`TestD` (`api/v2`), `shard.TestE` (shard/gate_test.go, table), `bosun.TestF` (handlers_test.go),\n" +
				"`TestG` (shard/standby_test.go; a reconciler behind `Member.Wrap`)",
			want: []citation{
				{Line: 1, Span: "TestA", Name: "TestA", Path: "."},
				{Line: 1, Span: "TestB", Name: "TestB", Path: "cmd/bosun"},
				{Line: 1, Span: "plan.TestC", Pkg: "plan", Name: "TestC", Path: "internal/plan"},
				{Line: 2, Span: "TestD", Name: "TestD", Path: "api/v2"},
				{Line: 2, Span: "shard.TestE", Pkg: "shard", Name: "TestE", Path: "shard/gate_test.go"},
				{Line: 2, Span: "bosun.TestF", Pkg: "bosun", Name: "TestF", Path: "handlers_test.go"},
				{Line: 3, Span: "TestG", Name: "TestG", Path: "shard/standby_test.go"},
			},
		},
		{
			name: "parentheses that name no path",
			text: "`TestA` (one worker, every retry due after 1 ms), `trim.FuzzB` (in `make fuzz`), `TestC` (slow delete)",
			want: []citation{
				{Line: 1, Span: "TestA", Name: "TestA"},
				{Line: 1, Span: "trim.FuzzB", Pkg: "trim", Name: "FuzzB"},
				{Line: 1, Span: "TestC", Name: "TestC"},
			},
		},
		{
			name: "parentheses on the next line of the paragraph",
			text: "Tested by `TestA`\n(root package).",
			want: []citation{{Line: 1, Span: "TestA", Name: "TestA", Path: "."}},
		},
		{
			name: "not citations",
			text: "`Tests`, `TestingT`, `Examples`, `bosuntest.Eventually`, `go test -run TestA ./x`, `TestA|TestB`, `x.y.TestA`",
		},
		{
			name: "fenced code blocks are left out, lines still counted",
			text: "```go\nfunc TestA(t *testing.T) {} // `TestA`\n```\n\n~~~\n`TestB`\n~~~\n````md\n```\n`TestC`\n```\n````\n`TestD`",
			want: []citation{{Line: 13, Span: "TestD", Name: "TestD"}},
		},
		{
			name: "a span over two lines, a double-backtick span",
			text: "first line\nsecond `go\ntest` line ``TestA``\n\nafter a blank line `TestB`",
			want: []citation{
				{Line: 3, Span: "TestA", Name: "TestA"},
				{Line: 5, Span: "TestB", Name: "TestB"},
			},
		},
		{
			name: "a backtick nothing closes stays in its paragraph",
			text: "a stray ` here\n| row | `flow.TestJoins`, `flow.ExampleJoin` |\n| row | `TestC` |",
			want: []citation{
				{Line: 2, Span: "flow.TestJoins", Pkg: "flow", Name: "TestJoins"},
				{Line: 2, Span: "flow.ExampleJoin", Pkg: "flow", Name: "ExampleJoin"},
				{Line: 3, Span: "TestC", Name: "TestC"},
			},
		},
		{
			name: "headings and list items",
			text: "## `TestA`\n- item `TestB`\n  continued `TestC`",
			want: []citation{
				{Line: 1, Span: "TestA", Name: "TestA"},
				{Line: 2, Span: "TestB", Name: "TestB"},
				{Line: 3, Span: "TestC", Name: "TestC"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, citations(tt.text)); diff != "" {
				t.Errorf("citations (-want +got):\n%s", diff)
			}
		})
	}
}

// writeTree writes files, paths relative to root, with their contents.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// repo is a small repository: a root package bosun, managed, a command
// cmd/bosun, an example with a nested api/v2, internal/plan, and tests
// in testdata and a hidden directory that do not count.
var repo = map[string]string{
	"go.mod":                               "module example.com/bosun\n",
	"doc.go":                               "package bosun\n",
	"engine_test.go":                       "package bosun_test\n\nfunc TestRoot(t *testing.T) {}\n\nfunc helper() {}\n",
	"handlers_test.go":                     "package bosun\n\nfunc TestHandlers(t *testing.T) {}\n",
	"managed/step.go":                      "package managed\n",
	"managed/step_test.go":                 "package managed\n\nfunc TestManaged(t *testing.T) {}\nfunc BenchmarkManaged(b *testing.B) {}\n",
	"cmd/bosun/main_test.go":               "package main\n\nfunc TestCmd(t *testing.T) {}\n",
	"examples/postgres/pg_test.go":         "package postgres_test\n\nfunc TestPG(t *testing.T) {}\nfunc ExampleSQLName() {}\n",
	"examples/cron/api/v2/convert_test.go": "package v2\n\nfunc TestConvert(t *testing.T) {}\n",
	"internal/plan/plan_test.go":           "package plan\n\nfunc FuzzPlan(f *testing.F) {}\n",
	"testdata/x_test.go":                   "package x\n\nfunc TestInTestdata(t *testing.T) {}\n",
	".hidden/y_test.go":                    "package y\n\nfunc TestHidden(t *testing.T) {}\n",
	"managed/notes.go":                     "package managed\n\n// func TestNotATest(t *testing.T) {}\nfunc TestInLibraryCode() {}\n",
}

func TestRunFindsEachBrokenCitation(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, repo)
	writeTree(t, root, map[string]string{
		"docs/A.md": "# A\n\n" +
			"Holds: `TestRoot`, `bosun.TestHandlers` (handlers_test.go), `managed.TestManaged`,\n" +
			"`managed.BenchmarkManaged/case`, `TestCmd` (cmd/bosun), `examples/postgres.ExampleSQLName`,\n" +
			"`postgres.TestPG`, `TestConvert` (`api/v2`), `plan.FuzzPlan` (internal/plan), `TestRoot` (root package).\n" +
			"\n" +
			"| row | `managed.TestGone` |\n" +
			"\n" +
			"`TestGone`, `TestInTestdata`, `TestHidden`, `TestInLibraryCode`, `nosuch.TestRoot`,\n" +
			"`TestManaged` (root package), `bosun.TestHandlers` (managed/step_test.go), `TestCmd` (cmd/other),\n" +
			"`cmd/bosun.TestRoot`, `bosun.TestCmd`.\n",
		"docs/B.md":     "`TestPG` (examples/postgres)\n",
		"docs/sub/C.md": "`TestNotRead`\n",
	})
	var out strings.Builder
	err := run([]string{"-root", root}, &out)
	if err == nil || err.Error() != "11 of 22 cited tests not found" {
		t.Errorf("run: %v, want 11 of 22 cited tests not found", err)
	}
	want := []string{
		"docs/A.md:7: `managed.TestGone`: no func TestGone( in the _test.go files of managed",
		"docs/A.md:9: `TestGone`: no func TestGone( in any _test.go file",
		"docs/A.md:9: `TestInTestdata`: no func TestInTestdata( in any _test.go file",
		"docs/A.md:9: `TestHidden`: no func TestHidden( in any _test.go file",
		"docs/A.md:9: `TestInLibraryCode`: no func TestInLibraryCode( in any _test.go file",
		"docs/A.md:9: `nosuch.TestRoot`: no package nosuch in the repository",
		"docs/A.md:10: `TestManaged`: no func TestManaged( in the _test.go files of .",
		"docs/A.md:10: `bosun.TestHandlers`: no func TestHandlers( in managed/step_test.go",
		"docs/A.md:10: `TestCmd`: no directory cmd/other in the repository",
		"docs/A.md:11: `cmd/bosun.TestRoot`: no func TestRoot( in the _test.go files of cmd/bosun",
		// The root's package name wins over cmd/bosun's directory name.
		"docs/A.md:11: `bosun.TestCmd`: no func TestCmd( in the _test.go files of .",
	}
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
}

func TestRunReportsAllFound(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, repo)
	writeTree(t, root, map[string]string{"docs/A.md": "`TestRoot` and `managed.TestManaged`\n", "docs/B.md": "no tests\n"})
	var out strings.Builder
	if err := run([]string{"-root", root}, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if want := "promises: the 2 tests cited in 2 files exist\n"; out.String() != want {
		t.Errorf("run printed %q, want %q", out.String(), want)
	}
	// Files named on the command line replace docs/*.md.
	out.Reset()
	writeTree(t, root, map[string]string{"README.md": "`TestNone`\n"})
	err := run([]string{"-root", root, filepath.Join(root, "README.md")}, &out)
	if err == nil || !strings.Contains(out.String(), "README.md:1: `TestNone`") {
		t.Errorf("run README.md: %v, printed %q; want TestNone reported", err, out.String())
	}
}
