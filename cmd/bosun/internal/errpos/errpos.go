package errpos

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Located is one error with the byte offset its position names.
type Located struct {
	// Text is what the error prints.
	Text string
	// Offset is the byte offset of its position in the source.
	Offset int
}

// Problem returns what is wrong with errs, the errors text joins (one per
// line), or "" when there is nothing wrong: each error's text must read
// "FILE:LINE:COL: message", FILE being filename, LINE a line of src and
// COL a byte column of that line, 1-based and at most one past its last
// byte (where a missing token at the end of a line is reported), and its
// Offset must be the byte that LINE:COL names. Lines end at '\n'; a
// carriage return before it is a byte of the line. No errors at all is a
// problem: a caller asks only about an error it was given.
func Problem(text string, errs []Located, filename string, src []byte) string {
	if len(errs) == 0 {
		return "non-nil error with an empty ErrorList"
	}
	form := regexp.MustCompile(`^` + regexp.QuoteMeta(filename) + `:([0-9]+):([0-9]+): (.+)$`)
	// starts[i] is the offset of line i+1.
	starts := []int{0}
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	for _, e := range errs {
		m := form.FindStringSubmatch(e.Text)
		if m == nil {
			return fmt.Sprintf("error %q is not %s:LINE:COL: message", e.Text, filename)
		}
		line, _ := strconv.Atoi(m[1])
		col, _ := strconv.Atoi(m[2])
		if line < 1 || line > len(starts) {
			return fmt.Sprintf("error %q: line %d is not one of the input's %d lines", e.Text, line, len(starts))
		}
		end := len(src)
		if line < len(starts) {
			end = starts[line] - 1
		}
		if n := end - starts[line-1]; col < 1 || col > n+1 {
			return fmt.Sprintf("error %q: column %d is not in line %d of %d bytes", e.Text, col, line, n)
		}
		if want := starts[line-1] + col - 1; e.Offset != want {
			return fmt.Sprintf("error %q: offset %d, want %d for %d:%d", e.Text, e.Offset, want, line, col)
		}
	}
	if strings.Count(text, "\n") != len(errs)-1 {
		return fmt.Sprintf("error text has %d lines for %d errors: %q", strings.Count(text, "\n")+1, len(errs), text)
	}
	return ""
}
