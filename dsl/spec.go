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
	File  *File
	Decls []*DeclSpec
}

// DeclSpec is a checked decl.
type DeclSpec struct {
	Decl    *Decl
	Name    string
	Target  *Kind
	States  []*StateSpec
	Actions []*ActionSpec
}

// StateSpec is a checked state.
type StateSpec struct {
	State *State
	Name  string
	Kind  *Kind
	List  bool
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
	Action *Action
	Name   string
	States []*StateSpec
	// Writes are the kinds the action writes and the verbs, in source
	// order, one entry per kind.
	Writes []WriteSpec
}

// WriteSpec is a checked `Kind(verb, ...)` of an action's writes.
type WriteSpec struct {
	Kind *Kind
	// Verbs are the API verbs, in source order, without duplicates.
	Verbs []string
}

// WriteVerbs are the verbs an action may declare it writes a kind with.
var WriteVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}

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
