package dsl

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Parse parses the document src, naming it filename in positions. It
// reports every syntax error of the document, not just the first: the
// error is an ErrorList sorted by position. The returned *File is never
// nil; after errors it holds what could be parsed.
func Parse(filename string, src []byte) (*File, error) {
	p := &parser{s: newScanner(filename, src), file: &File{name: filename}}
	p.next()
	for p.tok.kind != tokEOF {
		p.parseStatement()
	}
	p.file.comments = p.s.comments
	p.errs = append(p.errs, p.s.errs...)
	p.errs.Sort()
	return p.file, p.errs.Err()
}

// parser is a recursive-descent parser with one token of look-ahead.
type parser struct {
	s       *scanner
	tok     token
	prevEnd Pos // end of the last consumed token
	errs    ErrorList
	file    *File
	// eofReported is set once a missing closing brace was reported at the
	// end of the file; the enclosing blocks do not report theirs.
	eofReported bool
}

func (p *parser) next() {
	p.prevEnd = p.tok.end
	p.tok = p.s.scan()
}

func (p *parser) errorf(pos Pos, format string, args ...any) {
	p.errs.add(pos, format, args...)
}

// unexpected reports the current token as unexpected, with the rest of
// the message in format. An illegal token reports its own error instead.
func (p *parser) unexpected(format string, args ...any) {
	if p.tok.kind == tokIllegal {
		p.errorf(p.tok.pos, "%s", p.tok.err)
		return
	}
	p.errorf(p.tok.pos, "unexpected %s%s", describe(p.tok), fmt.Sprintf(format, args...))
}

// describe names a token in a message.
func describe(t token) string {
	switch t.kind {
	case tokEOF:
		return "end of file"
	case tokString:
		return "string"
	default:
		return shorten(t.text)
	}
}

