package dsl

import (
	"fmt"
	"strings"
)

// fakeTypes implements Types with maps of the valid paths, keyed by
// "PKG.TYPE:PATH" with PATH joined by dots.
type fakeTypes struct {
	strings map[string]bool     // Go field paths of string fields
	fields  map[string][]string // JSON paths to Go field paths
}

var _ Types = fakeTypes{}

func (f fakeTypes) StringField(pkgPath, typeName string, goPath []string) error {
	key := pkgPath + "." + typeName + ":" + strings.Join(goPath, ".")
	if !f.strings[key] {
		return fmt.Errorf("%s has no string field %s", typeName, strings.Join(goPath, "."))
	}
	return nil
}

func (f fakeTypes) JSONField(pkgPath, typeName string, jsonPath []string) ([]string, error) {
	key := pkgPath + "." + typeName + ":" + strings.Join(jsonPath, ".")
	goPath, ok := f.fields[key]
	if !ok {
		return nil, fmt.Errorf("%s has no string field at %s", typeName, strings.Join(jsonPath, "."))
	}
	return goPath, nil
}
