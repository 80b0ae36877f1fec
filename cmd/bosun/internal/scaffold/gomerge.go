package scaffold

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// goImport is one import of a Go file.
type goImport struct{ name, path string }

// appendGo renders the template tmpl, a Go file of the package of
// dir/path, and adds what it declares to the end of that file, and its
// imports to the file's: how bosun create webhook adds a webhook to a
// kind's webhook file without touching what is there. The imports are
// grouped as the templates group them: the standard library, other
// modules, bosun, the project (repo).
func appendGo(dir, path, tmpl, repo string, data any) error {
	part, err := execute(path, tmpl, data)
	if err != nil {
		return err
	}
	full := filepath.Join(dir, path)
	src, err := os.ReadFile(full)
	if err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return fmt.Errorf("scaffold: %s does not parse: %w", path, err)
	}
	pf, err := parser.ParseFile(fset, tmpl, part, parser.ParseComments)
	if err != nil {
		return fmt.Errorf("scaffold: template %s: %w", tmpl, err)
	}
	imports, err := importsOf(f)
	if err != nil {
		return err
	}
	partImports, err := importsOf(pf)
	if err != nil {
		return err
	}
	for _, imp := range partImports {
		if !slices.Contains(imports, imp) {
			imports = append(imports, imp)
		}
	}
	// The file up to its imports, the imports regrouped, the rest of the
	// file, then the part's declarations (with their comments), which
	// start after its imports.
	if err := checkImports(fset, f, path); err != nil {
		return err
	}
	start, end := importSpan(fset, f)
	_, partEnd := importSpan(fset, pf)
	var b bytes.Buffer
	b.Write(src[:start])
	b.WriteString(importBlock(imports, repo))
	b.Write(src[end:])
	b.WriteString("\n")
	b.Write(part[partEnd:])
	out, err := format.Source(b.Bytes())
	if err != nil {
		return fmt.Errorf("scaffold: formatting %s: %w", path, err)
	}
	return writeFile(dir, path, out)
}

// appendable refuses a Go file that appendGo cannot add to.
func appendable(dir, path string) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(dir, path), nil, parser.ParseComments)
	if err != nil {
		return fmt.Errorf("%w: %s does not parse: %w", ErrInvalid, path, err)
	}
	return checkImports(fset, f, path)
}

// checkImports refuses a file with comments among its imports, which
// appendGo, writing them anew, would lose.
func checkImports(fset *token.FileSet, f *ast.File, path string) error {
	_, end := importSpan(fset, f)
	for _, c := range f.Comments {
		if c.Pos() > f.Name.End() && fset.Position(c.Pos()).Offset < end {
			return fmt.Errorf("%w: %s has comments among its imports, which bosun cannot keep: move them", ErrInvalid, path)
		}
	}
	return nil
}

// importsOf returns the imports of f.
func importsOf(f *ast.File) ([]goImport, error) {
	var out []goImport
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			return nil, fmt.Errorf("scaffold: %w", err)
		}
		name := ""
		if imp.Name != nil {
			name = imp.Name.Name
		}
		out = append(out, goImport{name: name, path: p})
	}
	return out, nil
}

// importSpan returns the byte offsets of f's import declarations, from the
// first to the end of the last; an empty span after the package clause
// when it has none.
func importSpan(fset *token.FileSet, f *ast.File) (start, end int) {
	start = fset.Position(f.Name.End()).Offset
	end = start
	first := true
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.IMPORT {
			continue
		}
		if first {
			start, first = fset.Position(g.Pos()).Offset, false
		}
		end = fset.Position(g.End()).Offset
	}
	return start, end
}

// importBlock writes imports as one import declaration, in the groups of
// the templates: the standard library, other modules, bosun, the project.
func importBlock(imports []goImport, repo string) string {
	groups := make([][]string, 4)
	for _, imp := range imports {
		g := 1
		switch {
		case !strings.Contains(strings.SplitN(imp.path, "/", 2)[0], "."):
			g = 0
		case imp.path == repo || strings.HasPrefix(imp.path, repo+"/"):
			g = 3
		case imp.path == "github.com/bosunkit/bosun" || strings.HasPrefix(imp.path, "github.com/bosunkit/bosun/"):
			g = 2
		}
		line := strconv.Quote(imp.path)
		if imp.name != "" {
			line = imp.name + " " + line
		}
		groups[g] = append(groups[g], "\t"+line)
	}
	var parts []string
	for _, g := range groups {
		if len(g) > 0 {
			slices.SortFunc(g, func(a, b string) int { return strings.Compare(importPath(a), importPath(b)) })
			parts = append(parts, strings.Join(g, "\n"))
		}
	}
	return "\nimport (\n" + strings.Join(parts, "\n\n") + "\n)"
}

// importPath returns the quoted path of an import line, which gofmt sorts
// by.
func importPath(line string) string {
	return line[strings.Index(line, `"`):]
}
