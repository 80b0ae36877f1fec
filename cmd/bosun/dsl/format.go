package dsl

import (
	"bytes"
	"sort"
	"strings"
)

// Format prints f in the canonical form of the language: binds, then
// aliases, then decls, each kind in source order; one statement, header,
// selector or action a line; tabs for indentation; single spaces between
// words; a blank line between the groups of statements, between decls and
// between the blocks of a decl; elsewhere at most one blank line, where the
// source had one or more. Every comment is kept: a comment on its own line
// stays before the element that followed it, a comment at the end of a
// line stays at the end of that element's line. Comments at the top of the
// document that a blank line separates from what follows stay at the top.
//
// Format is idempotent: formatting the parse of its output gives the same
// output. It is meant for files that Parse accepted; it prints whatever a
// partial file holds.
func Format(f *File) []byte {
	if f == nil {
		return nil
	}
	fm := &formatter{byNode: make(map[fkey]*fitem)}
	fm.collect(f)
	fm.attach(f.comments)
	fm.print(f)
	return fm.buf.Bytes()
}

// fitem is one line-sized element of a document, as the formatter sees it:
// a statement, a header up to its opening brace, a selector, an action or
// a closing brace.
type fitem struct {
	start, end         int // offsets, end exclusive
	startLine, endLine int
	leading            []*fcomment
	trailing           *Comment
	// blank is true when the source has a blank line right before the
	// element (after its leading comments).
	blank bool
}

// fcomment is an own-line comment and whether a blank line precedes it.
type fcomment struct {
	c     *Comment
	blank bool
}

// fkey names the element of an AST node: its header or its closing brace.
type fkey struct {
	node  any
	close bool
}

type formatter struct {
	items  []*fitem // in source order
	byNode map[fkey]*fitem
	header []*fcomment // comments at the top of the document
	tail   []*fcomment // comments after the last element
	buf    bytes.Buffer
}

// add records the element of node spanning from start to end (the
// position of its last byte, plus width).
func (fm *formatter) add(node any, isClose bool, start, last Pos, width int) {
	if last.Offset < start.Offset {
		last = start
	}
	it := &fitem{start: start.Offset, end: last.Offset + width, startLine: start.Line, endLine: last.Line}
	fm.items = append(fm.items, it)
	fm.byNode[fkey{node, isClose}] = it
}

// identEnd returns the position and width that end the given identifiers:
// the last one with a name.
func identEnd(ids ...ident) (Pos, int) {
	var pos Pos
	width := 0
	for _, id := range ids {
		if id.Name != "" || id.Pos.IsValid() {
			pos, width = id.Pos, len(id.Name)
		}
	}
	return pos, width
}

func (fm *formatter) collect(f *File) {
	for _, b := range f.binds {
		if b != nil {
			last, w := identEnd(b.GroupVersion, b.Package)
			fm.add(b, false, b.Pos, last, w)
		}
	}
	for _, a := range f.aliases {
		if a != nil {
			last, w := identEnd(a.Name, a.GVK, a.Scope)
			fm.add(a, false, a.Pos, last, w)
		}
	}
	for _, d := range f.decls {
		if d == nil {
			continue
		}
		fm.add(d, false, d.Pos, d.Lbrace, 1)
		for _, b := range d.Blocks {
			if b == nil {
				continue
			}
			fm.add(b, false, b.Pos, b.Lbrace, 1)
			for _, st := range b.States {
				if st == nil {
					continue
				}
				fm.add(st, false, st.Name.Pos, st.Lbrace, 1)
				for _, sel := range st.Selectors {
					if sel == nil {
						continue
					}
					last, w := sel.Pos, len(sel.Kind.String())
					if sel.Key.Pos.IsValid() {
						last, w = sel.Key.Pos, len(sel.Key.Name)
					}
					if sel.Value != nil && sel.Value.Pos.IsValid() {
						last, w = sel.Value.Pos, len(sel.Value.Raw)
					}
					if sel.End.IsValid() && sel.End.Offset > last.Offset+w {
						last, w = sel.End, 0
					}
					fm.add(sel, false, sel.Pos, last, w)
				}
				fm.add(st, true, st.End, st.End, 1)
			}
			for _, a := range b.Actions {
				if a != nil {
					fm.add(a, false, a.Name.Pos, a.End, 1)
				}
			}
			fm.add(b, true, b.End, b.End, 1)
		}
		fm.add(d, true, d.End, d.End, 1)
	}
	sort.SliceStable(fm.items, func(i, j int) bool { return fm.items[i].start < fm.items[j].start })
}

