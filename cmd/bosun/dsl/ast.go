package dsl

import (
	"fmt"
	"strings"
)

// File is a parsed document, as Parse returns it: Check turns it into a
// *Spec and Format prints it back in canonical form. Its syntax tree is
// internal to the package.
type File struct {
	// name is the file name used in positions.
	name string
	// binds, aliases and decls are the statements of the document, each in
	// source order.
	binds   []*bindNode
	aliases []*aliasNode
	decls   []*declNode
	// comments are every comment in the document, in source order. The
	// formatter puts them back and the Spec hands them to a generator.
	comments []*Comment
}

// ident is a name with its position.
type ident struct {
	Pos  Pos
	Name string
}

// bindNode is `bind GROUP/VERSION GO-PACKAGE`: the Go package that holds the
// types of a group/version. The core group is written as just its version,
// `v1`.
type bindNode struct {
	Pos Pos // of the keyword
	// GroupVersion is the group/version as written, for example "batch/v1"
	// or "v1".
	GroupVersion ident
	// Package is the Go import path.
	Package ident
}

// aliasNode is `alias NAME GROUP/VERSION/KIND`.
type aliasNode struct {
	Pos  Pos // of the keyword
	Name ident
	// GVK is the group/version/kind as written, for example
	// "batch/v1/Job" or "v1/Pod".
	GVK ident
	// Scope is the word `cluster` after the GVK when the kind is
	// cluster-scoped; its Name is "" for a namespaced kind.
	Scope ident
}

// clusterKeyword is the word that ends an alias of a cluster-scoped kind:
// `alias Tenant tenancy.example.com/v1/Tenant cluster`.
const clusterKeyword = "cluster"

// declNode is `decl NAME for KIND { state { ... } action { ... } }`.
type declNode struct {
	Pos    Pos // of the keyword
	Name   ident
	Target ident // the kind after `for`; Name is "" when missing
	// Lbrace is the position of the opening brace.
	Lbrace Pos
	// States and Actions collect the entries of every state and action
	// block of the decl, in source order.
	States  []*stateNode
	Actions []*actionNode
	// Blocks are the state and action blocks in source order, for the
	// formatter.
	Blocks []*blockNode
	// End is the position of the closing brace.
	End Pos
}

// blockKind tells a state block from an action block.
type blockKind int

// The kinds of block in a decl.
const (
	stateBlock blockKind = iota + 1
	actionBlock
)

// blockNode is one `state { ... }` or `action { ... }` block of a decl.
type blockNode struct {
	Pos     Pos
	Kind    blockKind
	Lbrace  Pos           // of the opening brace
	States  []*stateNode  // for a stateBlock
	Actions []*actionNode // for an actionBlock
	End     Pos
}

// stateNode is `name Kind { selectors }` or `name []Kind { selectors }`.
type stateNode struct {
	Name ident
	// List is true for `[]Kind`.
	List bool
	Kind ident
	// Lbrace is the position of the opening brace of the body.
	Lbrace Pos
	// Selectors are the lines of the body, in source order.
	Selectors []*selectorNode
	End       Pos
}

// selectorKind is the kind of a selector line.
type selectorKind int

// The selector kinds of the language.
const (
	// selName is `name=VALUE`: get the object of that name.
	selName selectorKind = iota + 1
	// selLabels is `labels/KEY=VALUE`: list with a label requirement.
	selLabels
	// selFields is `fields/PATH=VALUE`: list with a field requirement,
	// served from a cache index.
	selFields
	// selOwned is `owned`: only objects controlled by the target.
	selOwned
	// selNamespace is `namespace=VALUE`: read the state in that
	// namespace instead of the target's.
	selNamespace
)

// String returns the keyword of the selector kind.
func (k selectorKind) String() string {
	switch k {
	case selName:
		return "name"
	case selLabels:
		return "labels"
	case selFields:
		return "fields"
	case selOwned:
		return "owned"
	case selNamespace:
		return "namespace"
	default:
		return fmt.Sprintf("selectorKind(%d)", int(k))
	}
}

// selectorNode is one selector line of a state.
type selectorNode struct {
	Pos  Pos
	Kind selectorKind
	// Key is the label key or the field path (for example
	// ".metadata.controller"); empty for name, namespace and owned.
	Key ident
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
func (sel *selectorNode) String() string {
	var b strings.Builder
	if sel.Kind == selLabels && sel.Op == LabelDoesNotExist {
		b.WriteByte('!')
	}
	b.WriteString(sel.Kind.String())
	if sel.Kind == selLabels || sel.Kind == selFields {
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
	case sel.Kind == selOwned:
	case sel.Kind == selLabels && (sel.Op == LabelExists || sel.Op == LabelDoesNotExist):
	case sel.Kind == selLabels && (sel.Op == LabelIn || sel.Op == LabelNotIn):
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
	case sel.Kind == selLabels && sel.Op == LabelNotEquals:
		b.WriteString("!=")
		b.WriteString(raw(sel.Value))
	default:
		b.WriteByte('=')
		b.WriteString(raw(sel.Value))
	}
	return b.String()
}

// actionNode is `Name(state, ...)`, optionally followed by the objects the
// action writes: `Name(state, ...) writes Kind(verb, ...), ...`.
type actionNode struct {
	Name   ident
	States []ident
	// Writes are the kinds the action writes, with the verbs, in source
	// order.
	Writes []*writeNode
	End    Pos // of the last closing parenthesis
}

// writesKeyword is the word between an action's states and the kinds it
// writes.
const writesKeyword = "writes"

// writeNode is `Kind(verb, ...)` after `writes`: the action writes objects of
// Kind with those API verbs (create, update, patch, delete,
// deletecollection).
type writeNode struct {
	Kind  ident
	Verbs []ident
	End   Pos // of the closing parenthesis
}

// splitGroupVersion splits "group/version" into its parts; a string
// without a slash is a core-group version.
func splitGroupVersion(gv string) (group, version string) {
	if i := strings.LastIndex(gv, "/"); i >= 0 {
		return gv[:i], gv[i+1:]
	}
	return "", gv
}
