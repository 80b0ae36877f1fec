package parity

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	// repoRoot is the repository root, from this package's directory.
	repoRoot = "../.."
	// page is the parity page, from the repository root.
	page = "docs/PARITY.md"
	// rootDir is how a citation names the root package's directory.
	rootDir = "bosun"
	// seeds is the number of designs the page has a table for.
	seeds = 5
)

// header is the header row every table of the page starts with.
var header = []string{"feature", "where it lives in bosun", "test", "notes"}

var (
	// codeSpan finds the code spans of a cell.
	codeSpan = regexp.MustCompile("`([^`]*)`")
	// citation is a cited test or example: a directory, a dot, a name.
	citation = regexp.MustCompile(`^([a-z0-9_]+(?:/[a-z0-9_]+)*)\.((?:Test|Example)[A-Za-z0-9_]*)$`)
	// missing is the word that marks a feature, or its test, as not there.
	missing = regexp.MustCompile(`(?i)\bmissing\b`)
)

// section is one table of the page, under its heading.
type section struct {
	Heading string
	Rows    []row
}

// row is one feature of a table.
type row struct {
	Line    int // 1-based line of the row in the page
	Feature string
	Where   string
	Test    string
	Notes   string
	Cites   []cite
}

// cite is one test or example a row cites.
type cite struct {
	Dir  string // directory from the repository root, "." for the root
	Name string
}

func (c cite) String() string {
	dir := c.Dir
	if dir == "." {
		dir = rootDir
	}
	return dir + "." + c.Name
}

// saysMissing reports whether the row says missing in its where or test cell.
func (r row) saysMissing() bool {
	return missing.MatchString(r.Where) || missing.MatchString(r.Test)
}

// parseTables returns the tables of a Markdown page, each under the last
// "## " heading before it. Every table must have the header row and a
// separator; every row four cells; and every code span of a test cell must
// be a citation. A test cell holds at least one citation, or says missing.
func parseTables(text string) ([]section, error) {
	var (
		secs    []section
		errs    []error
		heading string
		// state: 0 outside a table, 1 after its header, 2 in its rows.
		state int
	)
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		trimmed := strings.TrimSpace(line)
		if after, ok := strings.CutPrefix(trimmed, "## "); ok {
			heading = strings.TrimSpace(after)
		}
		if !strings.HasPrefix(trimmed, "|") {
			state = 0
			continue
		}
		cells := splitRow(trimmed)
		switch state {
		case 0:
			if diff := cmp.Diff(header, cells); diff != "" {
				errs = append(errs, fmt.Errorf("%s:%d: table header (-want +got):\n%s", page, n, diff))
			}
			secs = append(secs, section{Heading: heading})
			state = 1
			continue
		case 1:
			if !isSeparator(cells, len(header)) {
				errs = append(errs, fmt.Errorf("%s:%d: no separator row under the table header", page, n))
			}
			state = 2
			continue
		}
		if len(cells) != len(header) {
			errs = append(errs, fmt.Errorf("%s:%d: %d cells, want %d", page, n, len(cells), len(header)))
			continue
		}
		r := row{Line: n, Feature: cells[0], Where: cells[1], Test: cells[2], Notes: cells[3]}
		for _, m := range codeSpan.FindAllStringSubmatch(r.Test, -1) {
			c := citation.FindStringSubmatch(m[1])
			if c == nil {
				errs = append(errs, fmt.Errorf("%s:%d: %q in the test cell is not DIR.TestName or DIR.ExampleName", page, n, m[1]))
				continue
			}
			dir := c[1]
			if dir == rootDir {
				dir = "."
			}
			r.Cites = append(r.Cites, cite{Dir: dir, Name: c[2]})
		}
		if len(r.Cites) == 0 && !missing.MatchString(r.Test) {
			errs = append(errs, fmt.Errorf("%s:%d: %q cites no test and does not say missing", page, n, r.Feature))
		}
		if r.Feature == "" || r.Where == "" {
			errs = append(errs, fmt.Errorf("%s:%d: empty feature or where cell", page, n))
		}
		secs[len(secs)-1].Rows = append(secs[len(secs)-1].Rows, r)
	}
	return secs, errors.Join(errs...)
}

