package dsl

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPrintErrors(t *testing.T) {
	src := "decl M for Pod {\n" +
		"\tstate {\n" +
		"\t\tl []Job {\n" +
		"\t\t\tlabels/a=\"x\n" +
		"\t\t}\n" +
		"\t}\n" +
		"\taction {\n" +
		"\t\tA(l\n" +
		"\t}\n" +
		"}\n" +
		"é oops\n"
	_, err := Parse("doc.bosun", []byte(src))
	var buf bytes.Buffer
	PrintErrors(&buf, err, []byte(src))
	want := "doc.bosun:4:13: unterminated string\n" +
		"\t\t\tlabels/a=\"x\n" +
		"\t\t\t         ^\n" +
		"doc.bosun:8:6: missing ) in action A\n" +
		"\t\tA(l\n" +
		"\t\t   ^\n" +
		"doc.bosun:11:1: unexpected é; want bind, alias or decl\n" +
		"é oops\n" +
		"^\n"
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("PrintErrors (-want +got):\n%s", diff)
	}
}

func TestPrintErrorsOther(t *testing.T) {
	src := []byte("a\tb\r\nsecond é x\n")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"plain error", errors.New("boom"), "boom\n"},
		{"single error", &Error{Pos: Pos{Filename: "f", Line: 1, Column: 3}, Msg: "m"}, "f:1:3: m\na\tb\n \t^\n"},
		{"wrapped list", fmt.Errorf("load: %w", ErrorList{{Pos: Pos{Line: 2, Column: 10}, Msg: "m"}}), "2:10: m\nsecond é x\n        ^\n"},
		{"past the end of the line", ErrorList{{Pos: Pos{Line: 1, Column: 6}, Msg: "m"}}, "1:6: m\na\tb\n \t   ^\n"},
		{"line past the end", ErrorList{{Pos: Pos{Line: 9, Column: 1}, Msg: "m"}}, "9:1: m\n"},
		{"no position", ErrorList{{Msg: "m"}}, "m\n"},
		{"file without position", ErrorList{{Pos: Pos{Filename: "f"}, Msg: "m"}}, "f: m\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			PrintErrors(&buf, tt.err, src)
			if diff := cmp.Diff(tt.want, buf.String()); diff != "" {
				t.Errorf("PrintErrors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrorList(t *testing.T) {
	var empty ErrorList
	if empty.Err() != nil {
		t.Error("empty ErrorList.Err() != nil")
	}
	list := ErrorList{
		{Pos: Pos{Line: 2, Column: 1}, Msg: "b"},
		{Pos: Pos{Line: 1, Column: 5}, Msg: "a"},
		{Pos: Pos{Line: 2, Column: 1}, Msg: "b"},
		{Pos: Pos{Line: 1, Column: 5}, Msg: "0"},
	}
	list.Sort()
	if diff := cmp.Diff("1:5: 0\n1:5: a\n2:1: b", list.Err().Error()); diff != "" {
		t.Errorf("sorted list (-want +got):\n%s", diff)
	}
	var e *Error
	if !errors.As(error(list), &e) || e.Msg != "0" {
		t.Errorf("errors.As found %v, want the first error", e)
	}
}
