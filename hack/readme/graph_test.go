package readme

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestLibraryGraph checks the README's promise that an operator requires
// the library and nothing else: a new module that imports the engine and
// children has in its module graph no module beyond those that the
// library's own imports bring. The baseline is a second new module that
// imports every package the library's code imports from outside itself, at
// the versions the library requires.
func TestLibraryGraph(t *testing.T) {
	if testing.Short() {
		t.Skip("resolves two new modules' graphs with the go command; skipped with -short")
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	goVersion := goDirective(t, root)
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}

	// What the library's code imports from outside itself and the standard
	// library; its tests' imports are not counted.
	var imports []string
	for _, p := range strings.Fields(goIn(t, root, "list", "-f", `{{join .Imports " "}}`, "./...")) {
		first, _, _ := strings.Cut(p, "/")
		if strings.Contains(first, ".") && p != bosunModule && !strings.HasPrefix(p, bosunModule+"/") {
			imports = append(imports, p)
		}
	}
	slices.Sort(imports)
	imports = slices.Compact(imports)

	// The baseline: those imports, at the library's versions (its go.mod's
	// requirements, which go mod tidy then prunes to what they need).
	base := t.TempDir()
	var src strings.Builder
	src.WriteString("package base\n\nimport (\n")
	for _, p := range imports {
		fmt.Fprintf(&src, "\t_ %q\n", p)
	}
	src.WriteString(")\n")
	requires := string(gomod)[strings.Index(string(gomod), "\nrequire"):]
	writeModule(t, base, "module example.com/base\n\ngo "+goVersion+"\n"+requires, sum, src.String())
	baseline := graph(t, base)

	op := t.TempDir()
	writeModule(t, op,
		fmt.Sprintf("module example.com/op\n\ngo %s\n\nrequire %s v0.0.0\n\nreplace %s => %s\n", goVersion, bosunModule, bosunModule, root),
		sum,
		"package op\n\nimport (\n\t_ \"github.com/bosunkit/bosun\"\n\t_ \"github.com/bosunkit/bosun/children\"\n)\n")
	opGraph := graph(t, op)
	t.Logf("%d modules in the graph of a module importing bosun and bosun/children, %d in the baseline's", len(opGraph), len(baseline))
	var extra []string
	for _, m := range opGraph {
		if m != "example.com/op" && m != bosunModule && !slices.Contains(baseline, m) {
			extra = append(extra, m)
		}
	}
	if len(extra) > 0 {
		t.Errorf("a module importing bosun and bosun/children requires %d modules that the library's code does not need:\n%s",
			len(extra), strings.Join(extra, "\n"))
	}
}

// writeModule writes a new module into dir: its go.mod, a go.sum to spare
// downloads, and one Go file.
func writeModule(t *testing.T, dir, gomod string, sum []byte, src string) {
	t.Helper()
	for name, data := range map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum, "src.go": []byte(src)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// graph tidies the module at dir and returns the paths of its module
// graph, itself included.
func graph(t *testing.T, dir string) []string {
	t.Helper()
	goIn(t, dir, "mod", "tidy")
	return strings.Fields(goIn(t, dir, "list", "-m", "-f", "{{.Path}}", "all"))
}

// goIn runs the go command with args in dir, outside any workspace, and
// returns its standard output, failing the test when it fails.
func goIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	stdout, stderr, err := goCommand(t, dir, args...)
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, stderr)
	}
	return stdout
}

// goCommand runs the go command with args in dir, outside any workspace
// and with go.mod open to changes, and returns its standard output and
// error.
func goCommand(t *testing.T, dir string, args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(t.Context(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	cmd.WaitDelay = 10 * time.Second
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}
