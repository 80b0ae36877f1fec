package main

import (
	"regexp"
	"strings"
)

// citation is one test a Markdown file cites.
type citation struct {
	// Line is the 1-based line where the code span starts.
	Line int
	// Span is the code span as written, without its backticks.
	Span string
	// Pkg is what comes before the dot, empty when nothing does.
	Pkg string
	// Name is the function: TestX, FuzzX, BenchmarkX or ExampleX.
	Name string
	// Path is the directory or file the parentheses after the span name,
	// "." for the root package, empty when they name none.
	Path string
}

var (
	// citeSpan is a code span that cites a test: an optional package and
	// a dot, the function's name, an optional subtest.
	citeSpan = regexp.MustCompile(`^(?:([a-z0-9_-]+(?:/[a-z0-9_-]+)*)\.)?((?:Test|Fuzz|Benchmark|Example)(?:[A-Z0-9_][A-Za-z0-9_]*)?)(?:/\S*)?$`)
	// parens is the parenthesised text right after a code span.
	parens = regexp.MustCompile(`^\s*\(([^()]*)\)`)
	// pathLike is a relative path of a directory or file.
	pathLike = regexp.MustCompile(`^[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*$`)
)

// citations returns the tests that the Markdown text cites, in order.
func citations(text string) []citation {
	var cites []citation
	for _, b := range blocks(text) {
		for _, s := range codeSpans(b.text) {
			m := citeSpan.FindStringSubmatch(s.content)
			if m == nil {
				continue
			}
			c := citation{
				Line: b.line + strings.Count(b.text[:s.start], "\n"),
				Span: s.content,
				Pkg:  m[1],
				Name: m[2],
			}
			if p := parens.FindStringSubmatch(b.text[s.end:]); p != nil {
				c.Path = parenPath(p[1])
			}
			cites = append(cites, c)
		}
	}
	return cites
}

// parenPath returns the directory or file that the text in parentheses
// after a citation names: "." for the root package, a path, or empty when
// the text says something else. Only what comes before the first comma or
// semicolon counts.
func parenPath(text string) string {
	text = strings.ReplaceAll(text, "`", "")
	if i := strings.IndexAny(text, ",;"); i >= 0 {
		text = text[:i]
	}
	text = strings.TrimSpace(text)
	switch {
	case text == "root package" || text == "the root package":
		return "."
	case pathLike.MatchString(text) && (strings.Contains(text, "/") || strings.HasSuffix(text, ".go")):
		return strings.TrimPrefix(text, "./")
	}
	return ""
}

// block is a run of lines that code spans cannot leave: a paragraph or
// list item, a table row, a heading.
type block struct {
	line int // 1-based line of its first line
	text string
}

// blocks splits Markdown text into blocks, leaving out fenced code blocks.
func blocks(text string) []block {
	var out []block
	var cur []string
	start := 0
	flush := func() {
		if len(cur) > 0 {
			out = append(out, block{line: start, text: strings.Join(cur, "\n")})
		}
		cur = nil
	}
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if f := fenceOpening(trimmed); f != "" {
			flush()
			fence = f
			continue
		}
		switch {
		case trimmed == "":
			flush()
		case strings.HasPrefix(trimmed, "|") || strings.HasPrefix(trimmed, "#"):
			flush()
			out = append(out, block{line: i + 1, text: line})
		default:
			if len(cur) == 0 {
				start = i + 1
			}
			cur = append(cur, line)
		}
	}
	flush()
	return out
}

// fenceOpening returns the run of backticks or tildes that opens a fenced
// code block on the line, empty when the line opens none.
func fenceOpening(trimmed string) string {
	for _, c := range []string{"`", "~"} {
		n := len(trimmed) - len(strings.TrimLeft(trimmed, c))
		if n >= 3 && (c == "~" || !strings.Contains(trimmed[n:], "`")) {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// span is one code span of a block.
type span struct {
	start, end int // offsets of its opening and just after its closing backticks
	content    string
}

// codeSpans returns the code spans of a block: a run of backticks opens
// one, the next run of the same length closes it; a run that nothing
// closes is plain text. Line ends inside a span are spaces.
func codeSpans(text string) []span {
	var out []span
	for i := 0; i < len(text); {
		if text[i] != '`' {
			i++
			continue
		}
		n := backticks(text, i)
		closing := -1
		for j := i + n; j < len(text); {
			if text[j] != '`' {
				j++
				continue
			}
			m := backticks(text, j)
			if m == n {
				closing = j
				break
			}
			j += m
		}
		if closing < 0 {
			i += n
			continue
		}
		content := strings.ReplaceAll(text[i+n:closing], "\n", " ")
		out = append(out, span{start: i, end: closing + n, content: strings.TrimSpace(content)})
		i = closing + n
	}
	return out
}

// backticks returns the length of the run of backticks at text[i].
func backticks(text string, i int) int {
	n := 0
	for i+n < len(text) && text[i+n] == '`' {
		n++
	}
	return n
}
