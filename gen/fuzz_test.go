package gen

import (
	"errors"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"testing"

	"github.com/bosunkit/bosun/dsl"
)

// FuzzGenerate feeds documents that parse and check to Generate: it must
// not panic, and what it returns must be valid Go with the header first.
func FuzzGenerate(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.bosun"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Add(benchDoc(100))
	f.Fuzz(func(t *testing.T, src []byte) {
		file, err := dsl.Parse("fuzz.bosun", src)
		if err != nil {
			return
		}
		spec, err := dsl.Check(file, dsl.CheckOptions{})
		if err != nil {
			return
		}
		out, err := Generate(spec, Options{Package: "fuzz"})
		if err != nil {
			var list dsl.ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("Generate error %T is not a dsl.ErrorList: %v", err, err)
			}
			return
		}
		if _, err := parser.ParseFile(token.NewFileSet(), "out.go", out, parser.ParseComments); err != nil {
			t.Fatalf("output does not parse: %v\n%s", err, out)
		}
		if len(out) < len(Header) || string(out[:len(Header)]) != Header {
			t.Fatalf("output does not start with the header:\n%s", out)
		}
	})
}
