package dsl

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// errorStrings returns the "LINE:COL: msg" lines of an ErrorList.
func errorStrings(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("error %v is a %T, want ErrorList", err, err)
	}
	return strings.Split(list.Error(), "\n")
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{{
		name: "unexpected statement",
		src:  "bind v1 k8s.io/api/core/v1\nstate {\n}\n",
		want: []string{
			"2:1: unexpected state; want bind, alias or decl",
		},
	}, {
		name: "stray closing brace",
		src:  "}\n",
		want: []string{"1:1: unexpected }; want bind, alias or decl"},
	}, {
		name: "bind without group/version or package",
		src:  "bind\nbind v1\nbind v1 k8s.io/api/core/v1\nbind ( x\n",
		want: []string{
			"1:5: missing group/version after bind",
			"2:8: missing Go package after bind v1",
			"4:6: unexpected ( after bind; want group/version",
		},
	}, {
		name: "alias scope",
		src:  "alias T example.com/v1/T cluster\nalias U example.com/v1/U global\nalias V example.com/v1/V cluster x\n",
		want: []string{
			"2:26: unexpected global after alias U example.com/v1/U; want cluster or the end of the line",
			"3:34: unexpected x; want bind, alias or decl",
		},
	}, {
		name: "set-based label selectors",
		src: "decl M for Pod {\n" +
			"\tstate {\n" +
			"\t\tl []Job {\n" +
			"\t\t\tlabels/a in ()\n" +
			"\t\t\tlabels/b in (x,\n" +
			"\t\t\tlabels/c notin x\n" +
			"\t\t\tlabels/d in (x y)\n" +
			"\t\t\t!labels/e=x\n" +
			"\t\t\t!owned\n" +
			"\t\t\tlabels/f!x\n" +
			"\t\t\tlabels/g in (, x)\n" +
			"\t\t\tlabels/h inside\n" +
			"\t\t}\n" +
			"\t}\n" +
			"}\n",
		want: []string{
			"4:16: empty value list after labels/a in; want at least one value",
			"5:19: missing ) to close the values of labels/b in",
			"6:19: missing ( after labels/c notin; want labels/c notin (VALUE, ...)",
			"7:19: unexpected y in the values of labels/d in; want , or )",
			"8:13: unexpected =x after selector; write one selector per line",
			"9:4: only a label selector can be negated; want !labels/KEY",
			"10:12: missing = after labels/f; want labels/f=VALUE, labels/f!=VALUE, labels/f in (VALUES), labels/f notin (VALUES) or labels/f alone",
			"11:17: missing value before , in the values of labels/g in",
			"12:13: missing = after labels/h; want labels/h=VALUE, labels/h!=VALUE, labels/h in (VALUES), labels/h notin (VALUES) or labels/h alone",
		},
	}, {
		name: "action writes",
		src: "decl M for Pod {\n" +
			"\taction {\n" +
			"\t\tA() writes\n" +
			"\t\tB() writes Job\n" +
			"\t\tC() writes Job(create\n" +
			"\t\tD() writes Job(create,,)\n" +
			"\t\tE() writes Job(create),\n" +
			"\t\tF() reads Job(create)\n" +
			"\t}\n" +
			"}\n",
		want: []string{
			"3:13: missing Kind(verb, ...) after writes",
			"4:17: missing (verb, ...) after Job",
			"5:24: missing , or ) after Job(create",
			"6:25: unexpected , after Job(; want a verb or )",
			"7:26: missing Kind(verb, ...) after ,",
			"8:13: unexpected Job after action reads; want (",
		},
	}, {
		name: "alias without name or kind",
		src:  "alias\nalias Job\nalias Job batch/v1/Job\n",
		want: []string{
			"1:6: missing name after alias",
			"2:10: missing group/version/kind after alias Job",
		},
	}, {
		name: "decl headers",
		src: "decl\n" +
			"decl {\n}\n" +
			"decl M for\n" +
			"decl M for Pod\n" +
			"decl M Pod {\n}\n" +
			"decl N for Pod x {\n\tstate {\n\t}\n}\n",
		want: []string{
			"1:5: missing name after decl",
			"2:6: unexpected { after decl; want name",
			"4:11: missing kind after for",
			"5:15: missing { after decl M for Pod",
			"6:8: unexpected Pod after decl M; want for KIND or {",
			"8:16: unexpected x after decl N for Pod; want {",
		},
	}, {
		name: "missing closing braces",
		src:  "decl M for Pod {\n\tstate {\n\t\ts Service {\n\t\t\tname=x\n",
		want: []string{"5:1: missing } to close state s"},
	}, {
		name: "missing closing brace of blocks and decls",
		src:  "decl M for Pod {\n\taction {\n\t\tA()\n",
		want: []string{"4:1: missing } to close action block of decl M"},
	}, {
		name: "missing closing brace of a decl",
		src:  "decl M for Pod {\n\taction {\n\t}\n",
		want: []string{"4:1: missing } to close decl M"},
	}, {
		name: "unexpected in decl and blocks",
		src: "decl M for Pod {\n" +
			"\tstates {}\n" +
			"\tstate x {\n\t}\n" +
			"\tstate {\n\t\t( s\n\t\ts Service\n\t\tt []\n\t\tu Service x {\n\t\t\tname=a\n\t\t}\n\t}\n" +
			"\taction {\n\t\t, A()\n\t}\n" +
			"}\n",
		want: []string{
			"2:2: unexpected states in decl M; want state, action or }",
			"3:8: unexpected x after state; want {",
			"6:3: unexpected ( in state block; want a state (name Kind { ... }) or }",
			"7:12: missing { after s Service",
			"8:7: missing kind after state t",
			"9:13: unexpected x after u Service; want {",
			"14:3: unexpected , in action block; want an action (Name(states)) or }",
		},
	}, {
		name: "actions",
		src: "decl M for Pod {\n\taction {\n" +
			"\t\tA\n" +
			"\t\tB(x\n" +
			"\t\tC(x y)\n" +
			"\t\tD(,)\n" +
			"\t\tE(x,\n" +
			"\t\tF x\n" +
			"\t}\n}\n",
		want: []string{
			"3:4: missing ( after action A",
			"4:6: missing ) in action B",
			"5:7: unexpected y in action C; want , or )",
			"6:5: unexpected , in action D; want a state name or )",
			"7:7: missing ) in action E",
			"8:5: unexpected x after action F; want (",
		},
	}, {
		name: "malformed selectors",
		src: "decl M for Pod {\n\tstate {\n\t\tl []Job {\n" +
			"\t\t\tbogus=1\n" +
			"\t\t\tlabels=x\n" +
			"\t\t\tfields/=x\n" +
			"\t\t\tname x\n" +
			"\t\t\tlabels/app=\n" +
			"\t\t\towned=yes\n" +
			"\t\t\tlabels/a=b labels/c=d\n" +
			"\t\t\t=x\n" +
			"\t\t\tname=a // comment is fine\n" +
			"\t\t}\n\t}\n}\n",
		want: []string{
			"4:4: unknown selector bogus; want name, namespace, labels/KEY, fields/PATH or owned",
			"5:4: missing KEY after labels; want labels/KEY=VALUE",
			"6:11: missing PATH after fields/; want fields/PATH=VALUE",
			"7:9: missing = after name; want name=VALUE",
			"8:15: missing value after labels/app=",
			"9:9: selector owned takes no value",
			"10:15: unexpected labels/c=d after selector; write one selector per line",
			"11:4: missing selector before =; want name, namespace, labels/KEY, fields/PATH or owned",
		},
	}, {
		name: "unterminated strings and references",
		src: "decl M for Pod {\n\tstate {\n\t\tl []Job {\n" +
			"\t\t\tlabels/a=\"abc\n" +
			"\t\t\tlabels/b=${target.Name\n" +
			"\t\t\tlabels/c=\"x${target.Name\"\n" +
			"\t\t\tlabels/d=\"\\q\"\n" +
			"\t\t}\n\t}\n}\n" +
			"bind \"v1\n",
		want: []string{
			"4:13: unterminated string",
			"5:13: unterminated ${",
			"6:15: unterminated ${",
			"7:14: invalid escape in string",
			"11:6: unterminated string",
		},
	}, {
		name: "bad references",
		src: "decl M for Pod {\n\tstate {\n\t\tl []Job {\n" +
			"\t\t\tlabels/a=${foo.Name}\n" +
			"\t\t\tlabels/b=${target}\n" +
			"\t\t\tlabels/c=x-${target.name}\n" +
			"\t\t\tlabels/d=\"${target.A..B}\"\n" +
			"\t\t\tlabels/e=${}\n" +
			"\t\t\tlabels/f=${ target.Name }\n" +
			"\t\t}\n\t}\n}\n",
		want: []string{
			"4:13: bad reference ${foo.Name}; want ${target.Field.Path}",
			"5:13: bad reference ${target}; want ${target.Field.Path}",
			"6:15: bad reference ${target.name}; want ${target.Field.Path}",
			"7:14: bad reference ${target.A..B}; want ${target.Field.Path}",
			"8:13: bad reference ${}; want ${target.Field.Path}",
			"9:13: bad reference ${ target.Name }; want ${target.Field.Path}",
		},
	}, {
		name: "lexical errors",
		src:  "bind [x\n]\nalias \x01\nbind v1 \xff\n// ok é\t\r\n// \xfa \x00\n\t// \x7f\n",
		want: []string{
			"1:6: invalid [; want []",
			"2:1: unexpected ]",
			"3:7: invalid character U+0001",
			"4:9: invalid UTF-8 encoding",
			"6:4: invalid UTF-8 encoding in comment",
			"7:5: invalid character U+007F in comment",
		},
	}, {
		name: "strings outside selectors",
		src:  "bind \"v1\" x\n",
		want: []string{"1:6: unexpected string after bind; want group/version"},
	}, {
		name: "recovery skips quotes and references in a broken selector",
		src: "decl M for Pod {\n\tstate {\n\t\tl []Job {\n" +
			"\t\t\tbogus=\"}\" x=${a}\n" +
			"\t\t\towned\n" +
			"\t\t\tname=a b=\"}\"\n" +
			"\t\t}\n\t}\n}\n",
		want: []string{
			"4:4: unknown selector bogus; want name, namespace, labels/KEY, fields/PATH or owned",
			"6:11: unexpected b=\"}\" after selector; write one selector per line",
		},
	}, {
		name: "every error in a file, sorted",
		src: "decl M for Pod {\n" +
			"\tstate {\n" +
			"\t\tl []Job {\n" +
			"\t\t\tlabels/a=\"open\n" +
			"\t\t\tnope\n" +
			"\t\t}\n" +
			"\t}\n" +
			"\taction {\n" +
			"\t\tA(l\n" +
			"\t}\n" +
			"}\n" +
			"bind v1\n" +
			"oops\n",
		want: []string{
			"4:13: unterminated string",
			"5:4: unknown selector nope; want name, namespace, labels/KEY, fields/PATH or owned",
			"9:6: missing ) in action A",
			"12:8: missing Go package after bind v1",
			"13:1: unexpected oops; want bind, alias or decl",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("", []byte(tt.src))
			if f == nil {
				t.Fatal("Parse returned a nil file")
			}
			if diff := cmp.Diff(tt.want, errorStrings(t, err)); diff != "" {
				t.Errorf("Parse errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseFileName(t *testing.T) {
	_, err := Parse("dir/x.bosun", []byte("\n  oops\n"))
	if diff := cmp.Diff([]string{"dir/x.bosun:2:3: unexpected oops; want bind, alias or decl"}, errorStrings(t, err)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatal("errors.As(err, *Error) = false")
	}
	want := Pos{Filename: "dir/x.bosun", Offset: 3, Line: 2, Column: 3}
	if diff := cmp.Diff(want, e.Pos); diff != "" {
		t.Errorf("position (-want +got):\n%s", diff)
	}
}

func TestParseAST(t *testing.T) {
	src := "bind v1 k8s.io/api/core/v1\n" +
		"alias P v1/Pod\n" +
		"decl M for P {\n" +
		"\tstate {\n" +
		"\t\ts Service { name = \"a\\tb-${target.Spec.Name}\" }\n" +
		"\t\tl []Job {\n" +
		"\t\t\tlabels/app=x${target.Name}y\n" +
		"\t\t\tfields/.spec.n=\"\"\n" +
		"\t\t\towned\n" +
		"\t\t}\n" +
		"\t}\n" +
		"\taction { A(s, l) B() }\n" +
		"}\n"
	f, err := Parse("", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	pos := func(off, line, col int) Pos { return Pos{Offset: off, Line: line, Column: col} }
	at := func(s string, line, col int) Pos {
		t.Helper()
		i := strings.Index(src, s)
		if i < 0 {
			t.Fatalf("%q not in source", s)
		}
		return pos(i, line, col)
	}
	d := f.decls[0]
	s, l := d.States[0], d.States[1]
	want := &File{
		binds:   []*bindNode{{Pos: pos(0, 1, 1), GroupVersion: ident{pos(5, 1, 6), "v1"}, Package: ident{pos(8, 1, 9), "k8s.io/api/core/v1"}}},
		aliases: []*aliasNode{{Pos: at("alias", 2, 1), Name: ident{at("P v1", 2, 7), "P"}, GVK: ident{at("v1/Pod", 2, 9), "v1/Pod"}}},
		decls: []*declNode{{
			Pos:    at("decl", 3, 1),
			Name:   ident{at("M for", 3, 6), "M"},
			Target: ident{at("P {", 3, 12), "P"},
			Lbrace: at("{\n\tstate", 3, 14),
			States: []*stateNode{s, l},
			Blocks: d.Blocks,
			Actions: []*actionNode{
				{Name: ident{at("A(", 12, 11), "A"}, States: []ident{{at("s, l", 12, 13), "s"}, {at("l) B", 12, 16), "l"}}, End: at(") B", 12, 17)},
				{Name: ident{at("B(", 12, 19), "B"}, End: at(") }", 12, 21)},
			},
			End: pos(len(src)-2, 13, 1),
		}},
	}
	wantS := &stateNode{
		Name:   ident{at("s Service", 5, 3), "s"},
		Kind:   ident{at("Service", 5, 5), "Service"},
		Lbrace: at("{ name", 5, 13),
		Selectors: []*selectorNode{{
			Pos:  at("name =", 5, 15),
			Kind: selName,
			Value: &Value{Pos: at(`"a\tb`, 5, 22), Raw: `"a\tb-${target.Spec.Name}"`, Parts: []Part{
				{Pos: at(`a\tb`, 5, 23), Lit: "a\tb-"},
				{Pos: at("${target.Spec", 5, 28), Ref: []string{"Spec", "Name"}},
			}},
			End: at(" }\n\t\tl", 5, 48),
		}},
		End: at("}\n\t\tl", 5, 49),
	}
	wantL := &stateNode{
		Name:   ident{at("l []Job", 6, 3), "l"},
		List:   true,
		Kind:   ident{at("Job", 6, 7), "Job"},
		Lbrace: at("{\n\t\t\tlabels", 6, 11),
		Selectors: []*selectorNode{{
			Pos:  at("labels/app", 7, 4),
			Kind: selLabels,
			Key:  ident{at("app=", 7, 11), "app"},
			Value: &Value{Pos: at("x${", 7, 15), Raw: "x${target.Name}y", Parts: []Part{
				{Pos: at("x${", 7, 15), Lit: "x"},
				{Pos: at("${target.Name}y", 7, 16), Ref: []string{"Name"}},
				{Pos: at("y\n", 7, 30), Lit: "y"},
			}},
			End: at("\n\t\t\tfields", 7, 31),
		}, {
			Pos:   at("fields/", 8, 4),
			Kind:  selFields,
			Key:   ident{at(".spec.n", 8, 11), ".spec.n"},
			Value: &Value{Pos: at(`""`, 8, 19), Raw: `""`, Parts: []Part{{Pos: at(`""`, 8, 19), Lit: ""}}},
			End:   at("\n\t\t\towned", 8, 21),
		}, {
			Pos:  at("owned", 9, 4),
			Kind: selOwned,
			End:  at("\n\t\t}", 9, 9),
		}},
		End: at("}\n\t}", 10, 3),
	}
	if diff := cmp.Diff(want.binds, f.binds); diff != "" {
		t.Errorf("binds (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.aliases, f.aliases); diff != "" {
		t.Errorf("aliases (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantS, s); diff != "" {
		t.Errorf("state s (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantL, l); diff != "" {
		t.Errorf("state l (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.decls, f.decls); diff != "" {
		t.Errorf("decls (-want +got):\n%s", diff)
	}
	if len(d.Blocks) != 2 || d.Blocks[0].Kind != stateBlock || d.Blocks[1].Kind != actionBlock ||
		len(d.Blocks[0].States) != 2 || len(d.Blocks[1].Actions) != 2 {
		t.Errorf("blocks = %+v, want a state block with 2 states and an action block with 2 actions", d.Blocks)
	}
}

func TestParseCronJob(t *testing.T) {
	src, err := os.ReadFile("testdata/cronjob.bosun")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse("testdata/cronjob.bosun", src)
	if err != nil {
		t.Fatal(err)
	}
	var comments []string
	for _, c := range f.comments {
		comments = append(comments, c.Pos.String()+" "+c.Text)
	}
	want := []string{
		"testdata/cronjob.bosun:8:1 // CronJobControllerManager declares all the actions needed by the CronJobController.",
		"testdata/cronjob.bosun:19:9 // List all active jobs, and update the status.",
		"testdata/cronjob.bosun:22:9 // Clean up old jobs according to the history limit.",
		"testdata/cronjob.bosun:25:9 // Run the next job if it's on time, or otherwise we should wait",
		"testdata/cronjob.bosun:26:9 // until the next scheduled time.",
		"testdata/cronjob.bosun:29:9 // Update status of CronJob.",
	}
	if diff := cmp.Diff(want, comments); diff != "" {
		t.Errorf("comments (-want +got):\n%s", diff)
	}
}

func TestParseValues(t *testing.T) {
	// at is the position of byte k of a value on line 2 after "s Pod { name=".
	const prefix = "decl M for Pod { state {\n"
	at := func(k int) Pos { return Pos{Offset: len(prefix) + 13 + k, Line: 2, Column: 14 + k} }
	tests := []struct {
		raw  string
		want []Part
	}{
		{`"\x41\xff\u00e9"`, []Part{{Pos: at(1), Lit: "A\xff\u00e9"}}},
		{`a$b`, []Part{{Pos: at(0), Lit: "a$b"}}},
		{`${target.A.B}${target.C}`, []Part{{Pos: at(0), Ref: []string{"A", "B"}}, {Pos: at(13), Ref: []string{"C"}}}},
		{`"${target.A} "`, []Part{{Pos: at(1), Ref: []string{"A"}}, {Pos: at(12), Lit: " "}}},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			f, err := Parse("", []byte(prefix+"s Pod { name="+tt.raw+" }\n} }"))
			if err != nil {
				t.Fatal(err)
			}
			v := f.decls[0].States[0].Selectors[0].Value
			if diff := cmp.Diff(tt.want, v.Parts); diff != "" {
				t.Errorf("parts of %s (-want +got):\n%s", tt.raw, diff)
			}
			if v.Raw != tt.raw || v.Pos != at(0) {
				t.Errorf("Raw, Pos = %q, %v; want %q, %v", v.Raw, v.Pos, tt.raw, at(0))
			}
		})
	}
}

func TestParseByteOrderMark(t *testing.T) {
	f, err := Parse("", []byte("\xEF\xBB\xBFbind v1 k8s.io/api/core/v1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]*bindNode{{
		Pos:          Pos{Offset: 3, Line: 1, Column: 4},
		GroupVersion: ident{Pos: Pos{Offset: 8, Line: 1, Column: 9}, Name: "v1"},
		Package:      ident{Pos: Pos{Offset: 11, Line: 1, Column: 12}, Name: "k8s.io/api/core/v1"},
	}}, f.binds); diff != "" {
		t.Errorf("binds (-want +got):\n%s", diff)
	}
	if g, v := splitGroupVersion(f.binds[0].GroupVersion.Name); g != "" || v != "v1" {
		t.Errorf("splitGroupVersion = %q, %q; want \"\", \"v1\"", g, v)
	}
}
