package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// canonical is a document in canonical form; messy is the same document
// with other spacing.
const (
	canonical = "decl M for Pod {\n\tstate {\n\t\tcm ConfigMap {\n\t\t\tname=${target.Name}\n\t\t}\n\t}\n\n\taction {\n\t\tSync(cm)\n\t}\n}\n"
	messy     = "decl   M for Pod{\n    state {\n        cm ConfigMap {\n            name=${target.Name}   \n        }\n    }\n\n\n    action { \n        Sync( cm )\n    }\n}\n"
)

// tree writes files (slash-separated paths relative to a new temporary
// directory, with their content) and returns the directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// lines splits output into its lines, none for empty output.
func lines(out string) []string {
	if out == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

// documentTree is a directory of documents, canonical and not, some in
// directories that fmt skips unless they are named.
var documentTree = map[string]string{
	"a.bosun":              messy,
	"b.bosun":              canonical,
	"notes.txt":            messy,
	"sub/c.bosun":          messy,
	"sub/d.bosun":          canonical,
	"sub/deeper/e.bosun":   messy,
	"testdata/f.bosun":     messy,
	"sub/testdata/g.bosun": messy,
	"vendor/h.bosun":       messy,
	".hidden/i.bosun":      messy,
	"_ignored/j.bosun":     messy,
	"sub/.k.bosun":         messy,
}

func TestFmtListPaths(t *testing.T) {
	root := tree(t, documentTree)
	at := func(name string) string { return filepath.Join(root, filepath.FromSlash(name)) }
	for _, tc := range []struct {
		name  string
		paths []string
		want  []string
	}{
		{
			name:  "directory: recursive, skipping testdata, vendor, hidden and _ directories",
			paths: []string{root},
			want:  []string{at("a.bosun"), at("sub/c.bosun"), at("sub/deeper/e.bosun")},
		},
		{
			name:  "testdata directory given explicitly",
			paths: []string{at("testdata")},
			want:  []string{at("testdata/f.bosun")},
		},
		{
			name:  "directory inside a skipped one, given explicitly",
			paths: []string{at("sub/testdata")},
			want:  []string{at("sub/testdata/g.bosun")},
		},
		{
			name:  "canonical file",
			paths: []string{at("b.bosun")},
		},
		{
			name:  "file given explicitly, whatever its name",
			paths: []string{at("notes.txt"), at(".hidden/i.bosun")},
			want:  []string{at("notes.txt"), at(".hidden/i.bosun")},
		},
		{
			name:  "files and directories, in the order given",
			paths: []string{at("sub"), at("b.bosun"), at("a.bosun")},
			want:  []string{at("sub/c.bosun"), at("sub/deeper/e.bosun"), at("a.bosun")},
		},
		{
			name:  "directory with only canonical documents",
			paths: []string{tree(t, map[string]string{"x.bosun": canonical, "y/z.bosun": canonical})},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, err := run(t, append([]string{"fmt", "-l"}, tc.paths...)...)
			// Listing documents, or none, is a success, as for gofmt -l.
			if err != nil || stderr != "" {
				t.Fatalf("bosun fmt -l: err %v\nstderr:\n%s", err, stderr)
			}
			if diff := cmp.Diff(tc.want, lines(stdout)); diff != "" {
				t.Errorf("bosun fmt -l listed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFmtListExitStatus(t *testing.T) {
	root := tree(t, map[string]string{"a.bosun": messy, "b.bosun": canonical, "bad/c.bosun": "decl M for Pod {\n"})
	for _, tc := range []struct {
		name       string
		path       string
		wantOut    string
		wantStatus int
		wantErr    string
	}{
		{name: "lists one", path: "a.bosun", wantOut: "a.bosun\n"},
		{name: "lists none", path: "b.bosun"},
		{name: "does not parse", path: "bad", wantStatus: 1, wantErr: filepath.Join("bad", "c.bosun") + ":2:1: "},
		{name: "missing", path: "missing", wantStatus: 1, wantErr: "bosun: stat missing: no such file or directory\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, status := runMain(t, root, "fmt", "-l", tc.path)
			if stdout != tc.wantOut || status != tc.wantStatus {
				t.Errorf("bosun fmt -l %s: stdout %q, status %d; want %q, %d", tc.path, stdout, status, tc.wantOut, tc.wantStatus)
			}
			if tc.wantErr == "" && stderr != "" || !strings.Contains(stderr, tc.wantErr) {
				t.Errorf("bosun fmt -l %s: stderr %q, want %q", tc.path, stderr, tc.wantErr)
			}
		})
	}
}

func TestFmtListReportsAndGoesOn(t *testing.T) {
	root := tree(t, map[string]string{"a.bosun": messy, "b.bosun": "decl M for Pod {\n", "c.bosun": messy})
	missing := filepath.Join(root, "missing")
	stdout, stderr, err := run(t, "fmt", "-l", missing, root)
	if !errors.Is(err, errReported) {
		t.Errorf("bosun fmt -l: err %v, want errReported", err)
	}
	if diff := cmp.Diff([]string{filepath.Join(root, "a.bosun"), filepath.Join(root, "c.bosun")}, lines(stdout)); diff != "" {
		t.Errorf("bosun fmt -l listed (-want +got):\n%s", diff)
	}
	for _, want := range []string{filepath.Join(root, "b.bosun") + ":2:1: ", "bosun: stat " + missing + ": "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

func TestFmtWriteDirectory(t *testing.T) {
	root := tree(t, documentTree)
	if _, stderr, err := run(t, "fmt", "-w", root); err != nil {
		t.Fatalf("bosun fmt -w: %v\n%s", err, stderr)
	}
	got := make(map[string]string)
	for name := range documentTree {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		got[name] = string(b)
	}
	want := make(map[string]string)
	for name, content := range documentTree {
		want[name] = content
	}
	for _, name := range []string{"a.bosun", "sub/c.bosun", "sub/deeper/e.bosun"} {
		want[name] = canonical
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after bosun fmt -w (-want +got):\n%s", diff)
	}
	if listed, _, err := run(t, "fmt", "-l", root); err != nil || listed != "" {
		t.Errorf("bosun fmt -l after -w = %q, %v; want nothing", listed, err)
	}
}

func TestFmtStandardInput(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		in      string
		wantOut string
		wantErr bool
	}{
		{name: "prints canonical form", args: []string{"fmt"}, in: messy, wantOut: canonical},
		{name: "lists", args: []string{"fmt", "-l"}, in: messy, wantOut: stdinName + "\n"},
		{name: "lists nothing", args: []string{"fmt", "-l"}, in: canonical},
		{name: "cannot write", args: []string{"fmt", "-w"}, in: messy, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := newRootCommand()
			var out, errOut strings.Builder
			cmd.SetIn(strings.NewReader(tc.in))
			cmd.SetOut(&out)
			cmd.SetErr(&errOut)
			cmd.SetArgs(tc.args)
			err := cmd.Execute()
			if (err != nil) != tc.wantErr {
				t.Fatalf("bosun %v: err %v, want error %t\nstderr:\n%s", tc.args, err, tc.wantErr, errOut.String())
			}
			if diff := cmp.Diff(tc.wantOut, out.String()); diff != "" {
				t.Errorf("bosun %v printed (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

// TestRepositoryDocumentsCanonical holds every document of the repository
// outside testdata in canonical form, as `make verify` does.
func TestRepositoryDocumentsCanonical(t *testing.T) {
	stdout, stderr, err := run(t, "fmt", "-l", "../..")
	if err != nil || stderr != "" {
		t.Fatalf("bosun fmt -l ../..: %v\n%s", err, stderr)
	}
	if stdout != "" {
		t.Errorf("documents not in canonical form (run go run ./cmd/bosun fmt -w . at the root):\n%s", stdout)
	}
}
