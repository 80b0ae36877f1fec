package changelog

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAppend(t *testing.T) {
	op := func(names ...string) []Entry {
		var out []Entry
		for _, n := range names {
			out = append(out, Entry{Operation: n})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		log  []Entry
		add  string
		n    int
		want []Entry
	}{
		{name: "empty log", add: "create", n: 3, want: op("create")},
		{name: "room left", log: op("create"), add: "update", n: 3, want: op("create", "update")},
		{name: "full log drops the oldest", log: op("a", "b", "c"), add: "d", n: 3, want: op("b", "c", "d")},
		{name: "longer log than the bound", log: op("a", "b", "c", "d"), add: "e", n: 2, want: op("d", "e")},
		{name: "bound below one keeps the newest", log: op("a"), add: "b", n: 0, want: op("b")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]Entry(nil), tc.log...)
			got := Append(tc.log, Entry{Operation: tc.add}, tc.n)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Append (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.log); diff != "" {
				t.Errorf("Append changed its argument (-before +after):\n%s", diff)
			}
		})
	}
}

func TestAppendCutsMessages(t *testing.T) {
	for _, tc := range []struct {
		name, msg string
		want      int // length of the kept message
	}{
		{name: "short", msg: "boom", want: 4},
		{name: "at the bound", msg: strings.Repeat("x", MaxMessageLength), want: MaxMessageLength},
		{name: "ascii over the bound", msg: strings.Repeat("x", MaxMessageLength+1), want: MaxMessageLength},
		{name: "multi-byte over the bound", msg: strings.Repeat("é", MaxMessageLength), want: MaxMessageLength - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Append(nil, Entry{Message: tc.msg}, 1)[0].Message
			if len(got) != tc.want {
				t.Errorf("message of %d bytes kept as %d bytes, want %d", len(tc.msg), len(got), tc.want)
			}
			if len(tc.msg) > MaxMessageLength && !strings.HasSuffix(got, "...") {
				t.Errorf("cut message %q does not end with ...", got[len(got)-8:])
			}
			if !strings.HasPrefix(tc.msg, strings.TrimSuffix(got, "...")) {
				t.Error("cut message is not a prefix of the message")
			}
		})
	}
}
