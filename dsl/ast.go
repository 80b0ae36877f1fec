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
	// Scope is the word `cluster` after the GVK when the kind is
	// cluster-scoped; its Name is "" for a namespaced kind.
	Scope Ident
}

// ClusterKeyword is the word that ends an alias of a cluster-scoped kind:
// `alias Tenant tenancy.example.com/v1/Tenant cluster`.
const ClusterKeyword = "cluster"

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
	// NamespaceSelector is `namespace=VALUE`: read the state in that
	// namespace instead of the target's.
	NamespaceSelector
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
	case NamespaceSelector:
		return "namespace"
	default:
		return fmt.Sprintf("SelectorKind(%d)", int(k))
	}
}

// LabelOp is the operator of a label selector, with the meaning of a
// Kubernetes label selector requirement.
type LabelOp int

// The operators of label selectors.
const (
	// LabelEquals is `labels/KEY=VALUE`: the label is VALUE.
	LabelEquals LabelOp = iota
	// LabelNotEquals is `labels/KEY!=VALUE`: the label is not VALUE, or
	// the object does not carry it.
	LabelNotEquals
	// LabelIn is `labels/KEY in (A, B)`: the label is one of the values.
	LabelIn
	// LabelNotIn is `labels/KEY notin (A, B)`: the label is none of the
	// values, or the object does not carry it.
	LabelNotIn
	// LabelExists is `labels/KEY`: the object carries the label.
	LabelExists
	// LabelDoesNotExist is `!labels/KEY`: the object does not carry the
	// label.
	LabelDoesNotExist
)

// String returns the operator as the language writes it.
func (op LabelOp) String() string {
	switch op {
	case LabelEquals:
		return "="
	case LabelNotEquals:
		return "!="
	case LabelIn:
		return "in"
	case LabelNotIn:
		return "notin"
	case LabelExists:
		return "exists"
	case LabelDoesNotExist:
		return "!exists"
	default:
		return fmt.Sprintf("LabelOp(%d)", int(op))
	}
}

// Selector is one selector line of a state.
type Selector struct {
	Pos  Pos
	Kind SelectorKind
	// Key is the label key or the field path (for example
	// ".metadata.controller"); empty for name, namespace and owned.
	Key Ident
	// Op is the operator of a label selector; LabelEquals for the other
	// kinds.
	Op LabelOp
	// Value is the value after `=` or `!=`; nil for owned, for `in` and
	// `notin` (see Values) and for the existence operators.
	Value *Value
	// Values are the values of `in (...)` and `notin (...)`, in order.
	Values []*Value
	// End is the position just after the selector's last byte; the zero
	// Pos when the selector was not parsed.
	End Pos
}

// String returns the selector in canonical form: without blanks around
// `=` and `!=`, and with `, ` between the values of `in` and `notin`.
func (sel *Selector) String() string {
	var b strings.Builder
	if sel.Kind == LabelSelector && sel.Op == LabelDoesNotExist {
		b.WriteByte('!')
	}
	b.WriteString(sel.Kind.String())
	if sel.Kind == LabelSelector || sel.Kind == FieldSelector {
		b.WriteByte('/')
		b.WriteString(sel.Key.Name)
	}
	raw := func(v *Value) string {
		if v == nil {
			return ""
		}
		return v.Raw
	}
	switch {
	case sel.Kind == OwnedSelector:
	case sel.Kind == LabelSelector && (sel.Op == LabelExists || sel.Op == LabelDoesNotExist):
	case sel.Kind == LabelSelector && (sel.Op == LabelIn || sel.Op == LabelNotIn):
		b.WriteByte(' ')
		b.WriteString(sel.Op.String())
		b.WriteString(" (")
		for i, v := range sel.Values {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(raw(v))
		}
		b.WriteByte(')')
	case sel.Kind == LabelSelector && sel.Op == LabelNotEquals:
		b.WriteString("!=")
		b.WriteString(raw(sel.Value))
	default:
		b.WriteByte('=')
		b.WriteString(raw(sel.Value))
	}
	return b.String()
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

// Action is `Name(state, ...)`, optionally followed by the objects the
// action writes: `Name(state, ...) writes Kind(verb, ...), ...`.
type Action struct {
	Name   Ident
	States []Ident
	// Writes are the kinds the action writes, with the verbs, in source
	// order.
	Writes []*Write
	End    Pos // of the last closing parenthesis
}

// WritesKeyword is the word between an action's states and the kinds it
// writes.
const WritesKeyword = "writes"

// Write is `Kind(verb, ...)` after `writes`: the action writes objects of
// Kind with those API verbs (create, update, patch, delete,
// deletecollection).
type Write struct {
	Kind  Ident
	Verbs []Ident
	End   Pos // of the closing parenthesis
}

// SplitGroupVersion splits "group/version" into its parts; a string
// without a slash is a core-group version.
func SplitGroupVersion(gv string) (group, version string) {
	if i := strings.LastIndex(gv, "/"); i >= 0 {
		return gv[:i], gv[i+1:]
	}
	return "", gv
}
