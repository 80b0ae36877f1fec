package dsl

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"
)

// Error is one problem found in a document, at a position.
type Error struct {
	Pos Pos
	Msg string
}

// Error returns "FILE:LINE:COL: msg" ("LINE:COL: msg" when the position
// has no file name, just the message when there is no position).
func (e *Error) Error() string {
	if !e.Pos.IsValid() {
		if e.Pos.Filename != "" {
			return e.Pos.Filename + ": " + e.Msg
		}
		return e.Msg
	}
	return e.Pos.String() + ": " + e.Msg
}

// ErrorList is every problem found in a document. Parse and Check return
// one, sorted by position, as their error.
type ErrorList []*Error

// Error returns the errors, one a line.
func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Err returns l as an error, or nil if l is empty.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Unwrap returns the errors of the list, so that errors.As finds an *Error.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// Sort sorts the list by file, line and column, then by message, and drops
// exact duplicates.
func (l *ErrorList) Sort() {
	list := *l
	sort.SliceStable(list, func(i, j int) bool {
		a, b := list[i].Pos, list[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		return list[i].Msg < list[j].Msg
	})
	out := list[:0]
	for i, e := range list {
		if i > 0 && e.Pos == list[i-1].Pos && e.Msg == list[i-1].Msg {
			continue
		}
		out = append(out, e)
	}
	*l = out
}

// add appends an error at pos.
func (l *ErrorList) add(pos Pos, format string, args ...any) {
	*l = append(*l, &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// PrintErrors writes err to w for a human: every error of an ErrorList (or
// the single *Error) as "FILE:LINE:COL: msg", then the line of src it points
// into, then a caret under its column. Tabs before the column are kept as
// tabs so that the caret lines up with the source line as a terminal shows
// it. Any other error is written as its message.
func PrintErrors(w io.Writer, err error, src []byte) {
	if err == nil {
		return
	}
	var list ErrorList
	var one *Error
	switch {
	case errors.As(err, &list):
	case errors.As(err, &one):
		list = ErrorList{one}
	default:
		_, _ = fmt.Fprintln(w, err.Error())
		return
	}
	lines := splitLines(src)
	for _, e := range list {
		_, _ = fmt.Fprintln(w, e.Error())
		if !e.Pos.IsValid() || e.Pos.Line > len(lines) {
			continue
		}
		line := lines[e.Pos.Line-1]
		_, _ = fmt.Fprintln(w, line)
		_, _ = fmt.Fprintln(w, caret(line, e.Pos.Column))
	}
}

// splitLines returns the lines of src without their line ends. Text after
// the last line end is a line too, even when empty.
func splitLines(src []byte) []string {
	lines := strings.Split(string(src), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// caret returns the padding and caret that point at the byte column col
// (1-based) of line: a tab for each tab and a space for each other
// character before the column.
func caret(line string, col int) string {
	if col < 1 {
		col = 1
	}
	prefix := line
	if col-1 < len(line) {
		prefix = line[:col-1]
	}
	var b strings.Builder
	for len(prefix) > 0 {
		r, size := utf8.DecodeRuneInString(prefix)
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
		prefix = prefix[size:]
	}
	// A column past the end of the line (a missing token at the end)
	// still gets its caret there.
	for i := len(line) + 1; i < col; i++ {
		b.WriteByte(' ')
	}
	b.WriteByte('^')
	return b.String()
}
