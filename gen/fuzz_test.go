package gen

import (
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bosunkit/bosun/dsl"
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
		if len(out) < len(Header) || string(out[:len(Header)]) != Header {
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
// it (a dsl.ErrorList or a single *dsl.Error) reads "FILE:LINE:COL:
// message", FILE being filename, LINE a line of src and COL a byte column of
// that line, 1-based and at most one past its last byte, and the position's
// offset is the byte that LINE:COL names. A nil err has no problem. Package
// dsl's FuzzParse checks its errors the same way.
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
	if len(list) == 0 {
		return "non-nil error with an empty ErrorList"
	}
	form := regexp.MustCompile(`^` + regexp.QuoteMeta(filename) + `:([0-9]+):([0-9]+): (.+)$`)
	// starts[i] is the offset of line i+1. Lines end at '\n'; a carriage
	// return before it is a byte of the line.
	starts := []int{0}
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	for _, e := range list {
		text := e.Error()
		m := form.FindStringSubmatch(text)
		if m == nil {
			return fmt.Sprintf("error %q is not %s:LINE:COL: message", text, filename)
		}
		line, _ := strconv.Atoi(m[1])
		col, _ := strconv.Atoi(m[2])
		if line < 1 || line > len(starts) {
			return fmt.Sprintf("error %q: line %d is not one of the input's %d lines", text, line, len(starts))
		}
		end := len(src)
		if line < len(starts) {
			end = starts[line] - 1
		}
		if n := end - starts[line-1]; col < 1 || col > n+1 {
			return fmt.Sprintf("error %q: column %d is not in line %d of %d bytes", text, col, line, n)
		}
		if want := starts[line-1] + col - 1; e.Pos.Offset != want {
			return fmt.Sprintf("error %q: offset %d, want %d for %d:%d", text, e.Pos.Offset, want, line, col)
		}
	}
	if got := err.Error(); strings.Count(got, "\n") != len(list)-1 {
		return fmt.Sprintf("error text has %d lines for %d errors: %q", strings.Count(got, "\n")+1, len(list), got)
	}
	return ""
}

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
		{"message of two lines", dsl.ErrorList{{Pos: at(1, 1, 0), Msg: "m\nn"}}, `error "f.bosun:1:1: m\nn" is not f.bosun:LINE:COL: message`},
		{"line past the end", dsl.ErrorList{{Pos: at(4, 1, 8), Msg: "m"}}, `error "f.bosun:4:1: m": line 4 is not one of the input's 3 lines`},
		{"column past the line", dsl.ErrorList{{Pos: at(2, 4, 7), Msg: "m"}}, `error "f.bosun:2:4: m": column 4 is not in line 2 of 2 bytes`},
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
