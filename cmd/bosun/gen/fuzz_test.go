package gen

import (
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bosunkit/bosun/cmd/bosun/dsl"
	"github.com/bosunkit/bosun/cmd/bosun/internal/errpos"
)

// fuzzFile is the name FuzzGenerate gives its documents.
const fuzzFile = "fuzz.bosun"

// FuzzGenerate feeds documents to Parse, Check and, when they parse and
// check, Generate. A panic fails the run, and so does an error of any of
// them that is not "fuzz.bosun:LINE:COL: message" at a position inside the
// input. What Generate returns must be valid Go with the header first.
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
		file, err := dsl.Parse(fuzzFile, src)
		checkPositions(t, err, src)
		if err != nil {
			return
		}
		spec, err := dsl.Check(file, dsl.CheckOptions{})
		checkPositions(t, err, src)
		if err != nil {
			return
		}
		out, err := Generate(spec, Options{Package: "fuzz"})
		if err != nil {
			checkPositions(t, err, src) // a dsl.ErrorList, nothing else
			return
		}
		if _, err := parser.ParseFile(token.NewFileSet(), "out.go", out, parser.ParseComments); err != nil {
			t.Fatalf("output does not parse: %v\n%s", err, out)
		}
		if len(out) < len(header) || string(out[:len(header)]) != header {
			t.Fatalf("output does not start with the header:\n%s", out)
		}
	})
}

// badPosition starts the message of a failure of checkPositions; the
// figures of `make reliability` look for it in the fuzzing output.
const badPosition = "bad error position"

// checkPositions fails t if positionProblem finds a problem with err.
func checkPositions(t *testing.T, err error, src []byte) {
	t.Helper()
	if problem := positionProblem(err, fuzzFile, src); problem != "" {
		t.Fatalf("%s: %s\ninput: %q", badPosition, problem, src)
	}
}

// positionProblem returns what is wrong with err, or "" when every error in
// it (a dsl.ErrorList or a single *dsl.Error) names a real place in src, as errpos.Problem
// checks. A nil err has no problem.
func positionProblem(err error, filename string, src []byte) string {
	if err == nil {
		return ""
	}
	var list dsl.ErrorList
	var one *dsl.Error
	switch {
	case errors.As(err, &list):
	case errors.As(err, &one):
		list = dsl.ErrorList{one}
	default:
		return fmt.Sprintf("error is a %T, want a dsl.ErrorList or a *dsl.Error: %v", err, err)
	}
	located := make([]errpos.Located, 0, len(list))
	for _, e := range list {
		located = append(located, errpos.Located{Text: e.Error(), Offset: e.Pos.Offset})
	}
	return errpos.Problem(err.Error(), located, filename, src)
}

// TestPositionProblem checks what positionProblem hands errpos.Problem;
// errpos checks the positions themselves.
func TestPositionProblem(t *testing.T) {
	src := []byte("ab\r\ncd\n")
	at := func(line, col, off int) dsl.Pos {
		return dsl.Pos{Filename: "f.bosun", Line: line, Column: col, Offset: off}
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"carriage return and end of line", dsl.ErrorList{{Pos: at(1, 3, 2), Msg: "m"}, {Pos: at(2, 3, 6), Msg: "m"}}, ""},
		{"empty last line", &dsl.Error{Pos: at(3, 1, 7), Msg: "m"}, ""},
		{"other error", errors.New("f.bosun:1:1: m"), "error is a *errors.errorString, want a dsl.ErrorList or a *dsl.Error: f.bosun:1:1: m"},
		{"no position", dsl.ErrorList{{Msg: "m"}}, `error "m" is not f.bosun:LINE:COL: message`},
		{"wrong offset", dsl.ErrorList{{Pos: at(2, 1, 3), Msg: "m"}}, `error "f.bosun:2:1: m": offset 3, want 4 for 2:1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, positionProblem(tt.err, "f.bosun", src)); diff != "" {
				t.Errorf("positionProblem (-want +got):\n%s", diff)
			}
		})
	}
}
