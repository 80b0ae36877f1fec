package gen

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bosunkit/bosun/cmd/bosun/dsl"
)

var update = flag.Bool("update", false, "rewrite the .golden files (and the generated packages under internal/) from the current generator")

// goTypes is shared by the tests, so that each package is loaded once.
var goTypes = NewGoTypes(".")

// inPackage names the cases whose output is also kept, as the package of
// the same name under internal/, for the tests that run the generated code.
var inPackage = map[string]bool{"cronjob": true, "fields": true, "frontend": true, "scopes": true}

// goldenCase is one testdata/NAME.bosun document.
type goldenCase struct {
	name   string // NAME; also the package name of the output
	source string // path of the document
	golden string // path of the expected output
}

func goldenCases(t *testing.T) []goldenCase {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.bosun"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no testdata/*.bosun documents")
	}
	var cases []goldenCase
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".bosun")
		cases = append(cases, goldenCase{name: name, source: p, golden: filepath.Join("testdata", name+".golden")})
	}
	return cases
}

// generateFile parses, checks (with Go types) and generates a document.
func generateFile(t testing.TB, path, pkg string) []byte {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := dsl.Parse(filepath.Base(path), src)
	if err != nil {
		var b bytes.Buffer
		dsl.PrintErrors(&b, err, src)
		t.Fatalf("parse %s:\n%s", path, b.String())
	}
	spec, err := dsl.Check(f, dsl.CheckOptions{Types: goTypes})
	if err != nil {
		var b bytes.Buffer
		dsl.PrintErrors(&b, err, src)
		t.Fatalf("check %s:\n%s", path, b.String())
	}
	out, err := Generate(spec, Options{Package: pkg, Types: goTypes})
	if err != nil {
		t.Fatalf("generate %s: %v", path, err)
	}
	return out
}

// TestGolden generates every testdata document and compares the output with
// its .golden file; the documents kept as packages under internal/ must
// also match there. Run `go test ./gen -update` to rewrite them.
func TestGolden(t *testing.T) {
	for _, c := range goldenCases(t) {
		t.Run(c.name, func(t *testing.T) {
			got := generateFile(t, c.source, c.name)
			files := []string{c.golden}
			if inPackage[c.name] {
				files = append(files, filepath.Join("internal", c.name, OutputName(c.name+".bosun")))
			}
			for _, file := range files {
				if *update {
					if err := os.WriteFile(file, got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(file)
				if err != nil {
					t.Fatalf("%v (run `go test ./gen -update` to create it)", err)
				}
				if diff := cmp.Diff(string(want), string(got)); diff != "" {
					t.Errorf("%s differs from the generator's output (-want +got); run `go test ./gen -update` if the change is intended:\n%s", file, diff)
				}
			}
			again := generateFile(t, c.source, c.name)
			if !bytes.Equal(got, again) {
				t.Errorf("two runs on %s differ", c.source)
			}
		})
	}
}

// TestGoldenCompiles writes every golden file, and the output for the
// benchmark's document, into a package of its own inside the module and runs
// `go vet` on them.
func TestGoldenCompiles(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to compile the generated code: %v", err)
	}
	root, err := os.MkdirTemp("testdata", "build")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	var dirs []string
	for _, c := range goldenCases(t) {
		src, err := os.ReadFile(c.golden)
		if err != nil {
			t.Fatalf("%v (run `go test ./gen -update` to create it)", err)
		}
		dir := filepath.Join(root, c.name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, OutputName(c.name+".bosun")), src, 0o644); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, "./"+filepath.ToSlash(dir))
	}
	// The benchmark's document, for many decls in one file.
	spec, err := dsl.Check(mustParse(t, "bench.bosun", benchDoc(1000)), dsl.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bench, err := Generate(spec, Options{Package: "bench"})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "bench")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, OutputName("bench.bosun")), bench, 0o644); err != nil {
		t.Fatal(err)
	}
	dirs = append(dirs, "./"+filepath.ToSlash(dir))

	cmd := exec.Command(goTool, append([]string{"vet"}, dirs...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go vet %s: %v\n%s", strings.Join(dirs, " "), err, out)
	}
}

func mustParse(t *testing.T, name string, src []byte) *dsl.File {
	t.Helper()
	f, err := dsl.Parse(name, src)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