// shorten prepares source text for a message: long text is cut, and
// characters that may not appear in a document are replaced.
func shorten(s string) string {
	const limit = 32
	var b strings.Builder
	for i := 0; i < len(s); {
		if b.Len() >= limit {
			b.WriteString("...")
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if badRune(r, size) != "" || r == '\n' || r == '\r' {
			r = utf8.RuneError
		}
		b.WriteRune(r)
		i += size
	}
	return b.String()
}

// onLine reports whether the current token is of kind k and on the line of
// the tokens before it.
func (p *parser) onLine(k tokenKind) bool { return p.tok.kind == k && !p.tok.nl }

// onLineWord reports whether the current token is the word w on the line of
// the tokens before it.
func (p *parser) onLineWord(w string) bool { return p.onLine(tokWord) && p.tok.text == w }

// want consumes a word on the current line and returns it. Otherwise it
// reports "missing WHAT after AFTER" (at the end of the line) or
// "unexpected X after AFTER; want WHAT".
func (p *parser) want(after, what string) (ident, bool) {
	if p.onLine(tokWord) {
		id := ident{Pos: p.tok.pos, Name: p.tok.text}
		p.next()
		return id, true
	}
	p.missing(after, what)
	return ident{}, false
}

// missing reports that what should come after after at the current token.
func (p *parser) missing(after, what string) {
	if p.tok.kind == tokEOF || p.tok.nl {
		p.errorf(p.prevEnd, "missing %s after %s", what, after)
		return
	}
	p.unexpected(" after %s; want %s", after, what)
}

// skipLine skips to the end of the statement that starts at offset start:
// to the first token of a later line, a closing brace or the end of the
// file. Braces opened on the way are skipped to their closing brace.
func (p *parser) skipLine(start int) {
	depth := 0
	for p.tok.kind != tokEOF {
		if depth == 0 && p.tok.nl && p.tok.pos.Offset != start {
			return
		}
		switch p.tok.kind {
		case tokLbrace:
			depth++
		case tokRbrace:
			if depth == 0 {
				return
			}
			depth--
		}
		p.next()
	}
}

// eofError reports a missing closing brace at the end of the file, once.
func (p *parser) eofError(format string, args ...any) {
	if !p.eofReported {
		p.errorf(p.tok.pos, format, args...)
		p.eofReported = true
	}
}

// findLbrace skips the rest of a broken header line and reports whether an
// opening brace ends it; the body that follows is then parsed as usual.
func (p *parser) findLbrace() bool {
	for p.tok.kind != tokEOF && !p.tok.nl {
		if p.tok.kind == tokLbrace {
			return true
		}
		if p.tok.kind == tokRbrace {
			return false
		}
		p.next()
	}
	return false
}

func (p *parser) parseStatement() {
	switch {
	case p.tok.kind == tokWord && p.tok.text == "bind":
		p.parseBind()
	case p.tok.kind == tokWord && p.tok.text == "alias":
		p.parseAlias()
	case p.tok.kind == tokWord && p.tok.text == "decl":
		p.parseDecl()
	case p.tok.kind == tokRbrace:
		p.unexpected("; want bind, alias or decl")
		p.next()
	default:
		p.unexpected("; want bind, alias or decl")
		p.skipLine(p.tok.pos.Offset)
	}
}

// parseBind parses `bind GROUP/VERSION GO-PACKAGE`, all on one line.
func (p *parser) parseBind() {
	b := &bindNode{Pos: p.tok.pos}
	p.next()
	var ok bool
	if b.GroupVersion, ok = p.want("bind", "group/version"); ok {
		b.Package, ok = p.want("bind "+shorten(b.GroupVersion.Name), "Go package")
	}
	if !ok {
		p.skipLine(b.Pos.Offset)
		return
	}
	p.file.binds = append(p.file.binds, b)
}

// parseAlias parses `alias NAME GROUP/VERSION/KIND`, all on one line.
func (p *parser) parseAlias() {
	a := &aliasNode{Pos: p.tok.pos}
	p.next()
	var ok bool
	if a.Name, ok = p.want("alias", "name"); ok {
		a.GVK, ok = p.want("alias "+shorten(a.Name.Name), "group/version/kind")
	}
	if ok && p.onLine(tokWord) {
		if p.tok.text == clusterKeyword {
			a.Scope = ident{Pos: p.tok.pos, Name: p.tok.text}
			p.next()
		} else {
			p.unexpected(" after alias %s %s; want %s or the end of the line", shorten(a.Name.Name), shorten(a.GVK.Name), clusterKeyword)
			ok = false
		}
	}
	if !ok {
		p.skipLine(a.Pos.Offset)
		return
	}
	p.file.aliases = append(p.file.aliases, a)
}

// parseDecl parses `decl NAME for KIND {`, its blocks and its `}`. The
// target may be missing (Check reports it).
func (p *parser) parseDecl() {
	d := &declNode{Pos: p.tok.pos}
	p.next()
	var ok bool
	if d.Name, ok = p.want("decl", "name"); ok {
		if p.onLineWord("for") {
			p.next()
			d.Target, ok = p.want("for", "kind")
		}
		if ok && !p.onLine(tokLbrace) {
			if d.Target.Name == "" {
				p.missing("decl "+shorten(d.Name.Name), "for KIND or {")
			} else {
				p.missing("decl "+shorten(d.Name.Name)+" for "+shorten(d.Target.Name), "{")
			}
			ok = false
		}
	}
	if !ok && !p.findLbrace() {
		p.skipLine(d.Pos.Offset)
		return
	}
	d.Lbrace = p.tok.pos
	p.next()
	for {
		switch {
		case p.tok.kind == tokRbrace:
			d.End = p.tok.pos
			p.next()
			p.file.decls = append(p.file.decls, d)
			return
		case p.tok.kind == tokEOF:
			p.eofError("missing } to close decl %s", shorten(d.Name.Name))
			p.file.decls = append(p.file.decls, d)
			return
		case p.tok.kind == tokWord && (p.tok.text == "state" || p.tok.text == "action"):
			p.parseBlock(d)
		default:
			p.unexpected(" in decl %s; want state, action or }", shorten(d.Name.Name))
			p.skipLine(p.tok.pos.Offset)
		}
	}
}

// parseBlock parses a `state { ... }` or `action { ... }` block of d.
func (p *parser) parseBlock(d *declNode) {
	b := &blockNode{Pos: p.tok.pos, Kind: stateBlock}
	kw := p.tok.text
	if kw == "action" {
		b.Kind = actionBlock
	}
	p.next()
	if !p.onLine(tokLbrace) {
		p.missing(kw, "{")
		if !p.findLbrace() {
			p.skipLine(b.Pos.Offset)
			return
		}
	}
	b.Lbrace = p.tok.pos
	p.next()
	for {
		switch {
		case p.tok.kind == tokRbrace:
			b.End = p.tok.pos
			p.next()
			d.Blocks = append(d.Blocks, b)
			return
		case p.tok.kind == tokEOF:
			p.eofError("missing } to close %s block of decl %s", kw, shorten(d.Name.Name))
			d.Blocks = append(d.Blocks, b)
			return
		case p.tok.kind == tokWord && b.Kind == stateBlock:
			if st := p.parseState(); st != nil {
				b.States = append(b.States, st)
				d.States = append(d.States, st)
			}
		case p.tok.kind == tokWord:
			if a := p.parseAction(); a != nil {
				b.Actions = append(b.Actions, a)
				d.Actions = append(d.Actions, a)
			}
		case b.Kind == stateBlock:
			p.unexpected(" in state block; want a state (name Kind { ... }) or }")
			p.skipLine(p.tok.pos.Offset)
		default:
			p.unexpected(" in action block; want an action (Name(states)) or }")
			p.skipLine(p.tok.pos.Offset)
		}
	}
}

// parseState parses `name Kind {` or `name []Kind {`, then the selector
// lines up to the closing brace. It returns nil if the header is broken.
func (p *parser) parseState() *stateNode {
	st := &stateNode{Name: ident{Pos: p.tok.pos, Name: p.tok.text}}
	p.next()
	if p.onLine(tokBrackets) {
		st.List = true
		p.next()
	}
	var ok bool
	if st.Kind, ok = p.want("state "+shorten(st.Name.Name), "kind"); ok && !p.onLine(tokLbrace) {
		kind := shorten(st.Kind.Name)
		if st.List {
			kind = "[]" + kind
		}
		p.missing(shorten(st.Name.Name)+" "+kind, "{")
		ok = false
	}
	if !ok && !p.findLbrace() {
		p.skipLine(st.Name.Pos.Offset)
		return nil
	}
	st.Lbrace = p.tok.pos
	p.parseSelectors(st)
	if !ok {
		return nil
	}
	return st
}

// parseSelectors reads the selector lines of st, right after the opening
// brace (the current token), up to and including the closing brace, then
// moves on to the next token.
func (p *parser) parseSelectors(st *stateNode) {
	s := p.s
	for {
		s.skipSpace()
		switch {
		case s.eof():
			p.next()
			p.eofError("missing } to close state %s", shorten(st.Name.Name))
			return
		case s.src[s.off] == '\n':
			s.newline()
		case s.atComment():
			s.comment()
		case s.src[s.off] == '}':
			st.End = s.pos(s.off)
			s.off++
			s.atLineStart = false
			p.prevEnd = s.pos(s.off)
			p.tok = s.scan()
			return
		default:
			if sel := p.parseSelector(); sel != nil {
				st.Selectors = append(st.Selectors, sel)
			}
		}
	}
}

// parseSelector parses one selector at the scanner's offset. After an error
// it skips the rest of the selector and returns nil.
func (p *parser) parseSelector() *selectorNode {
	s := p.s
	sel := &selectorNode{Pos: s.pos(s.off)}
	negated := s.peek(0) == '!'
	if negated {
		s.off++
	}
	start := s.off
	if !p.scanSelectorWord(sel) {
		return nil
	}
	word := string(s.src[start:s.off])
	if negated && !strings.HasPrefix(word, "labels/") {
		p.errorf(sel.Pos, "only a label selector can be negated; want !labels/KEY")
		p.skipSelector()
		return nil
	}
	switch {
	case word == "":
		p.errorf(sel.Pos, "missing selector before =; want name, namespace, labels/KEY, fields/PATH or owned")
		p.skipSelector()
		return nil
	case word == "owned":
		sel.Kind = selOwned
		s.skipSpace()
		if s.peek(0) == '=' {
			p.errorf(s.pos(s.off), "selector owned takes no value")
			p.skipSelector()
			return nil
		}
		return p.endSelector(sel)
	case word == "name":
		sel.Kind = selName
	case word == "namespace":
		sel.Kind = selNamespace
	case word == "labels" || word == "fields":
		p.errorf(sel.Pos, "missing %s after %s; want %s/%s=VALUE", keyWord(word), word, word, keyWord(word))
		p.skipSelector()
		return nil
	case strings.HasPrefix(word, "labels/"), strings.HasPrefix(word, "fields/"):
		sel.Kind = selLabels
		if word[0] == 'f' {
			sel.Kind = selFields
		}
		sel.Key = ident{Pos: s.pos(start + len("labels/")), Name: word[len("labels/"):]}
		if sel.Key.Name == "" {
			p.errorf(sel.Key.Pos, "missing %s after %s; want %s%s=VALUE", keyWord(word[:6]), word, word, keyWord(word[:6]))
			p.skipSelector()
			return nil
		}
	default:
		p.errorf(sel.Pos, "unknown selector %s; want name, namespace, labels/KEY, fields/PATH or owned", shorten(word))
		p.skipSelector()
		return nil
	}
	s.skipSpace()
	if sel.Kind == selLabels {
		if negated {
			sel.Op = LabelDoesNotExist
			return p.endSelector(sel)
		}
		if s.eof() || s.peek(0) == '\n' || s.peek(0) == '}' || s.atComment() {
			sel.Op = LabelExists
			return p.endSelector(sel)
		}
		if op, ok := p.setOperator(); ok {
			sel.Op = op
			if !p.parseValueList(sel, word) {
				p.skipSelector()
				return nil
			}
			return p.endSelector(sel)
		}
		if s.peek(0) == '!' && s.peek(1) == '=' {
			sel.Op = LabelNotEquals
			s.off++
		}
	}
	return p.selectorValue(sel, word)
}

// scanSelectorWord moves the scanner past the word of a selector, up to a
// blank, =, !, } or a comment. A first character that cannot start one is
// reported, the rest of the selector skipped, and false returned.
func (p *parser) scanSelectorWord(sel *selectorNode) bool {
	s := p.s
	start := s.off
	for !s.eof() {
		c := s.src[s.off]
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '=' || c == '!' || c == '}' || s.atComment() {
			break
		}
		r, size := utf8.DecodeRune(s.src[s.off:])
		if msg := badRune(r, size); msg != "" {
			if s.off == start {
				p.errorf(sel.Pos, "%s", msg)
				s.off += size
				p.skipSelector()
				return false
			}
			break
		}
		s.off += size
	}
	return true
}

// selectorValue parses the = and the value of the selector sel, whose word
// is word. After an error it skips the rest of the selector and returns
// nil.
func (p *parser) selectorValue(sel *selectorNode, word string) *selectorNode {
	s := p.s
	if s.peek(0) != '=' {
		want := shorten(word) + "=VALUE"
		if sel.Kind == selLabels {
			want += ", " + shorten(word) + "!=VALUE, " + shorten(word) + " in (VALUES), " + shorten(word) + " notin (VALUES) or " + shorten(word) + " alone"
		}
		p.errorf(s.pos(s.off), "missing = after %s; want %s", shorten(word), want)
		p.skipSelector()
		return nil
	}
	s.off++
	s.skipSpace()
	if s.eof() || s.peek(0) == '\n' || s.peek(0) == '}' || s.atComment() {
		p.errorf(s.pos(s.off), "missing value after %s=", shorten(word))
		p.skipSelector()
		return nil
	}
	var ok bool
	if s.peek(0) == '"' {
		sel.Value, ok = p.parseQuoted()
	} else {
		sel.Value, ok = p.parseUnquoted(false)
	}
	if !ok {
		p.skipSelector()
		return nil
	}
	return p.endSelector(sel)
}

// setOperator consumes `in` or `notin` at the scanner's offset when one
// follows as a word (before a blank or an opening parenthesis).
func (p *parser) setOperator() (LabelOp, bool) {
	s := p.s
	for _, w := range []struct {
		word string
		op   LabelOp
	}{{"notin", LabelNotIn}, {"in", LabelIn}} {
		n := len(w.word)
		if s.off+n > len(s.src) || string(s.src[s.off:s.off+n]) != w.word {
			continue
		}
		if c := s.peek(n); c == ' ' || c == '\t' || c == '(' {
			s.off += n
			return w.op, true
		}
	}
	return 0, false
}

// parseValueList parses `(VALUE, ...)` after in or notin into sel.Values.
// It reports an error and returns false when the list is broken or empty.
func (p *parser) parseValueList(sel *selectorNode, word string) bool {
	s := p.s
	s.skipSpace()
	if s.peek(0) != '(' {
		p.errorf(s.pos(s.off), "missing ( after %s %s; want %s %s (VALUE, ...)", shorten(word), sel.Op, shorten(word), sel.Op)
		return false
	}
	open := s.pos(s.off)
	s.off++
	for {
		s.skipSpace()
		switch c := s.peek(0); {
		case s.eof() || c == '\n' || c == '}' || s.atComment():
			p.errorf(s.pos(s.off), "missing ) to close the values of %s %s", shorten(word), sel.Op)
			return false
		case c == ')':
			if len(sel.Values) == 0 {
				p.errorf(open, "empty value list after %s %s; want at least one value", shorten(word), sel.Op)
				return false
			}
			s.off++
			return true
		case c == ',':
			p.errorf(s.pos(s.off), "missing value before , in the values of %s %s", shorten(word), sel.Op)
			return false
		}
		var v *Value
		var ok bool
		if s.peek(0) == '"' {
			v, ok = p.parseQuoted()
		} else {
			v, ok = p.parseUnquoted(true)
		}
		if !ok {
			return false
		}
		sel.Values = append(sel.Values, v)
		s.skipSpace()
		switch s.peek(0) {
		case ',':
			s.off++
		case ')':
		default:
			if s.eof() || s.peek(0) == '\n' || s.peek(0) == '}' || s.atComment() {
				p.errorf(s.pos(s.off), "missing ) to close the values of %s %s", shorten(word), sel.Op)
			} else {
				p.errorf(s.pos(s.off), "unexpected %s in the values of %s %s; want , or )", shorten(string(s.src[s.off:min(s.off+1, len(s.src))])), shorten(word), sel.Op)
			}
			return false
		}
	}
}

// endSelector checks that nothing but a comment or a closing brace follows
// sel on its line, and records where sel ends.
func (p *parser) endSelector(sel *selectorNode) *selectorNode {
	s := p.s
	sel.End = s.pos(s.off)
	s.skipSpace()
	if s.eof() || s.peek(0) == '\n' || s.peek(0) == '}' || s.atComment() {
		return sel
	}
	start := s.off
	for !s.eof() && s.src[s.off] != ' ' && s.src[s.off] != '\t' && s.src[s.off] != '\n' && s.src[s.off] != '\r' {
		s.off++
	}
	p.errorf(s.pos(start), "unexpected %s after selector; write one selector per line", shorten(string(s.src[start:s.off])))
	s.off = start
	p.skipSelector()
	return nil
}

// skipSelector skips the rest of a broken selector: up to the line end, a
// comment or a closing brace outside quotes and references.
func (p *parser) skipSelector() {
	s := p.s
	for !s.eof() {
		switch c := s.src[s.off]; {
		case c == '\n' || c == '}' || s.atComment():
			return
		case c == '"':
			s.skipString()
		case c == '$' && s.peek(1) == '{':
			for !s.eof() && s.src[s.off] != '\n' && s.src[s.off] != '}' {
				s.off++
			}
			if !s.eof() && s.src[s.off] == '}' {
				s.off++
			}
		default:
			s.off++
		}
	}
}

// valueBuilder collects the parts of a value, joining adjacent literal
// text.
type valueBuilder struct {
	parts   []Part
	lit     strings.Builder
	litPos  Pos
	haveLit bool
}

func (b *valueBuilder) addRune(pos Pos, r rune) {
	if !b.haveLit {
		b.litPos, b.haveLit = pos, true
	}
	b.lit.WriteRune(r)
}

func (b *valueBuilder) addByte(pos Pos, c byte) {
	if !b.haveLit {
		b.litPos, b.haveLit = pos, true
	}
	b.lit.WriteByte(c)
}

func (b *valueBuilder) flush() {
	if b.haveLit {
		b.parts = append(b.parts, Part{Pos: b.litPos, Lit: b.lit.String()})
		b.lit.Reset()
		b.haveLit = false
	}
}

func (b *valueBuilder) addRef(pos Pos, ref []string) {
	b.flush()
	b.parts = append(b.parts, Part{Pos: pos, Ref: ref})
}

// value returns the finished value. An empty value has one empty literal
// part, so that a value always has at least one part.
func (b *valueBuilder) value(pos Pos, raw string) *Value {
	b.flush()
	if len(b.parts) == 0 {
		b.parts = []Part{{Pos: pos, Lit: ""}}
	}
	return &Value{Pos: pos, Raw: raw, Parts: b.parts}
}

// parseRef parses the reference that starts with `${` at the scanner's
// offset. stop reports bytes that end the search for the closing brace.
// It reports an error and returns false for an unterminated or malformed
// reference; the offset is then after the reference, or at the stop byte.
func (p *parser) parseRef(b *valueBuilder, stop func(byte) bool) bool {
	s := p.s
	pos := s.pos(s.off)
	i := s.off + 2
	for i < len(s.src) && s.src[i] != '}' && !stop(s.src[i]) {
		i++
	}
	if i >= len(s.src) || s.src[i] != '}' {
		p.errorf(pos, "unterminated ${")
		s.off = i
		return false
	}
	body := string(s.src[s.off+2 : i])
	s.off = i + 1
	ref, ok := parseRefBody(body)
	if !ok {
		p.errorf(pos, "bad reference ${%s}; want ${target.Field.Path}", shorten(body))
		return false
	}
	b.addRef(pos, ref)
	return true
}

// parseRefBody splits "target.A.B" into [A B]; every part must be an
// exported Go identifier.
func parseRefBody(body string) ([]string, bool) {
	parts := strings.Split(body, ".")
	if len(parts) < 2 || parts[0] != "target" {
		return nil, false
	}
	for _, f := range parts[1:] {
		if !isExportedIdent(f) {
			return nil, false
		}
	}
	return parts[1:], true
}

// parseUnquoted parses a value that runs to the next blank, line end or
// closing brace outside a reference; inList, in a list of values, also to
// the next comma or closing parenthesis.
func (p *parser) parseUnquoted(inList bool) (*Value, bool) {
	s := p.s
	start := s.off
	pos := s.pos(start)
	var b valueBuilder
	ok := true
	blank := func(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
	lineEnd := func(c byte) bool { return c == '\n' }
	for !s.eof() {
		c := s.src[s.off]
		if blank(c) || c == '}' || inList && (c == ',' || c == ')') {
			break
		}
		if c == '$' && s.peek(1) == '{' {
			if !p.parseRef(&b, lineEnd) {
				ok = false
			}
			continue
		}
		r, size := utf8.DecodeRune(s.src[s.off:])
		if msg := badRune(r, size); msg != "" {
			p.errorf(s.pos(s.off), "%s", msg)
			ok = false
		}
		b.addRune(s.pos(s.off), r)
		s.off += size
	}
	return b.value(pos, string(s.src[start:s.off])), ok
}

// parseQuoted parses a value in double quotes with Go escapes; references
// work inside the quotes too.
func (p *parser) parseQuoted() (*Value, bool) {
	s := p.s
	start := s.off
	pos := s.pos(start)
	var b valueBuilder
	ok := true
	s.off++
	stop := func(c byte) bool { return c == '"' || c == '\n' }
	for {
		if s.eof() || s.src[s.off] == '\n' {
			p.errorf(pos, "unterminated string")
			return nil, false
		}
		c := s.src[s.off]
		switch {
		case c == '"':
			s.off++
			return b.value(pos, string(s.src[start:s.off])), ok
		case c == '$' && s.peek(1) == '{':
			if !p.parseRef(&b, stop) {
				ok = false
			}
		case c == '\\':
			rest := string(s.src[s.off:])
			v, multibyte, tail, err := strconv.UnquoteChar(rest, '"')
			if err != nil {
				p.errorf(s.pos(s.off), "invalid escape in string")
				ok = false
				s.off++
				continue
			}
			if multibyte || v < utf8.RuneSelf {
				b.addRune(s.pos(s.off), v)
			} else {
				b.addByte(s.pos(s.off), byte(v))
			}
			s.off += len(rest) - len(tail)
		default:
			r, size := utf8.DecodeRune(s.src[s.off:])
			if msg := badRune(r, size); msg != "" {
				p.errorf(s.pos(s.off), "%s", msg)
				ok = false
			}
			b.addRune(s.pos(s.off), r)
			s.off += size
		}
	}
}

// parseAction parses `Name(state, ...)` on one line. It returns nil after
// an error.
func (p *parser) parseAction() *actionNode {
	a := &actionNode{Name: ident{Pos: p.tok.pos, Name: p.tok.text}}
	p.next()
	if !p.onLine(tokLparen) {
		p.missing("action "+shorten(a.Name.Name), "(")
		p.skipLine(a.Name.Pos.Offset)
		return nil
	}
	p.next()
	for {
		switch {
		case p.onLine(tokRparen):
			a.End = p.tok.pos
			p.next()
			if p.onLineWord(writesKeyword) {
				if !p.parseWrites(a) {
					p.skipLine(a.Name.Pos.Offset)
					return nil
				}
			}
			return a
		case p.onLine(tokWord):
			a.States = append(a.States, ident{Pos: p.tok.pos, Name: p.tok.text})
			p.next()
			switch {
			case p.onLine(tokComma):
				p.next()
				continue
			case p.onLine(tokRparen):
				continue
			}
			p.actionError(a, ", or )")
		default:
			p.actionError(a, "a state name or )")
		}
		p.skipLine(a.Name.Pos.Offset)
		return nil
	}
}

// parseWrites parses `writes Kind(verb, ...), ...` after the states of a.
// It reports an error and returns false when the clause is broken.
func (p *parser) parseWrites(a *actionNode) bool {
	after := "writes"
	p.next()
	for {
		w := &writeNode{}
		var ok bool
		if w.Kind, ok = p.want(after, "Kind(verb, ...)"); !ok {
			return false
		}
		if !p.onLine(tokLparen) {
			p.missing(shorten(w.Kind.Name), "(verb, ...)")
			return false
		}
		p.next()
		for !p.onLine(tokRparen) {
			if !p.onLine(tokWord) {
				p.missing(shorten(w.Kind.Name)+"(", "a verb or )")
				return false
			}
			w.Verbs = append(w.Verbs, ident{Pos: p.tok.pos, Name: p.tok.text})
			p.next()
			switch {
			case p.onLine(tokComma):
				p.next()
			case !p.onLine(tokRparen):
				p.missing(shorten(w.Kind.Name)+"("+shorten(w.Verbs[len(w.Verbs)-1].Name), ", or )")
				return false
			}
		}
		w.End = p.tok.pos
		a.End = p.tok.pos
		p.next()
		a.Writes = append(a.Writes, w)
		if !p.onLine(tokComma) {
			return true
		}
		p.next()
		after = ","
	}
}

// actionError reports a broken argument list of a: a missing ) at the end
// of the line, or an unexpected token where want should be.
func (p *parser) actionError(a *actionNode, want string) {
	if p.tok.kind == tokEOF || p.tok.nl {
		p.errorf(p.prevEnd, "missing ) in action %s", shorten(a.Name.Name))
		return
	}
	p.unexpected(" in action %s; want %s", shorten(a.Name.Name), want)
}

// keyWord names what follows labels/ or fields/ in messages.
func keyWord(selector string) string {
	if selector == "fields" {
		return "PATH"
	}
	return "KEY"
}
