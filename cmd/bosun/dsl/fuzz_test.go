package dsl

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bosunkit/bosun/cmd/bosun/internal/errpos"
)

// fuzzSnippets are small documents, good and bad, that seed FuzzParse.
var fuzzSnippets = []string{
	"",
	"// only a comment\n",
	"bind v1 k8s.io/api/core/v1\n",
	"bind v1\nbind batch/v1 k8s.io/api/batch/v1\n",
	"alias Job batch/v1/Job // trailing\n",
	"decl M for Pod {}\n",
	"decl M {\n}\n",
	"decl M for Pod { state { s Service { name=${target.Name}-svc } } action { A(s) } }\n",
	"decl M for Pod {\n\tstate {\n\t\tl []Job {\n\t\t\tlabels/app=\"a b\\t${target.Spec.X}\"\n\t\t\tfields/.spec.x = y\n\t\t\towned // mine\n\t\t}\n\t}\n}\n",
	"decl M for Pod {\n\tstate {\n\t\tl []Job {\n\t\t\tlabels/a=${target.Name\n\t\t\tfields/b=\"x\n\t\t}\n\t}\n}\n",
	"decl M for Pod {\n\taction {\n\t\tA(x, y,)\n\t\tB(\n\t}\n}\n",
	"}\n{\n[ ] ( ) , \"unterminated\n\x00\xff",
	"decl M for Pod { state { s Service { name=a}}}} // c\n",
	"decl\nalias\nbind\n",
	"alias T example.com/v1/T cluster\nbind example.com/v1 example.com/api\ndecl M for T {\n\tstate {\n\t\tl []Pod {\n\t\t\tlabels/a in (x, \"y\", ${target.Name})\n\t\t\tlabels/b notin (z)\n\t\t\tlabels/c!=d\n\t\t\tlabels/e\n\t\t\t!labels/f\n\t\t}\n\t\tn Node { name=${target.Name} }\n\t\tc ConfigMap { name=x namespace=kube-system }\n\t}\n\taction { A(l, n) writes Pod(delete), ConfigMap(create, patch) }\n}\n",
	"decl M for Pod { state { l []Job { labels/a in (x,\n!owned\nlabels/b notin ()\n} } action { A() writes Job(create,, }\n",
}

// fuzzFile is the name FuzzParse gives its documents.
const fuzzFile = "fuzz.bosun"

// FuzzParse feeds any bytes to Parse, Check (with and without Go types),
// PrintErrors and Format. A panic fails the run, and so does an error that
// is not "fuzz.bosun:LINE:COL: message" at a position inside the input.
// A document without errors must survive Format unchanged in meaning, and
// Format must be idempotent.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.bosun"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	for _, s := range fuzzSnippets {
		f.Add([]byte(s))
	}
	types := fakeTypes{
		strings: map[string]bool{"k8s.io/api/core/v1.Pod:Name": true},
		fields:  map[string][]string{"k8s.io/api/batch/v1.Job:spec.x": {"Spec", "X"}},
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		file, err := Parse(fuzzFile, src)
		if file == nil {
			t.Fatal("Parse returned a nil file")
		}
		checkSorted(t, err)
		checkPositions(t, err, src)
		_, cerr := Check(file, CheckOptions{})
		checkSorted(t, cerr)
		checkPositions(t, cerr, src)
		_, cerr = Check(file, CheckOptions{Types: types})
		checkSorted(t, cerr)
		checkPositions(t, cerr, src)
		var buf bytes.Buffer
		PrintErrors(&buf, err, src)
		PrintErrors(&buf, cerr, src)
		out := Format(file)
		if err != nil {
			return
		}
		file2, err := Parse("formatted.bosun", out)
		if err != nil {
			t.Fatalf("formatted output does not parse: %v\ninput:\n%q\noutput:\n%q", err, src, out)
		}
		if out2 := Format(file2); !bytes.Equal(out, out2) {
			t.Fatalf("Format is not idempotent\ninput:\n%q\nfirst:\n%q\nsecond:\n%q", src, out, out2)
		}
		if diff := cmp.Diff(shape(file), shape(file2)); diff != "" {
			t.Fatalf("Format changed the document (-input +output):\n%s\ninput:\n%q\noutput:\n%q", diff, src, out)
		}
	})
}

