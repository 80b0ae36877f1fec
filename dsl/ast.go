package dsl

import (
	"fmt"
	"strings"
)

// Pos is a position in a document. Line and Column are 1-based; Column
// counts bytes from the start of the line. The zero Pos is "no position".
type Pos struct {
	Filename string
	Offset   int
	Line     int
	Column   int
}

// IsValid reports whether p is a real position.
func (p Pos) IsValid() bool { return p.Line > 0 }

// String returns FILE:LINE:COL, or LINE:COL without a file name.
func (p Pos) String() string {
	if p.Filename == "" {
		return fmt.Sprintf("%d:%d", p.Line, p.Column)
	}
	return fmt.Sprintf("%s:%d:%d", p.Filename, p.Line, p.Column)
}

// File is a parsed document: its statements in source order, split by kind.
type File struct {
	// Name is the file name used in positions.
	Name string
	// Binds, Aliases and Decls are the statements of the document, each in
	// source order.
	Binds   []*Bind
	Aliases []*Alias
	Decls   []*Decl
	// Comments are every comment in the document, in source order. The
	// formatter puts them back; nothing else reads them.
	Comments []*Comment
}

// Comment is one `//` comment, from the slashes to the end of the line
// (without the newline).
type Comment struct {
	Pos  Pos
	Text string
}

// Ident is a name with its position.
type Ident struct {
	Pos  Pos
	Name string
}

// Bind is `bind GROUP/VERSION GO-PACKAGE`: the Go package that holds the
// types of a group/version. The core group is written as just its version,
// `v1`.
type Bind struct {
	Pos Pos // of the keyword
	// GroupVersion is the group/version as written, for example "batch/v1"
	// or "v1".
	GroupVersion Ident
	// Package is the Go import path.
	Package Ident
}

// Group returns the API group of the bind ("" for the core group).
func (b *Bind) Group() string { g, _ := SplitGroupVersion(b.GroupVersion.Name); return g }

// Version returns the API version of the bind.
func (b *Bind) Version() string { _, v := SplitGroupVersion(b.GroupVersion.Name); return v }

// Alias is `alias NAME GROUP/VERSION/KIND`.
type Alias struct {
	Pos  Pos // of the keyword
	Name Ident
	// GVK is the group/version/kind as written, for example
	// "batch/v1/Job" or "v1/Pod".
	GVK Ident
}

// Decl is `decl NAME for KIND { state { ... } action { ... } }`.
type Decl struct {
	Pos    Pos // of the keyword
	Name   Ident
	Target Ident // the kind after `for`; Name is "" when missing
	// Lbrace is the position of the opening brace.
	Lbrace Pos
	// States and Actions collect the entries of every state and action
	// block of the decl, in source order.
	States  []*State
	Actions []*Action
	// Blocks are the state and action blocks in source order, for the
	// formatter.
	Blocks []*Block
	// End is the position of the closing brace.
	End Pos
}

// BlockKind tells a state block from an action block.
type BlockKind int

// The kinds of block in a decl.
const (
	StateBlock BlockKind = iota + 1
	ActionBlock
)

// Block is one `state { ... }` or `action { ... }` block of a decl.
type Block struct {
	Pos     Pos
	Kind    BlockKind
	Lbrace  Pos       // of the opening brace
	States  []*State  // for a StateBlock
	Actions []*Action // for an ActionBlock
	End     Pos
}

// State is `name Kind { selectors }` or `name []Kind { selectors }`.
type State struct {
	Name Ident
	// List is true for `[]Kind`.
	List bool
	Kind Ident
	// Lbrace is the position of the opening brace of the body.
	Lbrace Pos
	// Selectors are the lines of the body, in source order.
	Selectors []*Selector
	End       Pos
}

// SelectorKind is the kind of a selector line.
type SelectorKind int

// The selector kinds of the language.
const (
	// NameSelector is `name=VALUE`: get the object of that name.
	NameSelector SelectorKind = iota + 1
	// LabelSelector is `labels/KEY=VALUE`: list with a label requirement.
	LabelSelector
	// FieldSelector is `fields/PATH=VALUE`: list with a field requirement,
	// served from a cache index.
	FieldSelector
	// OwnedSelector is `owned`: only objects controlled by the target.
	OwnedSelector
)

// String returns the keyword of the selector kind.
func (k SelectorKind) String() string {
	switch k {
	case NameSelector:
		return "name"
	case LabelSelector:
		return "labels"
	case FieldSelector:
		return "fields"
	case OwnedSelector:
		return "owned"
	default:
		return fmt.Sprintf("SelectorKind(%d)", int(k))
	}
}

// Selector is one selector line of a state.
type Selector struct {
	Pos  Pos
	Kind SelectorKind
	// Key is the label key or the field path (for example
	// ".metadata.controller"); empty for name and owned.
	Key Ident
	// Value is the value after `=`; nil for owned.
	Value *Value
}

// Value is the value of a selector: constant text and `${target.Path}`
// references, in order.
type Value struct {
	Pos Pos
	// Raw is the value as written, including quotes if it was quoted.
	Raw string
	// Parts are the pieces of the value, in order; adjacent literal text is
	// one part.
	Parts []Part
}

// IsConstant reports whether the value has no references.
func (v *Value) IsConstant() bool {
	for _, p := range v.Parts {
		if p.Ref != nil {
			return false
		}
	}
	return true
}

// Part is a piece of a Value: either literal text or a reference.
type Part struct {
	Pos Pos
	// Lit is literal text; meaningful when Ref is nil.
	Lit string
	// Ref is the Go field path of a `${target.A.B}` reference, without
	// "target": ["A", "B"].
	Ref []string
}

// Action is `Name(state, ...)`.
type Action struct {
	Name   Ident
	States []Ident
	End    Pos // of the closing parenthesis
}

// SplitGroupVersion splits "group/version" into its parts; a string
// without a slash is a core-group version.
func SplitGroupVersion(gv string) (group, version string) {
	if i := strings.LastIndex(gv, "/"); i >= 0 {
		return gv[:i], gv[i+1:]
	}
	return "", gv
}
