package dsl

import (
	"fmt"
	"unicode/utf8"
)

// tokenKind is the kind of a token outside selector lines.
type tokenKind int

const (
	tokEOF      tokenKind = iota
	tokWord               // a name, a group/version, a Go package path, ...
	tokLbrace             // {
	tokRbrace             // }
	tokLparen             // (
	tokRparen             // )
	tokComma              // ,
	tokBrackets           // []
	tokString             // "...": not part of the grammar outside selectors
	tokIllegal            // anything else; err says what is wrong
)

// token is one token with its position.
type token struct {
	kind tokenKind
	text string
	pos  Pos
	end  Pos // just after the token
	// nl is true for the first token of a line.
	nl bool
	// err is the lexical error of an illegal token. The parser reports it
	// when it meets the token, not while skipping after another error.
	err string
}

// scanner cuts a document into tokens. Outside state bodies it works token
// by token (scan); inside them the parser reads selector lines byte by byte
// through the same scanner, so that line ends and values are seen as
// written.
type scanner struct {
	filename  string
	src       []byte
	off       int
	line      int
	lineStart int
	// atLineStart is true until the first token after a line end.
	atLineStart bool
	comments    []*Comment
	// errs collects lexical errors the scanner reports itself: characters
	// that may not appear in a comment.
	errs ErrorList
}

func newScanner(filename string, src []byte) *scanner {
	s := &scanner{filename: filename, src: src, line: 1, atLineStart: true}
	if len(src) >= 3 && src[0] == 0xEF && src[1] == 0xBB && src[2] == 0xBF {
		s.off = 3 // a byte order mark at the start is not part of the text
	}
	return s
}

// pos returns the position of off, an offset on the current line.
func (s *scanner) pos(off int) Pos {
	return Pos{Filename: s.filename, Offset: off, Line: s.line, Column: off - s.lineStart + 1}
}

// peek returns the byte at off+i, or 0 past the end.
func (s *scanner) peek(i int) byte {
	if s.off+i < len(s.src) {
		return s.src[s.off+i]
	}
	return 0
}

func (s *scanner) eof() bool { return s.off >= len(s.src) }

// newline consumes the line end at off.
func (s *scanner) newline() {
	s.off++
	s.line++
	s.lineStart = s.off
	s.atLineStart = true
}

// skipSpace skips blanks, tabs and carriage returns, not line ends.
func (s *scanner) skipSpace() {
	for !s.eof() {
		switch s.src[s.off] {
		case ' ', '\t', '\r':
			s.off++
		default:
			return
		}
	}
}

// atComment reports whether a `//` comment starts at off.
func (s *scanner) atComment() bool { return s.peek(0) == '/' && s.peek(1) == '/' }

// comment consumes a comment up to the end of its line and records it.
// The first character of the comment that may not appear in a document is
// reported: comments reach generated Go code, which must be valid UTF-8.
func (s *scanner) comment() {
	start := s.off
	reported := false
	for !s.eof() && s.src[s.off] != '\n' {
		r, size := utf8.DecodeRune(s.src[s.off:])
		if msg := badRune(r, size); msg != "" && !reported {
			s.errs.add(s.pos(s.off), "%s in comment", msg)
			reported = true
		}
		s.off += size
	}
	text := string(s.src[start:s.off])
	for len(text) > 0 && (text[len(text)-1] == '\r' || text[len(text)-1] == ' ' || text[len(text)-1] == '\t') {
		text = text[:len(text)-1]
	}
	s.comments = append(s.comments, &Comment{Pos: s.pos(start), Text: text})
}

// badRune returns what is wrong with the rune r of size bytes, or "" if it
// may appear in a document.
func badRune(r rune, size int) string {
	switch {
	case r == utf8.RuneError && size == 1:
		return "invalid UTF-8 encoding"
	case r == '\t' || r == '\n' || r == '\r':
		return ""
	case r < 0x20 || r == 0x7f || r == 0xFEFF:
		return fmt.Sprintf("invalid character %U", r)
	}
	return ""
}

// isDelim reports whether c ends a word outside selector lines.
func isDelim(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '{', '}', '(', ')', ',', '[', ']', '"':
		return true
	}
	return false
}

// scan returns the next token outside selector lines, recording the
// comments it passes.
func (s *scanner) scan() token {
	for !s.eof() {
		c := s.src[s.off]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			s.off++
			continue
		case c == '\n':
			s.newline()
			continue
		case s.atComment():
			s.comment()
			continue
		}
		break
	}
	tok := token{pos: s.pos(s.off), nl: s.atLineStart}
	s.atLineStart = false
	if s.eof() {
		tok.kind = tokEOF
		tok.end = tok.pos
		return tok
	}
	start := s.off
	switch c := s.src[s.off]; c {
	case '{':
		tok.kind = tokLbrace
		s.off++
	case '}':
		tok.kind = tokRbrace
		s.off++
	case '(':
		tok.kind = tokLparen
		s.off++
	case ')':
		tok.kind = tokRparen
		s.off++
	case ',':
		tok.kind = tokComma
		s.off++
	case '[':
		s.off++
		if s.peek(0) == ']' {
			s.off++
			tok.kind = tokBrackets
		} else {
			tok.kind = tokIllegal
			tok.err = "invalid [; want []"
		}
	case ']':
		s.off++
		tok.kind = tokIllegal
		tok.err = "unexpected ]"
	case '"':
		tok.kind = tokString
		if !s.skipString() {
			tok.kind = tokIllegal
			tok.err = "unterminated string"
		}
	default:
		for !s.eof() && !isDelim(s.src[s.off]) && !s.atComment() {
			r, size := utf8.DecodeRune(s.src[s.off:])
			if badRune(r, size) != "" {
				break
			}
			s.off += size
		}
		tok.kind = tokWord
		if s.off == start {
			r, size := utf8.DecodeRune(s.src[s.off:])
			tok.kind = tokIllegal
			tok.err = badRune(r, size)
			s.off += size
		}
	}
	tok.text = string(s.src[start:s.off])
	tok.end = s.pos(s.off)
	return tok
}

// skipString skips a quoted string starting at off, escapes included, and
// reports whether it was closed on its line. Without a closing quote it
// stops at the line end.
func (s *scanner) skipString() bool {
	s.off++ // opening quote
	for !s.eof() {
		switch s.src[s.off] {
		case '"':
			s.off++
			return true
		case '\n':
			return false
		case '\\':
			s.off++
			if !s.eof() && s.src[s.off] != '\n' {
				s.off++
			}
		default:
			s.off++
		}
	}
	return false
}
