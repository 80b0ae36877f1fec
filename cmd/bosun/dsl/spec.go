package dsl

import "fmt"

// Kind is a resolved kind: where its Go type lives and what it is called on
// the API server.
type Kind struct {
	// Name is the name the document uses for the kind: an alias or a
	// built-in kind name.
	Name string
	// Group, Version and Kind identify the kind on the API server; Group is
	// "" for the core group.
	Group, Version, Kind string
	// Package is the Go import path of the package holding the type, named
	// Kind, and its list type, named Kind+"List".
	Package string
	// Builtin is true for a built-in kind that no alias overrides.
	Builtin bool
	// Cluster is true for a cluster-scoped kind (Node, ClusterRole, or an
	// alias that ends with `cluster`); false for a namespaced one.
	Cluster bool
}

// Spec is a checked document, ready for a generator: every kind resolved,
// every name known to exist.
type Spec struct {
	// Filename is the file name the document was parsed with.
	Filename string
	// Comments are every comment of the document, in source order; a
	// generator may copy the ones above a decl, state or action into the
	// documentation of the code it makes for it.
	Comments []*Comment
	// Decls are the decls of the document, in source order.
	Decls []*DeclSpec
}

// DeclSpec is a checked decl.
type DeclSpec struct {
	// Pos is the position of the decl keyword, NamePos that of the decl's
	// name.
	Pos, NamePos Pos
	// Name is the decl's name, a Go identifier.
	Name string
	// Target is the kind after `for`.
	Target *Kind
	// States and Actions are the decl's states and actions, each in
	// source order.
	States  []*StateSpec
	Actions []*ActionSpec
	// node is the decl in the syntax tree.
	node *declNode
}

// StateSpec is a checked state.
type StateSpec struct {
	// Pos is the position of the state's name.
	Pos Pos
	// Name is the state's name, a Go identifier.
	Name string
	// Kind is the kind of the state's objects.
	Kind *Kind
	// List is true for a list state (`name []Kind`).
	List bool
	// Selectors are the selector lines of the state's body in source
	// order, in canonical form: no blanks around `=` and `!=`, and ", "
	// between the values of `in` and `notin`. For example
	// "name=${target.Name}-web", "namespace=kube-system",
	// "labels/tier in (web, db)", "!labels/paused", "owned".
	Selectors []string
	// ObjectName is the value of the name selector; nil when there is none.
	// Only single-object states have one, and they always do.
	ObjectName *Value
	// Scope says where the state's objects are read; Namespace is the
	// value of its namespace selector, set for NamespaceScope only.
	Scope     Scope
	Namespace *Value
	// Labels and Fields are the label and field requirements, in source
	// order. Only list states have them.
	Labels []Requirement
	Fields []Requirement
	// Owned is true when the state keeps only objects controlled by the
	// target.
	Owned bool
	// node is the state in the syntax tree.
	node *stateNode
}

// Scope says where a state's objects are read.
type Scope int

// The scopes of a state.
const (
	// TargetScope reads a namespaced kind in the target's namespace, the
	// default for a namespaced target.
	TargetScope Scope = iota
	// NamespaceScope reads a namespaced kind in the namespace of the
	// state's namespace selector: a constant, or a field of the target.
	NamespaceScope
	// ClusterScope reads a cluster-scoped kind.
	ClusterScope
	// AllNamespacesScope reads a namespaced kind in every namespace: a
	// list state without a namespace selector for a cluster-scoped target.
	AllNamespacesScope
)

// String returns a short name of the scope.
func (s Scope) String() string {
	switch s {
	case TargetScope:
		return "target namespace"
	case NamespaceScope:
		return "namespace"
	case ClusterScope:
		return "cluster"
	case AllNamespacesScope:
		return "all namespaces"
	default:
		return fmt.Sprintf("Scope(%d)", int(s))
	}
}

// Requirement is one `labels/...` or `fields/PATH=VALUE` selector.
type Requirement struct {
	// Pos is the position of the selector line.
	Pos Pos
	// Key is the label key, or the field path (".spec.nodeName").
	Key string
	// Op is the operator of a label requirement; always LabelEquals for a
	// field requirement.
	Op LabelOp
	// Value is the value of `=` and `!=`; nil for the other operators.
	Value *Value
	// Values are the values of `in` and `notin`.
	Values []*Value
	// GoPath is, for a field requirement, the Go field names the field path
	// resolves to in the state's type, filled in only when Check was given
	// Types. Empty for the virtual field ".metadata.controller" and for
	// label requirements.
	GoPath []string
}

// ActionSpec is a checked action.
type ActionSpec struct {
	// Pos is the position of the action's name.
	Pos Pos
	// Name is the action's name, a Go identifier.
	Name string
	// States are the states the action reads, in the order it names them.
	States []*StateSpec
	// Writes are the kinds the action writes and the verbs, in source
	// order, one entry per kind.
	Writes []WriteSpec
	// node is the action in the syntax tree.
	node *actionNode
}

// WriteSpec is a checked `Kind(verb, ...)` of an action's writes.
type WriteSpec struct {
	// Kind is the kind written.
	Kind *Kind
	// Verbs are the API verbs, in source order, without duplicates.
	Verbs []string
}

// writeVerbs are the verbs an action may declare it writes a kind with.
var writeVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}

// ControllerField is the virtual field path that a `fields/` selector may
// name: the name of the object's controller, when that controller is of
// the decl's target kind.
const ControllerField = ".metadata.controller"

// Types answers questions about the Go types of the kinds a document names.
// Check uses it, when given, to check `${target.Path}` references and
// `fields/` paths against real Go types.
type Types interface {
	// StringField returns nil if goPath, a chain of Go field names starting
	// at the type named typeName in the package pkgPath, ends at a field
	// whose underlying type is string, reached through structs (embedded
	// fields promote as in Go) without pointers, slices or maps.
	// Otherwise it returns an error that says why.
	StringField(pkgPath, typeName string, goPath []string) error
	// JSONField resolves jsonPath, the JSON field names of a fields/
	// selector without the leading dot (["spec", "nodeName"]), in the type
	// typeName of pkgPath, following `json:"..."` tags (embedded inline
	// structs included), to the Go field names of a string-kinded field
	// under the same rules as StringField.
	JSONField(pkgPath, typeName string, jsonPath []string) (goPath []string, err error)
}

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

// Comment is one `//` comment, from the slashes to the end of the line
// (without the newline).
type Comment struct {
	Pos  Pos
	Text string
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
