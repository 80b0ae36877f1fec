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

	"github.com/google/go-cmp/cmp"
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

// TestLibraryVersionsInTheWorkspace: in go.work the versions are chosen
// over every module's requirements, so one of the command or the examples
// could raise a module the library links above the library's go.mod, and
// make test would test the library at versions its users do not get. The
// library's packages, their tests included, link the same versions in the
// workspace as on their own.
func TestLibraryVersionsInTheWorkspace(t *testing.T) {
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	const format = "{{with .Module}}{{.Path}} {{.Version}}{{end}}"
	set := func(out string) []string {
		lines := strings.Fields(strings.ReplaceAll(out, " ", "@"))
		slices.Sort(lines)
		return slices.Compact(lines)
	}
	own := set(goIn(t, root, "list", "-deps", "-test", "-f", format, "./..."))
	work := set(goInWorkspace(t, root, "list", "-deps", "-test", "-f", format, "./..."))
	if diff := cmp.Diff(own, work); diff != "" {
		t.Errorf("the library's packages link other versions in the workspace than on their own (-own +workspace); "+
			"require the workspace's versions in the library's go.mod:\n%s", diff)
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
	stdout, stderr, err := goCommand(t, dir, false, args...)
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, stderr)
	}
	return stdout
}

// goInWorkspace runs the go command with args in dir inside the
// repository's workspace (go.work), changing no go.mod, go.sum or
// go.work.sum, and returns its standard output.
func goInWorkspace(t *testing.T, dir string, args ...string) string {
	t.Helper()
	stdout, stderr, err := goCommand(t, dir, true, args...)
	if err != nil {
		t.Fatalf("go %s in %s, in the workspace: %v\n%s", strings.Join(args, " "), dir, err, stderr)
	}
	return stdout
}

// goCommand runs the go command with args in dir and returns its standard
// output and error: outside any workspace and with go.mod open to changes,
// or in the repository's workspace changing nothing.
func goCommand(t *testing.T, dir string, workspace bool, args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(t.Context(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if workspace {
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "GOWORK=")
	}
	cmd.WaitDelay = 10 * time.Second
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}