// splitRow returns the trimmed cells of a table row.
func splitRow(line string) []string {
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	cells := strings.Split(line, "|")
	for i, c := range cells {
		cells[i] = strings.TrimSpace(c)
	}
	return cells
}

// isSeparator reports whether cells are the separator row of a table of n
// columns.
func isSeparator(cells []string, n int) bool {
	if len(cells) != n {
		return false
	}
	for _, c := range cells {
		if strings.Trim(c, "-:") != "" || !strings.Contains(c, "-") {
			return false
		}
	}
	return true
}

// testFuncs returns the names of the functions without receiver declared
// in the _test.go files of dir.
func testFuncs(dir string) (map[string]bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading package directory: %w", err)
	}
	names := map[string]bool{}
	fset := token.NewFileSet()
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parsing: %w", err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil {
				names[fn.Name.Name] = true
			}
		}
	}
	return names, nil
}

// readPage parses the parity page of the repository.
func readPage(t *testing.T) []section {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(repoRoot, page))
	if err != nil {
		t.Fatalf("reading the parity page: %v", err)
	}
	secs, err := parseTables(string(text))
	if err != nil {
		t.Fatalf("parsing %s:\n%v", page, err)
	}
	return secs
}

func TestParseTables(t *testing.T) {
	const good = "# Title\n\n" +
		"## ctrlkit\n\n" +
		"| feature | where it lives in bosun | test | notes |\n" +
		"| --- | --- | --- | --- |\n" +
		"| Join | `flow.Join` | `flow.TestJoins`, `bosun.TestOutcomes` | |\n" +
		"| Deleting | `managed.ReasonDeleting` | missing | built |\n" +
		"\ntext\n\n" +
		"## okofw\n\n" +
		"| feature | where it lives in bosun | test | notes |\n" +
		"|---|:---|---:|---|\n" +
		"| Req | `bosun.Pass` | `gen/internal/cronjob.ExampleCronJobControllerManagerState_GetJobs` | `ReasonCredentialsMissing` is no mark |\n"
	tests := []struct {
		name    string
		text    string
		want    []section
		wantErr []string // substrings of the error, in order; nil for none
	}{
		{
			name: "tables under their headings",
			text: good,
			want: []section{
				{Heading: "ctrlkit", Rows: []row{
					{Line: 7, Feature: "Join", Where: "`flow.Join`", Test: "`flow.TestJoins`, `bosun.TestOutcomes`",
						Cites: []cite{{Dir: "flow", Name: "TestJoins"}, {Dir: ".", Name: "TestOutcomes"}}},
					{Line: 8, Feature: "Deleting", Where: "`managed.ReasonDeleting`", Test: "missing", Notes: "built"},
				}},
				{Heading: "okofw", Rows: []row{
					{Line: 16, Feature: "Req", Where: "`bosun.Pass`", Test: "`gen/internal/cronjob.ExampleCronJobControllerManagerState_GetJobs`",
						Notes: "`ReasonCredentialsMissing` is no mark",
						Cites: []cite{{Dir: "gen/internal/cronjob", Name: "ExampleCronJobControllerManagerState_GetJobs"}}},
				}},
			},
		},
		{
			name: "mistakes",
			text: "## s\n" +
				"| feature | where | test | notes |\n" +
				"| feature | where it lives in bosun | test | notes |\n" +
				"| a | b | `flow.Join` | |\n" +
				"| a | b | c |\n" +
				"| a | b | nothing | |\n" +
				"| | b | `flow.TestJoins` | |\n",
			wantErr: []string{
				":2: table header",
				":3: no separator row",
				`:4: "flow.Join" in the test cell is not`,
				`:4: "a" cites no test`,
				":5: 3 cells, want 4",
				`:6: "a" cites no test`,
				":7: empty feature or where cell",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseTables(tt.text)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("parseTables: %v", err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("parseTables (-want +got):\n%s", diff)
				}
				return
			}
			if err == nil {
				t.Fatal("parseTables: no error")
			}
			msg := err.Error()
			for _, w := range tt.wantErr {
				i := strings.Index(msg, w)
				if i < 0 {
					t.Errorf("error lacks %q, in order:\n%s", w, err)
					continue
				}
				msg = msg[i+len(w):]
			}
		})
	}
}

