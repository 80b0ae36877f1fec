package main

import (
	"bytes"
	"errors"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// source declares one of each kind of exported declaration, and
// unexported ones that the record leaves out.
const source = `package lib

import "context"

const Limit = 3
const Reason Kind = "Ready"
var Default = Kind("x")

type Kind string
type Alias = context.Context
type Fn func(ctx context.Context) error

type Box[T any] struct {
	Item T
	*Inner
	hidden int
}

type Inner struct{ N int }

type Doer interface {
	Do(ctx context.Context) error
	Name() string
}

type Sealed interface {
	Name() string
	seal()
}

type Number interface{ ~int | ~float64 }

func New[T any](item T) *Box[T] { return &Box[T]{Item: item} }
func (b *Box[T]) Get() T        { return b.Item }
func (Kind) String() string     { return "" }
func (b *Box[T]) unexported()   {}
func helper()                   {}
`

// checkSource type-checks src as the package example.com/m/lib.
func checkSource(t *testing.T, src string) *types.Package {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "lib.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	conf := types.Config{Importer: importer.Default()}
	pkg, err := conf.Check("example.com/m/lib", fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

func TestDescribePackage(t *testing.T) {
	got := describePackage(checkSource(t, source), "example.com/m")
	want := []string{
		"pkg lib, type Alias = context.Context",
		"pkg lib, type Box[T any] struct",
		"pkg lib, type Box[T any] struct, Item T",
		"pkg lib, type Box[T any] struct, embedded *Inner",
		"pkg lib, method (*Box) Get() T",
		"pkg lib, var Default Kind",
		"pkg lib, type Doer interface { Do(ctx context.Context) error; Name() string }",
		"pkg lib, type Fn func(ctx context.Context) error",
		"pkg lib, type Inner struct",
		"pkg lib, type Inner struct, N int",
		"pkg lib, type Kind string",
		"pkg lib, method (Kind) String() string",
		"pkg lib, const Limit untyped int = 3",
		"pkg lib, func New[T any](item T) *Box[T]",
		"pkg lib, type Number interface { ~int | ~float64 }",
		`pkg lib, const Reason Kind = "Ready"`,
		"pkg lib, type Sealed interface { Name() string; unexported methods }",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

func TestKeyOf(t *testing.T) {
	for line, want := range map[string]string{
		"pkg lib, type Alias = context.Context":                               "lib.Alias",
		"pkg lib, type Box[T any] struct":                                     "lib.Box",
		"pkg lib, type Box[T any] struct, Item T":                             "lib.Box.Item",
		"pkg lib, type Box[T any] struct, embedded *Inner":                    "lib.Box.Inner",
		"pkg lib, type Box[T any] struct, embedded k8s.io/x/meta/v1.TypeMeta": "lib.Box.TypeMeta",
		"pkg lib, type Box[T any] struct, embedded Base[T]":                   "lib.Box.Base",
		"pkg lib, method (*Box) Get() T":                                      "lib.Box.Get",
		"pkg lib, method (Kind) String() string":                              "lib.Kind.String",
		"pkg lib, var Default Kind":                                           "lib.Default",
		"pkg lib, const Limit untyped int = 3":                                "lib.Limit",
		"pkg lib, func New[T any](item T) *Box[T]":                            "lib.New",
		"pkg lib, type Doer interface { Do(ctx context.Context) error }":      "lib.Doer",
		"pkg bosuntest/faults, func Shard()":                                  "faults.Shard",
		"no line at all":                                                      "",
	} {
		if got := keyOf(line); got != want {
			t.Errorf("keyOf(%q) = %q, want %q", line, got, want)
		}
	}
}

// TestRun records the API of a module of its own, then changes it: an
// addition and an incompatible change both fail the check, and the
// incompatible one is recorded only once the changelog names it.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) { writeFiles(t, dir, map[string]string{name: text}) }
	write("go.mod", "module example.com/m\n\ngo 1.26\n")
	write("CHANGELOG.md", "# Changelog\n\n## Unreleased\n")
	write("lib/lib.go", "package lib\n\nfunc Old() {}\n")
	write("internal/x/x.go", "package x\n\nfunc Hidden() {}\n")
	write("cmd/tool/main.go", "package main\n\nfunc main() {}\n")
	call := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(append([]string{"-root", dir}, args...), &out)
		return out.String(), err
	}

	if out, err := call("-write"); err != nil {
		t.Fatalf("first record: %v\n%s", err, out)
	}
	rec, err := os.ReadFile(filepath.Join(dir, "docs/API.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if body := strings.TrimPrefix(string(rec), recordHeader); body != "pkg lib, func Old()\n" {
		t.Fatalf("record:\n%s", body)
	}
	if out, err := call(); err != nil {
		t.Fatalf("check of an unchanged module: %v\n%s", err, out)
	}

	// An addition: the check fails, the record takes it as it is.
	write("lib/lib.go", "package lib\n\nfunc Old() {}\n\nfunc Added() {}\n")
	out, err := call()
	if !errors.Is(err, errDiffers) || !strings.Contains(out, "+ pkg lib, func Added()") || strings.Contains(out, "incompatible") {
		t.Fatalf("check after an addition: %v\n%s", err, out)
	}
	if out, err := call("-write"); err != nil {
		t.Fatalf("record of an addition: %v\n%s", err, out)
	}

	// A rename: incompatible, refused until the changelog names it.
	write("lib/lib.go", "package lib\n\nfunc New() {}\n\nfunc Added() {}\n")
	out, err = call()
	if !errors.Is(err, errDiffers) || !strings.Contains(out, "- pkg lib, func Old()") || !strings.Contains(out, "+ pkg lib, func New()") {
		t.Fatalf("check after a rename: %v\n%s", err, out)
	}
	out, err = call("-write")
	if err == nil || !strings.Contains(out, "(name lib.Old)") {
		t.Fatalf("record of a rename the changelog does not name: %v\n%s", err, out)
	}
	write("CHANGELOG.md", "# Changelog\n\n## Unreleased\n\n- `lib.Old` is `lib.New`.\n")
	if out, err := call("-write"); err != nil {
		t.Fatalf("record of a rename the changelog names: %v\n%s", err, out)
	}
	if out, err := call(); err != nil {
		t.Fatalf("check after the record: %v\n%s", err, out)
	}
}

// writeFiles writes files, by their paths under dir, making their
// directories.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