// attach gives every comment to an element: as its trailing comment when
// the comment follows the element on the line where the element ends, else
// as a leading comment of the next element. Comments after every element
// form the tail; comments at the top that a blank line separates from the
// first element form the header.
func (fm *formatter) attach(comments []*Comment) {
	// Blank lines: between each thing (element or comment) and the one
	// before it in the source.
	type thing struct {
		start, startLine, endLine int
		it                        *fitem
		fc                        *fcomment
	}
	things := make([]thing, 0, len(fm.items)+len(comments))
	for _, it := range fm.items {
		things = append(things, thing{start: it.start, startLine: it.startLine, endLine: it.endLine, it: it})
	}
	fcs := make([]*fcomment, 0, len(comments))
	for _, c := range comments {
		if c == nil {
			continue
		}
		fc := &fcomment{c: c}
		fcs = append(fcs, fc)
		things = append(things, thing{start: c.Pos.Offset, startLine: c.Pos.Line, endLine: c.Pos.Line, fc: fc})
	}
	sort.SliceStable(things, func(i, j int) bool { return things[i].start < things[j].start })
	for i := 1; i < len(things); i++ {
		blank := things[i].startLine-things[i-1].endLine >= 2
		if things[i].it != nil {
			things[i].it.blank = blank
		} else {
			things[i].fc.blank = blank
		}
	}

	for _, fc := range fcs {
		off := fc.c.Pos.Offset
		i := sort.Search(len(fm.items), func(i int) bool { return fm.items[i].end > off })
		if i > 0 {
			if prev := fm.items[i-1]; prev.endLine == fc.c.Pos.Line && prev.trailing == nil {
				prev.trailing = fc.c
				continue
			}
		}
		if i < len(fm.items) {
			fm.items[i].leading = append(fm.items[i].leading, fc)
		} else {
			fm.tail = append(fm.tail, fc)
		}
	}

	if len(fm.items) > 0 {
		first := fm.items[0]
		split := 0
		for j := 1; j <= len(first.leading); j++ {
			if j == len(first.leading) && first.blank || j < len(first.leading) && first.leading[j].blank {
				split = j
			}
		}
		fm.header = first.leading[:split]
		first.leading = first.leading[split:]
	}
}

// How a chunk (an element with its leading comments) is separated from what
// was printed before it.
const (
	sepNone    = iota // first in its container: no blank line
	sepBlank          // always a blank line
	sepNatural        // a blank line where the source had one
)

func (fm *formatter) item(node any, isClose bool) *fitem {
	if it, ok := fm.byNode[fkey{node, isClose}]; ok {
		return it
	}
	return &fitem{}
}

func (fm *formatter) newline() { fm.buf.WriteByte('\n') }

// line prints text at indent, with a trailing comment.
func (fm *formatter) line(indent int, text string, trailing *Comment) {
	for range indent {
		fm.buf.WriteByte('\t')
	}
	fm.buf.WriteString(text)
	if trailing != nil {
		fm.buf.WriteByte(' ')
		fm.buf.WriteString(trailing.Text)
	}
	fm.newline()
}

// lead prints the separation and the leading comments of it at indent.
// With skipOwnBlank the element itself gets no blank line before it (a
// closing brace).
func (fm *formatter) lead(it *fitem, indent, sep int, skipOwnBlank bool) {
	first := true
	blankIf := func(flag bool) {
		if first && sep == sepBlank || (!first || sep == sepNatural) && flag {
			fm.newline()
		}
		first = false
	}
	for _, lc := range it.leading {
		blankIf(lc.blank)
		fm.line(indent, lc.c.Text, nil)
	}
	if skipOwnBlank {
		if first && sep == sepBlank {
			fm.newline()
		}
		return
	}
	blankIf(it.blank)
}

// chunk prints an element that holds no others.
func (fm *formatter) chunk(it *fitem, indent, sep int, text string) {
	fm.lead(it, indent, sep, false)
	fm.line(indent, text, it.trailing)
}

// open prints the header of a container. It returns false when the
// container is empty and printed whole as `header {}`.
func (fm *formatter) open(node any, empty bool, indent, sep int, header string) bool {
	it, end := fm.item(node, false), fm.item(node, true)
	fm.lead(it, indent, sep, false)
	if empty && len(end.leading) == 0 && it.trailing == nil {
		fm.line(indent, header+" {}", end.trailing)
		return false
	}
	fm.line(indent, header+" {", it.trailing)
	return true
}

