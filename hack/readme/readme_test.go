package readme

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/bosunkit/bosun/controlplane"
)

const (
	// heading is the heading of the README section under test.
	heading = "## Your first operator"
	// bosunModule is the module path of bosun, which the pasted module
	// requires.
	bosunModule = "github.com/bosunkit/bosun"
	// repoRoot is the repository root, from this package's directory.
	repoRoot = "../.."
	// commandTimeout bounds each go command the test runs in the pasted
	// module when the test itself has no deadline.
	commandTimeout = 10 * time.Minute
)

// commandLanguages are the info strings of the code blocks that hold
// commands to type, not files to paste.
var commandLanguages = map[string]bool{"sh": true, "shell": true, "bash": true, "console": true}

// fileNameLine matches the first line of a code block that names its file:
// a line comment holding nothing but a relative path with an extension.
var fileNameLine = regexp.MustCompile(`^(?://|#)\s*([\w./-]*\.[\w-]+)$`)

// file is a file of the pasted module: one code block of the section.
type file struct {
	// Name is the file's path in the module, taken from the block's first
	// line.
	Name string
	// Line is the line of README.md holding the block's opening fence.
	Line int
	// Text is the block as a reader pastes it, first line included.
	Text string
}

// section is what parseSection finds in a section: the files its code
// blocks name, and the lines of its command blocks.
type section struct {
	Files    []file
	Commands []string
}

// parseSection returns the files and commands of the section headed
// heading in the Markdown text md: the code blocks from the heading to the
// next second-level heading. Every block but the command ones (sh, shell,
// bash, console) must name its file on its first line, once in the section.
func parseSection(md, heading string) (section, error) {
	var (
		sec       section
		in, found bool
		fence     int // line of the open fence; 0 outside a block
		lang      string
		body      []string
		seen      = map[string]int{}
	)
	lines := strings.Split(md, "\n")
	for i, line := range lines {
		n := i + 1
		switch {
		case fence == 0 && line == heading:
			in, found = true, true
		case fence == 0 && strings.HasPrefix(line, "## "):
			in = false
		case !in:
		case fence == 0 && strings.HasPrefix(line, "```"):
			fence, lang, body = n, strings.TrimSpace(strings.TrimPrefix(line, "```")), nil
		case fence != 0 && strings.TrimSpace(line) == "```":
			if commandLanguages[lang] {
				sec.Commands = append(sec.Commands, body...)
			} else {
				f, err := blockFile(fence, lang, body)
				if err != nil {
					return section{}, err
				}
				if first, ok := seen[f.Name]; ok {
					return section{}, fmt.Errorf("README.md:%d: the block names %s, as the block at line %d does; each file is given once", fence, f.Name, first)
				}
				seen[f.Name] = fence
				sec.Files = append(sec.Files, f)
			}
			fence = 0
		case fence != 0:
			body = append(body, line)
		}
	}
	switch {
	case !found:
		return section{}, fmt.Errorf("README.md has no section %q", heading)
	case fence != 0:
		return section{}, fmt.Errorf("README.md:%d: the code block is never closed", fence)
	case len(sec.Files) == 0:
		return section{}, fmt.Errorf("README.md: the section %q has no code block naming a file", heading)
	}
	return sec, nil
}

// blockFile returns the file that the code block opened at line fence, in
// language lang, with the lines body, names.
func blockFile(fence int, lang string, body []string) (file, error) {
	var first string
	if len(body) > 0 {
		first = strings.TrimSpace(body[0])
	}
	m := fileNameLine.FindStringSubmatch(first)
	if m == nil {
		return file{}, fmt.Errorf("README.md:%d: the %q block names no file: its first line is %q; "+
			"start it with a comment naming the file, such as \"// greeting.go\" or \"# crd.yaml\"", fence, lang, first)
	}
	name := m[1]
	if !filepath.IsLocal(name) || path.Clean(name) != name {
		return file{}, fmt.Errorf("README.md:%d: the block names %q, which is not a clean path inside the module", fence, name)
	}
	return file{Name: name, Line: fence, Text: strings.Join(body, "\n") + "\n"}, nil
}

// modulePath returns the module path of the `go mod init` command among
// commands, and checks that they fetch bosun and run the tests: the steps
// the test stands in for.
func modulePath(commands []string) (string, error) {
	var module string
	var get, test bool
	for _, c := range commands {
		f := strings.Fields(c)
		switch {
		case len(f) == 4 && f[0] == "go" && f[1] == "mod" && f[2] == "init":
			module = f[3]
		case len(f) >= 3 && f[0] == "go" && f[1] == "get" && strings.HasPrefix(f[len(f)-1], bosunModule):
			get = true
		case len(f) >= 3 && f[0] == "go" && f[1] == "test" && f[len(f)-1] == "./...":
			test = true
		}
	}
	var missing []string
	if module == "" {
		missing = append(missing, "`go mod init MODULE`")
	}
	if !get {
		missing = append(missing, "`go get "+bosunModule+"`")
	}
	if !test {
		missing = append(missing, "`go test ./...`")
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("README.md: the commands of the section %q lack %s", heading, strings.Join(missing, ", "))
	}
	return module, nil
}

// readSection parses the section of the repository's README.md.
func readSection(t *testing.T) section {
	t.Helper()
	md, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatalf("reading README.md: %v", err)
	}
	sec, err := parseSection(string(md), heading)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return sec
}

