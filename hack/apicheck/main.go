// Command apicheck compares the exported API of bosun's library packages
// with the record of it in docs/API.txt, so that an incompatible change is
// a decision, named in CHANGELOG.md, and never an accident.
//
//	go run ./hack/apicheck [-root DIR] [-write]
//
// The record holds one line per exported declaration: a constant with its
// type and value, a variable with its type, a function with its signature,
// a type with its type parameters and underlying type (an interface with
// its whole method set), each exported field of a struct and each exported
// method. A line of the record that the code no longer has is an
// incompatible change: a name removed or renamed, a signature, field type
// or constant value changed, an interface given another method set. A new
// line is a compatible addition.
//
// Without -write it exits 1 when the code differs from the record in any
// way, printing the incompatible changes apart from the additions. With
// -write it records the code's API, but refuses while an incompatible
// change is not named in the section "## Unreleased" of CHANGELOG.md (as pkg.Name
// for a package-level name, pkg.Type.Member for a field or method, with
// no other part of a Go name beside it). `make verify` runs the check and
// `make api` the write. Not seen: the exported methods and fields of an
// unexported type that an exported function returns, and the type set of
// an unexported constraint named in a type parameter list.
//
// The library packages are those of the module outside the internal/,
// testdata/, examples/, cmd/, hack/ and bench/ trees, main packages aside.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"go/types"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

// recordHeader opens the record.
const recordHeader = `# The exported API of bosun's library packages, one declaration a line.
# Written by "make api" (go run ./hack/apicheck -write); "make verify" fails
# when the code differs. A line removed or changed is an incompatible change,
# recorded only once CHANGELOG.md names it.
`

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "apicheck:", err)
		os.Exit(1)
	}
}

// errDiffers is run's answer when the code's API differs from the record.
var errDiffers = errors.New(`the exported API differs from docs/API.txt: run "make api" to record it (an incompatible change must be named in CHANGELOG.md first)`)

func run(args []string, out io.Writer) error {
	fl := flag.NewFlagSet("apicheck", flag.ContinueOnError)
	root := fl.String("root", ".", "the module's root directory")
	write := fl.Bool("write", false, "record the code's API in the record")
	record := fl.String("record", "docs/API.txt", "the record, relative to the root")
	changelog := fl.String("changelog", "CHANGELOG.md", "the changelog, relative to the root")
	if err := fl.Parse(args); err != nil {
		return err
	}
	pkgs, err := load(*root)
	if err != nil {
		return err
	}
	now := describe(pkgs)
	recPath := filepath.Join(*root, *record)
	was, err := readRecord(recPath)
	// A first record starts from none.
	if err != nil && (!errors.Is(err, os.ErrNotExist) || !*write) {
		return err
	}
	removed, added := compare(was, now)
	if *write {
		notes, err := os.ReadFile(filepath.Join(*root, *changelog))
		if err != nil {
			return err
		}
		if missing := unnamed(removed, now, string(notes), modulePath(pkgs)); len(missing) > 0 {
			fmt.Fprintf(out, "incompatible changes that %s does not name:\n", *changelog)
			for _, d := range missing {
				fmt.Fprintf(out, "  %s (name %s)\n", d, keyOf(d))
			}
			return fmt.Errorf("%d incompatible changes are not named in %s", len(missing), *changelog)
		}
		return writeRecord(recPath, now)
	}
	if len(removed) == 0 && len(added) == 0 {
		fmt.Fprintf(out, "the exported API matches %s: %d declarations\n", *record, len(now))
		return nil
	}
	if len(removed) > 0 {
		fmt.Fprintf(out, "incompatible changes (lines of %s the code no longer has):\n", *record)
		for _, d := range removed {
			fmt.Fprintf(out, "  - %s\n", d)
		}
	}
	if len(added) > 0 {
		fmt.Fprintln(out, "additions:")
		for _, d := range added {
			fmt.Fprintf(out, "  + %s\n", d)
		}
	}
	return errDiffers
}

