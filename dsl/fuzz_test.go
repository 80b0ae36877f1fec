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
}

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
		file, err := Parse("fuzz.bosun", src)
		if file == nil {
			t.Fatal("Parse returned a nil file")
		}
		checkSorted(t, err)
		_, cerr := Check(file, CheckOptions{})
		checkSorted(t, cerr)
		_, cerr = Check(file, CheckOptions{Types: types})
		checkSorted(t, cerr)
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
	for _, b := range f.Binds {
		s = append(s, "bind "+b.GroupVersion.Name+" "+b.Package.Name)
	}
	for _, a := range f.Aliases {
		s = append(s, "alias "+a.Name.Name+" "+a.GVK.Name)
	}
	for _, d := range f.Decls {
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
	for _, c := range f.Comments {
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
