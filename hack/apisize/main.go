// Command apisize reports the size of bosun's library API against the goals
// of docs/API.md: the exported top-level names (types, functions, variables,
// constants) and exported methods and fields of each library package, the
// fields of Reconciler and the methods of Builder, the types whose methods
// are spread over several files, and the library functions over 80 lines.
// Condition and event reasons (constants declared of type conditions.Reason)
// are counted apart and judged by no goal: they are what users match, so
// every reason a package gives is exported whatever their number.
// Tests, generated files and the internal/, examples/, cmd/, hack/ and
// bench/ trees are not library code and are not counted.
//
//	go run ./hack/apisize [-root DIR] [-strict] [-names PKG]
//
// It prints a report and exits 0; with -strict it exits 1 when a goal is
// not met. `make verify` runs it as a report.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// rootPkg is how the report names the module's root package.
const rootPkg = "bosun"

// The goals the report checks.
const (
	goalRootNames     = 63
	goalTotalNames    = 460
	goalReconcilerFld = 10
	goalFuncLines     = 80
	goalMutualFiles   = 2
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "apisize:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fl := flag.NewFlagSet("apisize", flag.ContinueOnError)
	root := fl.String("root", ".", "the module's root directory")
	strict := fl.Bool("strict", false, "exit 1 when a goal is not met")
	names := fl.String("names", "", "list the exported names of this package (\"bosun\" for the root) and exit")
	doc := fl.String("doc", "", "also write the report into this markdown file, between its report markers")
	if err := fl.Parse(args); err != nil {
		return err
	}
	a, err := measure(*root)
	if err != nil {
		return err
	}
	if *names != "" {
		p := a.pkgs[*names]
		if p == nil {
			return fmt.Errorf("no library package %q", *names)
		}
		slices.Sort(p.list)
		fmt.Fprintln(out, strings.Join(p.list, "\n"))
		return nil
	}
	var buf bytes.Buffer
	missed := a.report(io.MultiWriter(out, &buf))
	if *doc != "" {
		if err := writeReport(*doc, buf.String()); err != nil {
			return err
		}
	}
	if *strict && missed > 0 {
		return fmt.Errorf("%d goals not met", missed)
	}
	return nil
}

// pkgSize is what one package exports.
type pkgSize struct {
	names, methods, fields int
	// reasons counts the exported constants of type conditions.Reason,
	// which names does not.
	reasons int
	// list holds each exported top-level name as "kind name".
	list []string
}

// longFunc is a library function over the goal's length.
type longFunc struct {
	pos   string
	name  string
	lines int
}

// api is what measure found.
type api struct {
	pkgs map[string]*pkgSize
	// structFields and typeMethods are per "pkg.Type": exported fields,
	// and the files that hold methods of the type.
	structFields map[string]int
	typeMethods  map[string]int
	methodFiles  map[string]map[string]bool
	long         []longFunc
	// ownWaits are library functions with a loop that waits on a timer of
	// its own (time.Sleep, After, NewTimer, NewTicker, Tick) rather than
	// through k8s.io/apimachinery/pkg/util/wait, unless their doc says why
	// with the word "apisize:own-wait".
	ownWaits []string
	// files are the parsed files of each package, for the file graph.
	files map[string]map[string]*ast.File
}

// skipDir reports whether the directory rel holds no library code.
func skipDir(rel string) bool {
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		switch part {
		case "internal", "testdata", "examples", "cmd", "hack", "bench", "vendor", "bin", "docs":
			return true
		}
		if strings.HasPrefix(part, ".") || strings.HasPrefix(part, "_") {
			return true
		}
	}
	return false
}

// measure walks the module under root.
func measure(root string) (*api, error) {
	a := &api{pkgs: map[string]*pkgSize{}, structFields: map[string]int{}, typeMethods: map[string]int{}, methodFiles: map[string]map[string]bool{}, files: map[string]map[string]*ast.File{}}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel != "." && skipDir(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "zz_generated") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return fmt.Errorf("parse %s: %w", rel, err)
		}
		if f.Name.Name == "main" || ast.IsGenerated(f) {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		if dir == "." {
			dir = rootPkg
		}
		a.file(fset, dir, filepath.ToSlash(rel), f)
		if a.files[dir] == nil {
			a.files[dir] = map[string]*ast.File{}
		}
		a.files[dir][filepath.Base(rel)] = f
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(a.pkgs) == 0 {
		return nil, errors.New("no library package found; run it from the module's root or pass -root")
	}
	return a, nil
}

// file counts the declarations of one file of package dir.
func (a *api) file(fset *token.FileSet, dir, rel string, f *ast.File) {
	p := a.pkgs[dir]
	if p == nil {
		p = &pkgSize{}
		a.pkgs[dir] = p
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			a.funcDecl(fset, p, dir, rel, d)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				a.spec(p, dir, s)
			}
		}
	}
}