// load type-checks the library packages of the module under root.
func load(root string) ([]*packages.Package, error) {
	cfg := &packages.Config{Dir: root, Mode: packages.NeedName | packages.NeedTypes | packages.NeedModule}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		return nil, fmt.Errorf("loading the packages: %w", err)
	}
	var out []*packages.Package
	var errs []error
	for _, p := range pkgs {
		if p.Name == "main" || p.Module == nil || !library(strings.TrimPrefix(p.PkgPath, p.Module.Path)) {
			continue
		}
		for _, e := range p.Errors {
			errs = append(errs, e)
		}
		out = append(out, p)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("loading the packages: %w", errors.Join(errs...))
	}
	slices.SortFunc(out, func(a, b *packages.Package) int { return strings.Compare(a.PkgPath, b.PkgPath) })
	return out, nil
}

// library reports whether rel, a package's path within its module
// ("" or "/children"), is library code.
func library(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		switch part {
		case "internal", "testdata", "examples", "cmd", "hack", "bench":
			return false
		}
	}
	return true
}

// describe lists the exported declarations of pkgs, sorted by line.
func describe(pkgs []*packages.Package) []string {
	var out []string
	for _, p := range pkgs {
		out = append(out, describePackage(p.Types, p.Module.Path)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// describePackage lists the exported declarations of pkg, a package of
// the module module.
func describePackage(pkg *types.Package, module string) []string {
	name := pkgLabel(pkg, module)
	qual := qualifier(pkg, module)
	prefix := "pkg " + name + ", "
	var out []string
	add := func(format string, a ...any) {
		line := prefix + fmt.Sprintf(format, a...)
		out = append(out, line)
	}
	scope := pkg.Scope()
	for _, n := range scope.Names() {
		obj := scope.Lookup(n)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.Const:
			add("const %s %s = %s", n, types.TypeString(o.Type(), qual), o.Val().ExactString())
		case *types.Var:
			add("var %s %s", n, types.TypeString(o.Type(), qual))
		case *types.Func:
			add("func %s%s", n, signature(o.Type().(*types.Signature), qual))
		case *types.TypeName:
			describeType(o, qual, add)
		}
	}
	return out
}

// describeType adds the lines of a type: the type itself, the exported
// fields of a struct and the exported methods.
func describeType(o *types.TypeName, qual types.Qualifier, add func(format string, a ...any)) {
	n := o.Name()
	if o.IsAlias() {
		add("type %s = %s", n, types.TypeString(types.Unalias(o.Type()), qual))
		return
	}
	named, ok := o.Type().(*types.Named)
	if !ok {
		add("type %s %s", n, types.TypeString(o.Type().Underlying(), qual))
		return
	}
	head := n + typeParams(named.TypeParams(), qual)
	switch u := named.Underlying().(type) {
	case *types.Struct:
		add("type %s struct", head)
		for i := range u.NumFields() {
			f := u.Field(i)
			if !f.Exported() {
				continue
			}
			if f.Embedded() {
				add("type %s struct, embedded %s", head, types.TypeString(f.Type(), qual))
				continue
			}
			add("type %s struct, %s %s", head, f.Name(), types.TypeString(f.Type(), qual))
		}
		promotedFields(u, head, qual, add, map[*types.Struct]bool{})
	case *types.Interface:
		add("type %s interface { %s }", head, methodSet(u, qual))
	default:
		add("type %s %s", head, types.TypeString(u, qual))
	}
	// The exported methods declared on the type, and those promoted from
	// an embedded field of an unexported type, which have no line of their
	// own; promoted from an exported type, they are that type's.
	value := types.NewMethodSet(named)
	ptrSet := types.NewMethodSet(types.NewPointer(named))
	for i := range ptrSet.Len() {
		sel := ptrSet.At(i)
		m := sel.Obj().(*types.Func)
		if !m.Exported() || (len(sel.Index()) > 1 && !viaUnexported(named, sel.Index())) {
			continue
		}
		recv := n
		if value.Lookup(m.Pkg(), m.Name()) == nil {
			recv = "*" + n
		}
		add("method (%s) %s%s", recv, m.Name(), signature(m.Type().(*types.Signature), qual))
	}
}

// promotedFields adds the exported fields that st's embedded fields of
// unexported struct types promote, as fields of the type head.
func promotedFields(st *types.Struct, head string, qual types.Qualifier, add func(format string, a ...any), seen map[*types.Struct]bool) {
	if seen[st] {
		return
	}
	seen[st] = true
	for i := range st.NumFields() {
		f := st.Field(i)
		if !f.Embedded() {
			continue
		}
		t := f.Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		n, ok := t.(*types.Named)
		if !ok || n.Obj().Exported() {
			continue
		}
		inner, ok := n.Underlying().(*types.Struct)
		if !ok {
			continue
		}
		for j := range inner.NumFields() {
			g := inner.Field(j)
			if g.Exported() && !g.Embedded() {
				add("type %s struct, %s %s", head, g.Name(), types.TypeString(g.Type(), qual))
			}
		}
		promotedFields(inner, head, qual, add, seen)
	}
}

// viaUnexported reports whether the path index, from named through its
// embedded fields to a promoted method, starts at a field of an unexported
// type.
func viaUnexported(named *types.Named, index []int) bool {
	st, ok := named.Underlying().(*types.Struct)
	if !ok || index[0] >= st.NumFields() {
		return false
	}
	t := st.Field(index[0]).Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && !n.Obj().Exported()
}

// methodSet writes an interface's methods and embedded constraints, in
// order; an interface with unexported methods, which no other package can
// implement, says so.
func methodSet(u *types.Interface, qual types.Qualifier) string {
	var parts []string
	unexported := false
	for i := range u.NumMethods() {
		m := u.Method(i)
		if !m.Exported() {
			unexported = true
			continue
		}
		parts = append(parts, m.Name()+signature(m.Type().(*types.Signature), qual))
	}
	slices.Sort(parts)
	for i := range u.NumEmbeddeds() {
		// A constraint's type set: its terms and the constraints it
		// embeds, an unexported one spelled out, since it has no line of
		// its own.
		e := u.EmbeddedType(i)
		if n, ok := e.(*types.Named); ok && !n.Obj().Exported() {
			e = n.Underlying()
		}
		parts = append(parts, types.TypeString(e, qual))
	}
	if unexported {
		parts = append(parts, "unexported methods")
	}
	return strings.Join(parts, "; ")
}

// signature writes a function's type parameters, parameters and results.
func signature(sig *types.Signature, qual types.Qualifier) string {
	return strings.TrimPrefix(types.TypeString(sig, qual), "func")
}

// typeParams writes a list of type parameters with their constraints.
func typeParams(tps *types.TypeParamList, qual types.Qualifier) string {
	if tps.Len() == 0 {
		return ""
	}
	parts := make([]string, tps.Len())
	for i := range tps.Len() {
		tp := tps.At(i)
		parts[i] = tp.Obj().Name() + " " + types.TypeString(tp.Constraint(), qual)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// pkgLabel names pkg in the record: its path within the module ("bosun"
// for the root), its name for a package of the standard library, its
// import path for another module's.
func pkgLabel(pkg *types.Package, module string) string {
	switch rel, ok := strings.CutPrefix(pkg.Path(), module); {
	case !ok && !strings.Contains(strings.Split(pkg.Path(), "/")[0], "."):
		return pkg.Name()
	case !ok:
		return pkg.Path()
	case rel == "":
		return pkg.Name()
	default:
		return strings.TrimPrefix(rel, "/")
	}
}

// qualifier names other packages in types as pkgLabel does, and leaves
// pkg's own names bare.
func qualifier(pkg *types.Package, module string) types.Qualifier {
	return func(p *types.Package) string {
		if p == pkg {
			return ""
		}
		return pkgLabel(p, module)
	}
}

// compare returns the declarations of was that now lacks, and those of
// now that was lacks. Both are sorted by line.
func compare(was, now []string) (removed, added []string) {
	in := func(ds []string) map[string]bool {
		m := make(map[string]bool, len(ds))
		for _, d := range ds {
			m[d] = true
		}
		return m
	}
	wasSet, nowSet := in(was), in(now)
	for _, d := range was {
		if !nowSet[d] {
			removed = append(removed, d)
		}
	}
	for _, d := range now {
		if !wasSet[d] {
			added = append(added, d)
		}
	}
	return removed, added
}

// unnamed returns the declarations of removed whose names the unreleased
// section of notes, a changelog, does not mention as a whole name. A
// package that is no longer in the code (now), the module's root package
// aside, may instead be named by its import path, quoted as code.
func unnamed(removed, now []string, notes, module string) []string {
	notes = unreleased(notes)
	present := map[string]bool{}
	for _, d := range now {
		present[packageOf(d)] = true
	}
	var out []string
	for _, d := range removed {
		if key := keyOf(d); key != "" && mentions(notes, key) {
			continue
		}
		// A package that left the module as a whole is named by its
		// import path, quoted as code; a package that stays is not.
		if pkg := packageOf(d); pkg != "" && !present[pkg] && importPath(module, pkg) != module &&
			strings.Contains(notes, "`"+importPath(module, pkg)+"`") {
			continue
		}
		out = append(out, d)
	}
	return out
}

// packageOf returns the package of a line of the record, as the record
// writes it ("bosun", "bosuntest/unit"); "" for a line it cannot read.
func packageOf(line string) string {
	pkg, _, _ := splitLine(line)
	return pkg
}

// splitLine splits a line of the record, "pkg PKG, DECL", into PKG and
// DECL; ok is false for a line it cannot read.
func splitLine(line string) (pkg, decl string, ok bool) {
	rest, ok := strings.CutPrefix(line, "pkg ")
	if !ok {
		return "", "", false
	}
	return strings.Cut(rest, ", ")
}

// importPath returns the import path of a package the record names pkg in
// the module at path module: the module's own for its root package, whose
// record name is the last element of the module path.
func importPath(module, pkg string) string {
	if pkg == module[strings.LastIndex(module, "/")+1:] {
		return module
	}
	return module + "/" + pkg
}

// modulePath returns the path of the module the packages come from.
func modulePath(pkgs []*packages.Package) string {
	for _, p := range pkgs {
		return p.Module.Path
	}
	return ""
}

// unreleased returns the section of a changelog under its heading
// "## Unreleased", up to the next "## " heading; nothing when it has none.
func unreleased(notes string) string {
	start := strings.Index("\n"+notes, "\n## Unreleased")
	if start < 0 {
		return ""
	}
	rest := notes[start:]
	if end := strings.Index(rest[1:], "\n## "); end >= 0 {
		return rest[:end+1]
	}
	return rest
}

// mentions reports whether text holds name with no other part of a Go
// name on either side: lib.Old is not mentioned by lib.OldStyle, nor by
// mylib.Old, but is at the end of a sentence.
func mentions(text, name string) bool {
	part := func(c byte) bool {
		return c == '_' || c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	after := func(end int) bool {
		switch {
		case end == len(text):
			return true
		case text[end] == '.':
			// A full stop, not a selector.
			return end+1 == len(text) || !part(text[end+1])
		default:
			return !part(text[end])
		}
	}
	for i := 0; ; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return false
		}
		start := i + j
		if (start == 0 || !part(text[start-1])) && after(start+len(name)) {
			return true
		}
		i = start + 1
	}
}

// readRecord reads the record at path.
func readRecord(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return out, nil
}

// keyOf returns the name a changelog gives the declaration of a line of
// the record: pkg.Name for a package-level name, pkg.Type.Member for a
// field or method. It returns "" for a line it cannot read.
func keyOf(line string) string {
	pkg, rest, ok := splitLine(line)
	if !ok {
		return ""
	}
	pkg = pkg[strings.LastIndex(pkg, "/")+1:]
	kind, rest, _ := strings.Cut(rest, " ")
	ident := func(s string) string {
		end := strings.IndexFunc(s, func(r rune) bool { return r == ' ' || r == '[' || r == '(' })
		if end < 0 {
			return s
		}
		return s[:end]
	}
	switch kind {
	case "const", "var", "func":
		return pkg + "." + ident(rest)
	case "type":
		typ := ident(rest)
		if _, member, ok := strings.Cut(rest, " struct, "); ok {
			if emb, ok := strings.CutPrefix(member, "embedded "); ok {
				emb = strings.TrimPrefix(emb, "*")
				if i := strings.IndexByte(emb, '['); i >= 0 {
					emb = emb[:i]
				}
				return pkg + "." + typ + "." + ident(emb[strings.LastIndex(emb, ".")+1:])
			}
			return pkg + "." + typ + "." + ident(member)
		}
		return pkg + "." + typ
	case "method":
		recv, m, ok := strings.Cut(rest, ") ")
		if !ok {
			return ""
		}
		return pkg + "." + strings.TrimPrefix(strings.TrimPrefix(recv, "("), "*") + "." + ident(m)
	}
	return ""
}

// writeRecord writes ds to path, after the header.
func writeRecord(path string, ds []string) error {
	var b strings.Builder
	b.WriteString(recordHeader)
	for _, d := range ds {
		b.WriteString(d)
		b.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