func TestSaysMissing(t *testing.T) {
	tests := []struct {
		r    row
		want bool
	}{
		{row{Where: "`managed.X`", Test: "`managed.TestX`"}, false},
		{row{Where: "`managed.X`", Test: "missing"}, true},
		{row{Where: "Missing", Test: "missing"}, true},
		{row{Where: "`managed.ReasonCredentialsMissing`", Test: "`managed.TestX`"}, false},
		{row{Where: "`managed.X`", Test: "`managed.TestX`", Notes: "when the Secret is missing"}, false},
	}
	for _, tt := range tests {
		if got := tt.r.saysMissing(); got != tt.want {
			t.Errorf("%+v.saysMissing() = %v, want %v", tt.r, got, tt.want)
		}
	}
}

func TestTestFuncs(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a_test.go": "package a\n\nfunc TestA(t *testing.T) {}\nfunc ExampleA() {}\nfunc (x T) TestMethod() {}\n",
		"a.go":      "package a\n\nfunc TestNotInATestFile() {}\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := testFuncs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]bool{"TestA": true, "ExampleA": true}, got); diff != "" {
		t.Errorf("testFuncs (-want +got):\n%s", diff)
	}
	if _, err := testFuncs(filepath.Join(dir, "none")); err == nil {
		t.Error("testFuncs of a directory that does not exist: no error")
	}
}

// TestCitedTestsExist checks that every test and example the parity page
// cites is a function of that name in a _test.go file of the directory it
// names, and that the page has a table, with rows, for every seed.
func TestCitedTestsExist(t *testing.T) {
	secs := readPage(t)
	if len(secs) != seeds {
		t.Errorf("%s has %d tables, want one per seed (%d)", page, len(secs), seeds)
	}
	funcs := map[string]map[string]bool{}
	var bad []string
	cited := 0
	for _, s := range secs {
		if len(s.Rows) == 0 {
			t.Errorf("%s: the table under %q has no rows", page, s.Heading)
		}
		for _, r := range s.Rows {
			for _, c := range r.Cites {
				cited++
				names, ok := funcs[c.Dir]
				if !ok {
					var err error
					if names, err = testFuncs(filepath.Join(repoRoot, c.Dir)); err != nil {
						bad = append(bad, fmt.Sprintf("%s:%d: %s: %v", page, r.Line, c, err))
					}
					funcs[c.Dir] = names
				}
				if names != nil && !names[c.Name] {
					bad = append(bad, fmt.Sprintf("%s:%d: %s: no function %s in %s/*_test.go", page, r.Line, c, c.Name, c.Dir))
				}
			}
		}
	}
	if len(bad) > 0 {
		t.Errorf("%d of %d cited tests do not exist:\n%s", len(bad), cited, strings.Join(bad, "\n"))
	}
}

// TestNothingMissing fails while any row of the parity page says that a
// feature, or its test, is missing, and lists those rows.
func TestNothingMissing(t *testing.T) {
	var rows []string
	for _, s := range readPage(t) {
		for _, r := range s.Rows {
			if r.saysMissing() {
				rows = append(rows, fmt.Sprintf("%s:%d: %s: %s (where: %s; test: %s)", page, r.Line, s.Heading, r.Feature, r.Where, r.Test))
			}
		}
	}
	if len(rows) > 0 {
		t.Errorf("%d rows say missing:\n%s", len(rows), strings.Join(rows, "\n"))
	}
}
