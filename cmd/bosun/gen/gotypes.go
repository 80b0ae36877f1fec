package gen

import (
	"errors"
	"fmt"
	"go/token"
	"go/types"
	"reflect"
	"strings"
	"sync"

	"golang.org/x/tools/go/packages"

	"github.com/bosunkit/bosun/cmd/bosun/dsl"
)

// ErrCannotLoad is wrapped by the errors of GoTypes when a Go package cannot
// be loaded or does not type-check.
var ErrCannotLoad = errors.New("cannot load")

// GoTypes answers dsl.Check's questions about Go types by loading the
// packages a document binds, with golang.org/x/tools/go/packages. Each
// package is loaded once, on first use, from the compiler's export data
// (no source is parsed), and kept. A GoTypes is safe for concurrent use.
type GoTypes struct {
	dir string

	mu   sync.Mutex
	pkgs map[string]*loadedPackage
}

// loadedPackage is the outcome of loading one package path.
type loadedPackage struct {
	once sync.Once
	pkg  *types.Package
	err  error
}

var _ dsl.Types = (*GoTypes)(nil)

// NewGoTypes returns a GoTypes that resolves import paths as the go command
// does in dir: within dir's module, with its go.mod requirements. An empty
// dir means the current directory.
func NewGoTypes(dir string) *GoTypes {
	return &GoTypes{dir: dir, pkgs: make(map[string]*loadedPackage)}
}

// loadMode is the least go/packages needs to produce go/types for a package:
// with NeedTypes and without NeedSyntax it reads the export data of the
// package, so neither the package nor its dependencies are parsed.
const loadMode = packages.NeedName | packages.NeedTypes

// load returns the type-checked package at pkgPath, loading it on first use.
func (g *GoTypes) load(pkgPath string) (*types.Package, error) {
	g.mu.Lock()
	lp, ok := g.pkgs[pkgPath]
	if !ok {
		lp = &loadedPackage{}
		g.pkgs[pkgPath] = lp
	}
	g.mu.Unlock()
	lp.once.Do(func() { lp.pkg, lp.err = g.loadUncached(pkgPath) })
	return lp.pkg, lp.err
}

func (g *GoTypes) loadUncached(pkgPath string) (*types.Package, error) {
	cfg := &packages.Config{Mode: loadMode, Dir: g.dir}
	pkgs, err := packages.Load(cfg, pkgPath)
	if err != nil {
		return nil, fmt.Errorf("package %s: %w: %w", pkgPath, ErrCannotLoad, err)
	}
	if len(pkgs) != 1 {
		return nil, fmt.Errorf("package %s: %w: the go command returned %d packages", pkgPath, ErrCannotLoad, len(pkgs))
	}
	p := pkgs[0]
	if len(p.Errors) > 0 {
		msgs := make([]string, len(p.Errors))
		for i, e := range p.Errors {
			msgs[i] = e.Msg
		}
		return nil, fmt.Errorf("package %s: %w: %s", pkgPath, ErrCannotLoad, strings.Join(msgs, "; "))
	}
	if p.Types == nil || !p.Types.Complete() {
		return nil, fmt.Errorf("package %s: %w: no type information", pkgPath, ErrCannotLoad)
	}
	return p.Types, nil
}

// namedStruct finds the struct type typeName in pkgPath.
func (g *GoTypes) namedStruct(pkgPath, typeName string) (*types.Package, *types.Struct, error) {
	pkg, err := g.load(pkgPath)
	if err != nil {
		return nil, nil, err
	}
	obj, ok := pkg.Scope().Lookup(typeName).(*types.TypeName)
	if !ok {
		return nil, nil, fmt.Errorf("package %s has no type %s", pkgPath, typeName)
	}
	st, ok := obj.Type().Underlying().(*types.Struct)
	if !ok {
		return nil, nil, fmt.Errorf("%s.%s is %s, not a struct", pkgPath, typeName, obj.Type().Underlying())
	}
	return pkg, st, nil
}

// StringField implements dsl.Types: it reports whether goPath leads from
// the type typeName of pkgPath through exported struct fields, without
// pointers, to a field whose underlying type is string.
func (g *GoTypes) StringField(pkgPath, typeName string, goPath []string) error {
	_, err := g.stringField(pkgPath, typeName, goPath)
	return err
}

// isPlainString reports whether goPath leads as StringField requires to a
// field of type string itself, which Go code may use as a string without a
// conversion.
func (g *GoTypes) isPlainString(pkgPath, typeName string, goPath []string) bool {
	t, err := g.stringField(pkgPath, typeName, goPath)
	return err == nil && types.Identical(t, types.Typ[types.String])
}

