package dsl

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
	// Labels and Fields are the label and field requirements, in source
	// order. Only list states have them.
	Labels []Requirement
	Fields []Requirement
	// Owned is true when the state keeps only objects controlled by the
	// target.
	Owned bool
}

// Requirement is one `labels/KEY=VALUE` or `fields/PATH=VALUE` selector.
type Requirement struct {
	Key   string
	Value *Value
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
}

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