// close prints the closing brace of a container, after the comments that
// precede it inside the container.
func (fm *formatter) close(node any, indent int, empty bool) {
	it := fm.item(node, true)
	sep := sepNatural
	if empty {
		sep = sepNone
	}
	fm.lead(it, indent+1, sep, true)
	fm.line(indent, "}", it.trailing)
}

func (fm *formatter) print(f *File) {
	printed := false
	for i, fc := range fm.header {
		if i > 0 && fc.blank {
			fm.newline()
		}
		fm.line(0, fc.c.Text, nil)
		printed = true
	}
	group := 0
	sep := func(g int) int {
		defer func() { group, printed = g, true }()
		switch {
		case !printed:
			return sepNone
		case len(fm.header) > 0 && group == 0:
			return sepBlank
		case g != group || g == 3:
			return sepBlank
		}
		return sepNatural
	}
	for _, b := range f.binds {
		if b != nil {
			fm.chunk(fm.item(b, false), 0, sep(1), "bind "+b.GroupVersion.Name+" "+b.Package.Name)
		}
	}
	for _, a := range f.aliases {
		if a != nil {
			text := "alias " + a.Name.Name + " " + a.GVK.Name
			if a.Scope.Name != "" {
				text += " " + a.Scope.Name
			}
			fm.chunk(fm.item(a, false), 0, sep(2), text)
		}
	}
	for _, d := range f.decls {
		if d != nil {
			fm.printDecl(d, sep(3))
		}
	}
	for i, fc := range fm.tail {
		if printed && (fc.blank || i == 0 && group == 0 && len(fm.header) > 0) {
			fm.newline()
		}
		fm.line(0, fc.c.Text, nil)
		printed = true
	}
}

func (fm *formatter) printDecl(d *declNode, sep int) {
	header := "decl " + d.Name.Name
	if d.Target.Name != "" {
		header += " for " + d.Target.Name
	}
	blocks := make([]*blockNode, 0, len(d.Blocks))
	for _, b := range d.Blocks {
		if b != nil {
			blocks = append(blocks, b)
		}
	}
	if len(d.Blocks) == 0 {
		// A decl built by hand may list its states and actions without
		// blocks: print them in one block of each.
		if len(d.States) > 0 {
			blocks = append(blocks, &blockNode{Kind: stateBlock, States: d.States})
		}
		if len(d.Actions) > 0 {
			blocks = append(blocks, &blockNode{Kind: actionBlock, Actions: d.Actions})
		}
	}
	if !fm.open(d, len(blocks) == 0, 0, sep, header) {
		return
	}
	for i, b := range blocks {
		bsep := sepBlank
		if i == 0 {
			bsep = sepNone
		}
		fm.printBlock(b, bsep)
	}
	fm.close(d, 0, len(blocks) == 0)
}

func (fm *formatter) printBlock(b *blockNode, sep int) {
	const indent = 1
	word := "state"
	if b.Kind == actionBlock {
		word = "action"
	}
	n := 0
	for _, st := range b.States {
		if st != nil {
			n++
		}
	}
	for _, a := range b.Actions {
		if a != nil {
			n++
		}
	}
	if !fm.open(b, n == 0, indent, sep, word) {
		return
	}
	esep := sepNone
	for _, st := range b.States {
		if st != nil {
			fm.printState(st, esep)
			esep = sepNatural
		}
	}
	for _, a := range b.Actions {
		if a == nil {
			continue
		}
		args := make([]string, len(a.States))
		for i, s := range a.States {
			args[i] = s.Name
		}
		text := a.Name.Name + "(" + strings.Join(args, ", ") + ")"
		for i, w := range a.Writes {
			if i == 0 {
				text += " " + writesKeyword + " "
			} else {
				text += ", "
			}
			verbs := make([]string, len(w.Verbs))
			for j, v := range w.Verbs {
				verbs[j] = v.Name
			}
			text += w.Kind.Name + "(" + strings.Join(verbs, ", ") + ")"
		}
		fm.chunk(fm.item(a, false), indent+1, esep, text)
		esep = sepNatural
	}
	fm.close(b, indent, n == 0)
}

func (fm *formatter) printState(st *stateNode, sep int) {
	const indent = 2
	header := st.Name.Name + " "
	if st.List {
		header += "[]"
	}
	header += st.Kind.Name
	n := 0
	for _, sel := range st.Selectors {
		if sel != nil {
			n++
		}
	}
	if !fm.open(st, n == 0, indent, sep, header) {
		return
	}
	ssep := sepNone
	for _, sel := range st.Selectors {
		if sel != nil {
			fm.chunk(fm.item(sel, false), indent+1, ssep, sel.String())
			ssep = sepNatural
		}
	}
	fm.close(st, indent, n == 0)
}