// shape describes a file without positions or layout: its statements,
// selectors and actions, and its comments, each kind in order.
func shape(f *File) []string {
	var s []string
	for _, b := range f.binds {
		s = append(s, "bind "+b.GroupVersion.Name+" "+b.Package.Name)
	}
	for _, a := range f.aliases {
		s = append(s, "alias "+a.Name.Name+" "+a.GVK.Name)
	}
	for _, d := range f.decls {
		s = append(s, "decl "+d.Name.Name+" for "+d.Target.Name)
		for _, b := range d.Blocks {
			s = append(s, fmt.Sprintf("block %d", b.Kind))
			for _, st := range b.States {
				s = append(s, fmt.Sprintf("state %s %v %s", st.Name.Name, st.List, st.Kind.Name))
				for _, sel := range st.Selectors {
					v := "<nil>"
					if sel.Value != nil {
						v = sel.Value.Raw
						for _, p := range sel.Value.Parts {
							v += fmt.Sprintf(" %q%q", p.Lit, p.Ref)
						}
					}
					s = append(s, fmt.Sprintf("selector %v %s %s", sel.Kind, sel.Key.Name, v))
				}
			}
			for _, a := range b.Actions {
				line := "action " + a.Name.Name
				for _, st := range a.States {
					line += " " + st.Name
				}
				s = append(s, line)
			}
		}
	}
	for _, c := range f.comments {
		s = append(s, c.Text)
	}
	return s
}

// checkSorted fails t if err is an ErrorList out of position order.
func checkSorted(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("error is a %T, want ErrorList", err)
	}
	if len(list) == 0 {
		t.Fatal("non-nil error with an empty ErrorList")
	}
	if !sort.SliceIsSorted(list, func(i, j int) bool {
		a, b := list[i].Pos, list[j].Pos
		return a.Line < b.Line || a.Line == b.Line && a.Column < b.Column
	}) {
		t.Fatalf("errors not sorted by position:\n%v", list)
	}
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
// it (an ErrorList or a single *Error) names a real place in src, as errpos.Problem
// checks. A nil err has no problem.
func positionProblem(err error, filename string, src []byte) string {
	if err == nil {
		return ""
	}
	var list ErrorList
	var one *Error
	switch {
	case errors.As(err, &list):
	case errors.As(err, &one):
		list = ErrorList{one}
	default:
		return fmt.Sprintf("error is a %T, want an ErrorList or an *Error: %v", err, err)
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
	at := func(line, col, off int) Pos { return Pos{Filename: "f.bosun", Line: line, Column: col, Offset: off} }
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"first byte", ErrorList{{Pos: at(1, 1, 0), Msg: "m"}}, ""},
		{"end of line", ErrorList{{Pos: at(1, 4, 3), Msg: "m"}, {Pos: at(2, 3, 6), Msg: "m"}}, ""},
		{"empty last line", &Error{Pos: at(3, 1, 7), Msg: "m"}, ""},
		{"other error", errors.New("f.bosun:1:1: m"), "error is a *errors.errorString, want an ErrorList or an *Error: f.bosun:1:1: m"},
		{"empty list", ErrorList{}, "non-nil error with an empty ErrorList"},
		{"no position", ErrorList{{Msg: "m"}}, `error "m" is not f.bosun:LINE:COL: message`},
		{"wrong offset", ErrorList{{Pos: at(2, 1, 3), Msg: "m"}}, `error "f.bosun:2:1: m": offset 3, want 4 for 2:1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, positionProblem(tt.err, "f.bosun", src)); diff != "" {
				t.Errorf("positionProblem (-want +got):\n%s", diff)
			}
		})
	}
}