// stringField is StringField, returning the field's type.
func (g *GoTypes) stringField(pkgPath, typeName string, goPath []string) (types.Type, error) {
	if len(goPath) == 0 {
		return nil, errors.New("empty field path")
	}
	pkg, st, err := g.namedStruct(pkgPath, typeName)
	if err != nil {
		return nil, err
	}
	var t types.Type = st
	for i, name := range goPath {
		sofar := strings.Join(goPath[:i+1], ".")
		if !token.IsExported(name) {
			return nil, fmt.Errorf("%s field %s is not exported", typeName, sofar)
		}
		obj, _, indirect := types.LookupFieldOrMethod(t, false, pkg, name)
		field, ok := obj.(*types.Var)
		if !ok || !field.IsField() {
			return nil, fmt.Errorf("%s has no field %s", typeName, sofar)
		}
		if indirect {
			return nil, fmt.Errorf("%s field %s is promoted through an embedded pointer; a reference cannot go through pointers", typeName, sofar)
		}
		t = field.Type()
		if i < len(goPath)-1 {
			if _, ok := t.Underlying().(*types.Struct); !ok {
				return nil, fmt.Errorf("%s is %s, not a struct; a reference goes through struct fields only", sofar, typeString(t, pkg))
			}
		}
	}
	if !isString(t) {
		return nil, fmt.Errorf("%s is %s, not a string", strings.Join(goPath, "."), typeString(t, pkg))
	}
	return t, nil
}

// JSONField implements dsl.Types: it follows the JSON names of jsonPath
// from the type typeName of pkgPath, as encoding/json does (a field's
// name is its json tag's name, or the Go name without one; embedded structs
// without a tag name are inlined), and returns the Go field names of the
// string-kinded field it ends at.
func (g *GoTypes) JSONField(pkgPath, typeName string, jsonPath []string) ([]string, error) {
	if len(jsonPath) == 0 {
		return nil, errors.New("empty field path")
	}
	pkg, st, err := g.namedStruct(pkgPath, typeName)
	if err != nil {
		return nil, err
	}
	var goPath []string
	for i, name := range jsonPath {
		sofar := "." + strings.Join(jsonPath[:i+1], ".")
		names, field, found, viaPointer := jsonLookup(st, name)
		if !found {
			return nil, fmt.Errorf("%s has no JSON field %s", typeName, sofar)
		}
		if viaPointer {
			return nil, fmt.Errorf("%s field %s is inlined through an embedded pointer; a field selector cannot go through pointers", typeName, sofar)
		}
		goPath = append(goPath, names...)
		t := field.Type()
		if i == len(jsonPath)-1 {
			if !isString(t) {
				return nil, fmt.Errorf("%s is %s, not a string", sofar, typeString(t, pkg))
			}
			return goPath, nil
		}
		next, ok := t.Underlying().(*types.Struct)
		if !ok {
			return nil, fmt.Errorf("%s is %s, not a struct; a field selector goes through struct fields only", sofar, typeString(t, pkg))
		}
		st = next
	}
	return goPath, nil
}

// jsonLookup finds the field with JSON name name in st: first among its own
// named fields, then, depth first in declaration order, in the embedded
// structs encoding/json inlines. It returns the Go field names from st to
// the field and whether an inlined embedded pointer was crossed.
func jsonLookup(st *types.Struct, name string) (goNames []string, field *types.Var, found, viaPointer bool) {
	var inline []*types.Var
	for i := range st.NumFields() {
		f := st.Field(i)
		tag, hasTag := reflect.StructTag(st.Tag(i)).Lookup("json")
		if tag == "-" {
			continue
		}
		tagName, _, _ := strings.Cut(tag, ",")
		if f.Embedded() && tagName == "" {
			inline = append(inline, f)
			continue
		}
		if !f.Exported() {
			continue
		}
		jsonName := f.Name()
		if hasTag && tagName != "" {
			jsonName = tagName
		}
		if jsonName == name {
			return []string{f.Name()}, f, true, false
		}
	}
	for _, f := range inline {
		t := f.Type()
		ptr := false
		if p, ok := t.Underlying().(*types.Pointer); ok {
			t, ptr = p.Elem(), true
		}
		inner, ok := t.Underlying().(*types.Struct)
		if !ok {
			continue
		}
		names, ff, ok, viaPtr := jsonLookup(inner, name)
		if ok {
			return append([]string{f.Name()}, names...), ff, true, ptr || viaPtr
		}
	}
	return nil, nil, false, false
}

// isString reports whether t's underlying type is string.
func isString(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsString != 0
}

// typeString writes t with package names, leaving out pkg's own.
func typeString(t types.Type, pkg *types.Package) string {
	return types.TypeString(t, func(p *types.Package) string {
		if p == pkg {
			return ""
		}
		return p.Name()
	})
}
