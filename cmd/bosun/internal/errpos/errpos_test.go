package errpos

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestProblem(t *testing.T) {
	src := []byte("ab\r\ncd\n")
	at := func(text string, off int) Located { return Located{Text: text, Offset: off} }
	tests := []struct {
		name string
		errs []Located
		want string
	}{
		{"first byte", []Located{at("f.bosun:1:1: m", 0)}, ""},
		{"carriage return", []Located{at("f.bosun:1:3: m", 2)}, ""},
		{"end of line", []Located{at("f.bosun:1:4: m", 3), at("f.bosun:2:3: m", 6)}, ""},
		{"empty last line", []Located{at("f.bosun:3:1: m", 7)}, ""},
		{"none", nil, "non-nil error with an empty ErrorList"},
		{"no position", []Located{at("m", 0)}, `error "m" is not f.bosun:LINE:COL: message`},
		{"other file", []Located{at("g.bosun:1:1: m", 0)}, `error "g.bosun:1:1: m" is not f.bosun:LINE:COL: message`},
		{"empty message", []Located{at("f.bosun:1:1: ", 0)}, `error "f.bosun:1:1: " is not f.bosun:LINE:COL: message`},
		{"message of two lines", []Located{at("f.bosun:1:1: m\nn", 0)}, `error "f.bosun:1:1: m\nn" is not f.bosun:LINE:COL: message`},
		{"line past the end", []Located{at("f.bosun:4:1: m", 8)}, `error "f.bosun:4:1: m": line 4 is not one of the input's 3 lines`},
		{"column past the line", []Located{at("f.bosun:2:4: m", 7)}, `error "f.bosun:2:4: m": column 4 is not in line 2 of 2 bytes`},
		{"column zero", []Located{at("f.bosun:1:0: m", 0)}, `error "f.bosun:1:0: m": column 0 is not in line 1 of 3 bytes`},
		{"wrong offset", []Located{at("f.bosun:2:1: m", 3)}, `error "f.bosun:2:1: m": offset 3, want 4 for 2:1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			texts := make([]string, 0, len(tt.errs))
			for _, e := range tt.errs {
				texts = append(texts, e.Text)
			}
			if diff := cmp.Diff(tt.want, Problem(strings.Join(texts, "\n"), tt.errs, "f.bosun", src)); diff != "" {
				t.Errorf("Problem (-want +got):\n%s", diff)
			}
		})
	}
	if got := Problem("f.bosun:1:1: m", []Located{at("f.bosun:1:1: m", 0), at("f.bosun:1:2: m", 1)}, "f.bosun", src); !strings.Contains(got, "1 lines for 2 errors") {
		t.Errorf("Problem with a text of one line for two errors = %q", got)
	}
}