func TestParseSection(t *testing.T) {
	const fence = "```"
	tests := []struct {
		name    string
		md      string
		want    section
		wantErr string
	}{
		{
			name: "files and commands of the section only",
			md: "# t\n## Before\n" + fence + "go\n// before.go\n" + fence + "\n" +
				"## Your first operator\ntext\n" +
				fence + "sh\ngo mod init example.com/x\n" + fence + "\n" +
				fence + "go\n// a.go\n\npackage main\n" + fence + "\n" +
				fence + "yaml\n# config/crd.yaml\n## not a heading\nkind: X\n" + fence + "\n" +
				"## After\n" + fence + "go\n// after.go\n" + fence + "\n",
			want: section{
				Files: []file{
					{Name: "a.go", Line: 11, Text: "// a.go\n\npackage main\n"},
					{Name: "config/crd.yaml", Line: 16, Text: "# config/crd.yaml\n## not a heading\nkind: X\n"},
				},
				Commands: []string{"go mod init example.com/x"},
			},
		},
		{
			name:    "no section",
			md:      "# t\n## Set up\n",
			wantErr: `README.md has no section "## Your first operator"`,
		},
		{
			name:    "a block without a file name",
			md:      "## Your first operator\n" + fence + "go\npackage main\n" + fence + "\n",
			wantErr: `README.md:2: the "go" block names no file: its first line is "package main"; start it with a comment naming the file, such as "// greeting.go" or "# crd.yaml"`,
		},
		{
			name:    "an empty block",
			md:      "## Your first operator\n" + fence + "\n" + fence + "\n",
			wantErr: `README.md:2: the "" block names no file: its first line is ""`,
		},
		{
			name:    "a file named twice",
			md:      "## Your first operator\n" + fence + "go\n// a.go\n" + fence + "\n" + fence + "go\n// a.go\n" + fence + "\n",
			wantErr: "README.md:5: the block names a.go, as the block at line 2 does; each file is given once",
		},
		{
			name:    "a file outside the module",
			md:      "## Your first operator\n" + fence + "go\n// ../a.go\n" + fence + "\n",
			wantErr: `README.md:2: the block names "../a.go", which is not a clean path inside the module`,
		},
		{
			name:    "an unclosed block",
			md:      "## Your first operator\n" + fence + "go\n// a.go\n",
			wantErr: "README.md:2: the code block is never closed",
		},
		{
			name:    "no files",
			md:      "## Your first operator\n" + fence + "sh\ngo test ./...\n" + fence + "\n",
			wantErr: `README.md: the section "## Your first operator" has no code block naming a file`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSection(tt.md, heading)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one starting %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("error = %v, want none", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("section (-want +got):\n%s", diff)
			}
		})
	}
}

func TestModulePath(t *testing.T) {
	tests := []struct {
		name     string
		commands []string
		want     string
		wantErr  string
	}{
		{
			name:     "all three",
			commands: []string{"mkdir x && cd x", "go mod init example.com/x", "go get github.com/bosunkit/bosun", "go mod tidy", "go test ./..."},
			want:     "example.com/x",
		},
		{
			name:     "none",
			commands: []string{"go mod tidy"},
			wantErr:  "README.md: the commands of the section \"## Your first operator\" lack `go mod init MODULE`, `go get github.com/bosunkit/bosun`, `go test ./...`",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := modulePath(tt.commands)
			var gotErr string
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff([2]string{tt.want, tt.wantErr}, [2]string{got, gotErr}); diff != "" {
				t.Errorf("module path, error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSectionGoFilesAreFormatted checks that what a reader pastes is what
// gofmt would write.
func TestSectionGoFilesAreFormatted(t *testing.T) {
	for _, f := range readSection(t).Files {
		if filepath.Ext(f.Name) != ".go" {
			continue
		}
		formatted, err := format.Source([]byte(f.Text))
		if err != nil {
			t.Errorf("README.md:%d: %s does not parse: %v", f.Line, f.Name, err)
			continue
		}
		if !bytes.Equal(formatted, []byte(f.Text)) {
			t.Errorf("README.md:%d: %s is not gofmt-formatted; gofmt writes:\n%s", f.Line, f.Name, formatted)
		}
	}
}

// TestSectionModule pastes the section into a new module, as a reader
// would, and runs its tests against this checkout of bosun.
func TestSectionModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests a module of its own against a control plane; skipped with -short")
	}
	sec := readSection(t)
	module, err := modulePath(sec.Commands)
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	goVersion := goDirective(t, root)

	dir := t.TempDir()
	for _, f := range sec.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.Text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// What `go mod init` and `go get` make, with bosun taken from this
	// checkout; the checkout's go.sum spares most downloads.
	gomod := fmt.Sprintf("module %s\n\ngo %s\n\nrequire %s v0.0.0\n\nreplace %s => %s\n", module, goVersion, bosunModule, bosunModule, root)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}

	// Build the control plane binaries first if they are missing, so that
	// a first build is not charged to the pasted module's test timeout.
	// The pasted module then finds them on its own, in the user cache or
	// through KUBEBUILDER_ASSETS, like any module.
	if _, err := controlplane.Binaries(t.Context(), controlplane.Options{Progress: os.Stderr}); err != nil {
		t.Fatalf("control plane binaries: %v", err)
	}

	runGo(t, dir, "mod", "tidy")
	out := runGo(t, dir, "test", "-count=1", "./...")
	t.Logf("go test ./... in the pasted module:\n%s", out)
}

// goDirective returns the go version of the module rooted at root.
func goDirective(t *testing.T, root string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "go "); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("%s/go.mod has no go directive", root)
	return ""
}

// runGo runs the go command with args in the pasted module at dir and
// returns its output, failing the test with that output when it fails.
func runGo(t *testing.T, dir string, args ...string) string {
	t.Helper()
	stdout, stderr, err := goCommand(t, dir, false, args...)
	if err != nil {
		t.Fatalf("README.md, section %q pasted into a new module: `go %s` failed: %v\n%s%s",
			heading, strings.Join(args, " "), err, stdout, stderr)
	}
	return stdout + stderr
}