// funcDecl counts a function or method, and notes it when it is long.
func (a *api) funcDecl(fset *token.FileSet, p *pkgSize, dir, rel string, d *ast.FuncDecl) {
	if d.Body != nil && loopWaits(d.Body) && (d.Doc == nil || !strings.Contains(d.Doc.Text(), "apisize:own-wait")) {
		a.ownWaits = append(a.ownWaits, fmt.Sprintf("%s:%d %s", rel, fset.Position(d.Pos()).Line, d.Name.Name))
	}
	if d.Body != nil {
		start := fset.Position(d.Pos()).Line
		if n := fset.Position(d.End()).Line - start + 1; n > goalFuncLines {
			a.long = append(a.long, longFunc{pos: fmt.Sprintf("%s:%d", rel, start), name: d.Name.Name, lines: n})
		}
	}
	if d.Recv == nil {
		if d.Name.IsExported() {
			p.names++
			p.list = append(p.list, "func "+d.Name.Name)
		}
		return
	}
	recv := recvName(d.Recv)
	if recv == "" {
		return
	}
	key := dir + "." + recv
	if a.methodFiles[key] == nil {
		a.methodFiles[key] = map[string]bool{}
	}
	a.methodFiles[key][rel] = true
	if d.Name.IsExported() && ast.IsExported(recv) {
		p.methods++
		a.typeMethods[key]++
	}
}

// spec counts a type, variable or constant.
func (a *api) spec(p *pkgSize, dir string, s ast.Spec) {
	switch s := s.(type) {
	case *ast.TypeSpec:
		if !s.Name.IsExported() {
			return
		}
		p.names++
		p.list = append(p.list, "type "+s.Name.Name)
		switch t := s.Type.(type) {
		case *ast.StructType:
			n := exportedNames(t.Fields)
			p.fields += n
			a.structFields[dir+"."+s.Name.Name] = n
		case *ast.InterfaceType:
			n := exportedNames(t.Methods)
			p.methods += n
			a.typeMethods[dir+"."+s.Name.Name] += n
		}
	case *ast.ValueSpec:
		reason := isReasonType(dir, s.Type)
		for _, n := range s.Names {
			switch {
			case !n.IsExported():
			case reason:
				p.reasons++
				p.list = append(p.list, "reason "+n.Name)
			default:
				p.names++
				p.list = append(p.list, "value "+n.Name)
			}
		}
	}
}

// reasonsPkg is the package that declares Reason, the type of condition
// and event reasons.
const reasonsPkg = "conditions"

// isReasonType reports whether t, the declared type of a value in package
// dir, is conditions.Reason.
func isReasonType(dir string, t ast.Expr) bool {
	switch t := t.(type) {
	case *ast.Ident:
		return dir == reasonsPkg && t.Name == "Reason"
	case *ast.SelectorExpr:
		x, ok := t.X.(*ast.Ident)
		return ok && x.Name == reasonsPkg && t.Sel.Name == "Reason"
	}
	return false
}

// exportedNames counts the exported names of a field list.
func exportedNames(fl *ast.FieldList) int {
	n := 0
	for _, f := range fl.List {
		for _, name := range f.Names {
			if name.IsExported() {
				n++
			}
		}
	}
	return n
}

