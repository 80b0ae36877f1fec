package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parsedConsts parses src and returns its package name and constant values.
func parsedConsts(t *testing.T, src []byte) (string, map[string]string) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "gen.go", src, parser.ParseComments)
	if err != nil {
		t.Fatalf("generated source does not parse: %v\n%s", err, src)
	}
	got := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		lit := vs.Values[0].(*ast.BasicLit)
		v, err := strconv.Unquote(lit.Value)
		if err != nil {
			t.Fatalf("unquoting %s: %v", vs.Names[0].Name, err)
		}
		got[vs.Names[0].Name] = v
		return false
	})
	return f.Name.Name, got
}

func TestRender(t *testing.T) {
	tests := []struct {
		name   string
		consts []constant
		want   map[string]string
	}{
		{
			name:   "plain text",
			consts: []constant{{Name: "a", Source: "a.txt", Text: "module x\n\ngo 1.26\n"}},
			want:   map[string]string{"a": "module x\n\ngo 1.26\n"},
		},
		{
			name: "backtick and carriage return survive",
			consts: []constant{
				{Name: "tick", Source: "t", Text: "a `b` c\n"},
				{Name: "cr", Source: "c", Text: "line\r\n"},
			},
			want: map[string]string{"tick": "a `b` c\n", "cr": "line\r\n"},
		},
		{
			name:   "empty text",
			consts: []constant{{Name: "empty", Source: "e", Text: ""}},
			want:   map[string]string{"empty": ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := render("demo", tt.consts)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			if !strings.HasPrefix(string(src), header+"\n") {
				t.Errorf("generated source does not start with %q:\n%s", header, src)
			}
			pkg, got := parsedConsts(t, src)
			if pkg != "demo" {
				t.Errorf("package = %q, want demo", pkg)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("constants (-want +got):\n%s", diff)
			}
			again, err := render("demo", tt.consts)
			if err != nil {
				t.Fatalf("second render: %v", err)
			}
			if diff := cmp.Diff(string(src), string(again)); diff != "" {
				t.Errorf("render is not deterministic (-first +second):\n%s", diff)
			}
		})
	}
}

func TestRenderRejectsBadNames(t *testing.T) {
	tests := []struct {
		name   string
		pkg    string
		consts []constant
	}{
		{name: "bad package", pkg: "1x", consts: []constant{{Name: "a"}}},
		{name: "bad constant", pkg: "p", consts: []constant{{Name: "a-b"}}},
		{name: "duplicate constant", pkg: "p", consts: []constant{{Name: "a"}, {Name: "a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := render(tt.pkg, tt.consts); err == nil {
				t.Fatal("render succeeded, want an error")
			}
		})
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(in, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.go")
	if err := run([]string{"-pkg", "p", "-out", out, "greeting=" + in}); err != nil {
		t.Fatalf("run: %v", err)
	}
	src, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	_, got := parsedConsts(t, src)
	if diff := cmp.Diff(map[string]string{"greeting": "hello\n"}, got); diff != "" {
		t.Errorf("constants (-want +got):\n%s", diff)
	}

	for _, args := range [][]string{
		{"-pkg", "p", "-out", out},
		{"-pkg", "p", "-out", out, "noequals"},
		{"-pkg", "p", "-out", out, "x=" + filepath.Join(dir, "missing")},
	} {
		if err := run(args); err == nil {
			t.Errorf("run(%q) succeeded, want an error", args)
		}
	}
}