// recvName returns the name of a method's receiver type.
func recvName(fl *ast.FieldList) string {
	if len(fl.List) == 0 {
		return ""
	}
	t := fl.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// report prints the report and returns how many goals were missed.
func (a *api) report(out io.Writer) int {
	dirs := make([]string, 0, len(a.pkgs))
	for d := range a.pkgs {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	fmt.Fprintf(out, "%-24s %6s %8s %7s %8s\n", "package", "names", "methods", "fields", "reasons")
	var total pkgSize
	for _, d := range dirs {
		p := a.pkgs[d]
		fmt.Fprintf(out, "%-24s %6d %8d %7d %8d\n", d, p.names, p.methods, p.fields, p.reasons)
		total.names += p.names
		total.methods += p.methods
		total.fields += p.fields
		total.reasons += p.reasons
	}
	fmt.Fprintf(out, "%-24s %6d %8d %7d %8d\n", "TOTAL", total.names, total.methods, total.fields, total.reasons)
	fmt.Fprintf(out, "reasons: %d, not counted (constants of type conditions.Reason are listed apart from names and judged by no goal)\n\n", total.reasons)

	var spread []string
	for key, files := range a.methodFiles {
		if len(files) > 1 {
			spread = append(spread, fmt.Sprintf("%s (%d files)", key, len(files)))
		}
	}
	slices.Sort(spread)
	root := 0
	if p := a.pkgs[rootPkg]; p != nil {
		root = p.names
	}
	missed := 0
	goal := func(what string, got, max int) {
		verdict := "met"
		if got > max {
			verdict, missed = "NOT MET", missed+1
		}
		fmt.Fprintf(out, "goal: %-44s %5d (<= %d) %s\n", what, got, max, verdict)
	}
	goal("exported names of the root package", root, goalRootNames)
	goal("exported names of all library packages", total.names, goalTotalNames)
	goal("fields of bosun.Reconciler", a.structFields[rootPkg+".Reconciler"], goalReconcilerFld)
	goal("types whose methods span several files", len(spread), 0)
	goal(fmt.Sprintf("library functions over %d lines", goalFuncLines), len(a.long), 0)
	mutual := a.mutualFiles()
	goal("loops that wait on a timer of their own", len(a.ownWaits), 0)
	rootMutual := 0
	for _, m := range mutual {
		if strings.HasPrefix(m, rootPkg+":") {
			rootMutual++
		}
	}
	goal("root file pairs that use each other", rootMutual, goalMutualFiles)
	fmt.Fprintf(out, "methods of bosun.Builder: %d\n", a.typeMethods[rootPkg+".Builder"])
	if len(spread) > 0 {
		fmt.Fprintf(out, "\ntypes whose methods span several files:\n  %s\n", strings.Join(spread, "\n  "))
	}
	if len(a.ownWaits) > 0 {
		slices.Sort(a.ownWaits)
		fmt.Fprintf(out, "\nloops that wait on a timer of their own (use k8s.io/apimachinery/pkg/util/wait, or say why with apisize:own-wait):\n  %s\n", strings.Join(a.ownWaits, "\n  "))
	}
	if len(mutual) > 0 {
		fmt.Fprintf(out, "\nfile pairs that use each other, in every package (one of the two uses runs back up the reading order):\n  %s\n", strings.Join(mutual, "\n  "))
	}
	if len(a.long) > 0 {
		fmt.Fprintf(out, "\nlibrary functions over %d lines:\n", goalFuncLines)
		slices.SortFunc(a.long, func(x, y longFunc) int { return strings.Compare(x.pos, y.pos) })
		for _, l := range a.long {
			fmt.Fprintf(out, "  %s %s %d lines\n", l.pos, l.name, l.lines)
		}
	}
	return missed
}

// mutualFiles lists the pairs of files of one package that each use a
// top-level name the other declares: whichever order a reader takes them
// in, one of the two refers back up. Names are resolved as the parser
// resolves them: a name bound in the file (a local, a parameter) is not a
// use of the package's.
func (a *api) mutualFiles() []string {
	var out []string
	for dir, files := range a.files {
		declared := map[string]string{}
		for name, f := range files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil {
						declared[d.Name.Name] = name
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							declared[s.Name.Name] = name
						case *ast.ValueSpec:
							for _, n := range s.Names {
								declared[n.Name] = name
							}
						}
					}
				}
			}
		}
		uses := map[[2]string]bool{}
		for name, f := range files {
			for _, id := range f.Unresolved {
				if other, ok := declared[id.Name]; ok && other != name {
					uses[[2]string{name, other}] = true
				}
			}
		}
		for u := range uses {
			if u[0] < u[1] && uses[[2]string{u[1], u[0]}] {
				out = append(out, fmt.Sprintf("%s: %s <-> %s", dir, u[0], u[1]))
			}
		}
	}
	slices.Sort(out)
	return out
}

// loopWaits reports whether body has a loop that waits on a timer of its
// own: a for or range loop that calls time.Sleep, After, NewTimer,
// NewTicker or Tick.
func loopWaits(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		var loop *ast.BlockStmt
		switch l := n.(type) {
		case *ast.ForStmt:
			loop = l.Body
		case *ast.RangeStmt:
			loop = l.Body
		default:
			return !found
		}
		ast.Inspect(loop, func(m ast.Node) bool {
			c, ok := m.(*ast.CallExpr)
			if !ok {
				return !found
			}
			sel, ok := c.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "time" {
				switch sel.Sel.Name {
				case "Sleep", "After", "NewTimer", "NewTicker", "Tick":
					found = true
				}
			}
			return !found
		})
		return !found
	})
	return found
}

// The markers between which -doc writes the report.
const (
	reportBegin = "<!-- apisize report: written by `go run ./hack/apisize -doc docs/API.md` (make apisize); do not edit -->"
	reportEnd   = "<!-- end of the apisize report -->"
)

// writeReport replaces what lies between the report markers of the
// markdown file path with report, in a code block.
func writeReport(path, report string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	text := string(data)
	i := strings.Index(text, reportBegin)
	j := strings.Index(text, reportEnd)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no report markers (%q, then %q)", path, reportBegin, reportEnd)
	}
	out := text[:i+len(reportBegin)] + "\n\n```\n" + strings.TrimRight(report, "\n") + "\n```\n\n" + text[j:]
	if out == text {
		return nil
	}
	return os.WriteFile(path, []byte(out), 0o644)
}
