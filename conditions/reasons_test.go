package conditions_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReasonsAreConstants keeps every condition and event reason of the
// module's code one that users can match by name: it parses each Go file
// that is not a test and fails on a reason written as a string literal (in
// a metav1.Condition or conditions.Error literal, as the reason of an
// Event, Eventf or AnnotatedEventf call or of any call that passes it
// after an event type, as the reason of conditions.Terminal, Warning,
// Terminalf or Warningf, or compared with a Reason field) and on an
// unexported constant named reason... or event... that holds one, outside
// a main package (whose names no other package can use). Such a reason
// belongs in an exported conditions.Reason constant of the package that
// gives it.
func TestReasonsAreConstants(t *testing.T) {
	root := moduleRoot(t)
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, line := range reasonFindings(fset, f) {
			found = append(found, filepath.ToSlash(rel)+":"+line)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Errorf("%d reasons users cannot match by name; declare each as an exported conditions.Reason constant of the package that gives it:\n  %s",
			len(found), strings.Join(found, "\n  "))
	}
}

// TestReasonFindings shows what TestReasonsAreConstants finds, and what it
// leaves alone.
func TestReasonFindings(t *testing.T) {
	const src = `package p

const (
	reasonBad         = "Bad"
	eventBad          = "BadEvent"
	reasonTyped conditions.Reason = ReasonGood
	ReasonGood conditions.Reason = "Good"
	eventBufferSize   = 10
	reasonable        = "not a reason"
)

func f(rec recorder, c metav1.Condition, reason conditions.Reason, typ string) {
	_ = metav1.Condition{Type: "Ready", Reason: "Literal"}
	_ = []metav1.Condition{{Type: "Ready", Reason: "InSlice"}, {Reason: string(ReasonGood)}}
	_ = &conditions.Error{Reason: "InError"}
	_ = metav1.Condition{Type: "Ready", Reason: string(reason), Message: "a message"}
	rec.Eventf(obj, nil, corev1.EventTypeNormal, "EventLiteral", "Create", "created %s", "x")
	rec.Eventf(obj, nil, typ, "EventByPlace", "Create", "note")
	rec.Event(obj, typ, "OldEvent", "message")
	rec.Eventf(obj, nil, corev1.EventTypeWarning, string(ReasonGood), "Create", "note")
	record(corev1.EventTypeWarning, "ThroughHelper", "note")
	_ = conditions.Terminalf("TerminalLiteral", "bad %s", "x")
	_ = conditions.Warning(ReasonGood, nil)
	_ = c.Reason == "Compared"
	_ = c.Reason != ""
	_ = c.Message == "not a reason"
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`4:2: unexported reason constant reasonBad`,
		`5:2: unexported reason constant eventBad`,
		`6:2: unexported reason constant reasonTyped`,
		`13:46: condition reason "Literal"`,
		`14:49: condition reason "InSlice"`,
		`15:32: condition reason "InError"`,
		`17:47: event reason "EventLiteral"`,
		`18:28: event reason "EventByPlace"`,
		`19:22: event reason "OldEvent"`,
		`21:34: event reason "ThroughHelper"`,
		`22:27: condition reason "TerminalLiteral"`,
		`24:18: condition reason "Compared"`,
	}
	if diff := cmp.Diff(want, reasonFindings(fset, f)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	main, err := parser.ParseFile(fset, "main.go", "package main\n\nconst reasonLocal conditions.Reason = \"Local\"\n", parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	if got := reasonFindings(fset, main); len(got) > 0 {
		t.Errorf("findings in a main package = %q, want none", got)
	}
}

// moduleRoot returns the directory of the module's go.mod, above the
// test's own.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// reasonFindings lists, as "LINE:COL: what", the reasons of f that are
// string literals or unexported constants.
func reasonFindings(fset *token.FileSet, f *ast.File) []string {
	var out []string
	add := func(n ast.Node, format string, args ...any) {
		p := fset.Position(n.Pos())
		out = append(out, fmt.Sprintf("%d:%d: ", p.Line, p.Column)+fmt.Sprintf(format, args...))
	}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST || f.Name.Name == "main" {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if isReasonName(n.Name) && (isReasonType(vs.Type) || i < len(vs.Values) && stringLit(vs.Values[i]) != "") {
					add(n, "unexported reason constant %s", n.Name)
				}
			}
		}
	}
	checkLit := func(lit *ast.CompositeLit) {
		for _, e := range lit.Elts {
			if kv, ok := e.(*ast.KeyValueExpr); ok && isIdent(kv.Key, "Reason") {
				if s := stringLit(kv.Value); s != "" {
					add(kv.Value, "condition reason %q", s)
				}
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			if isReasonCarrier(n.Type, f.Name.Name) {
				checkLit(n)
			}
			if at, ok := n.Type.(*ast.ArrayType); ok && isReasonCarrier(at.Elt, f.Name.Name) {
				for _, e := range n.Elts {
					if el, ok := e.(*ast.CompositeLit); ok && el.Type == nil {
						checkLit(el)
					}
				}
			}
		case *ast.CallExpr:
			if arg := eventReasonArg(n); arg != nil {
				if s := stringLit(arg); s != "" {
					add(arg, "event reason %q", s)
				}
			}
			if isErrorMaker(n.Fun, f.Name.Name) && len(n.Args) > 0 {
				if s := stringLit(n.Args[0]); s != "" {
					add(n.Args[0], "condition reason %q", s)
				}
			}
		case *ast.BinaryExpr:
			if n.Op != token.EQL && n.Op != token.NEQ {
				break
			}
			for _, pair := range [][2]ast.Expr{{n.X, n.Y}, {n.Y, n.X}} {
				if sel, ok := pair[0].(*ast.SelectorExpr); ok && sel.Sel.Name == "Reason" {
					if s := stringLit(pair[1]); s != "" {
						add(pair[1], "condition reason %q", s)
					}
				}
			}
		}
		return true
	})
	return out
}

// isReasonName reports whether name is an unexported reason... or
// event... followed by an upper-case letter.
func isReasonName(name string) bool {
	for _, prefix := range []string{"reason", "event"} {
		if rest, ok := strings.CutPrefix(name, prefix); ok && rest != "" && 'A' <= rest[0] && rest[0] <= 'Z' {
			return true
		}
	}
	return false
}

// isReasonType reports whether t is Reason or conditions.Reason.
func isReasonType(t ast.Expr) bool {
	return isIdent(t, "Reason") || isSelector(t, "conditions", "Reason")
}

// isReasonCarrier reports whether t is metav1.Condition or conditions.Error
// (Error in package conditions itself).
func isReasonCarrier(t ast.Expr, pkg string) bool {
	return isSelector(t, "metav1", "Condition") || isSelector(t, "conditions", "Error") || pkg == "conditions" && isIdent(t, "Error")
}

// isErrorMaker reports whether fun is conditions.Terminal, Warning,
// Terminalf or Warningf.
func isErrorMaker(fun ast.Expr, pkg string) bool {
	for _, name := range []string{"Terminal", "Warning", "Terminalf", "Warningf"} {
		if isSelector(fun, "conditions", name) || pkg == "conditions" && isIdent(fun, name) {
			return true
		}
	}
	return false
}

// eventReasonArg returns the reason argument of a call that records an
// event, or nil: the argument after an event type (corev1.EventTypeNormal,
// corev1.EventTypeWarning, "Normal" or "Warning") in any call, else the
// reason's place in a recorder's Event (third) or Eventf and
// AnnotatedEventf (fourth).
func eventReasonArg(c *ast.CallExpr) ast.Expr {
	for i, a := range c.Args[:max(len(c.Args)-1, 0)] {
		if isSelector(a, "corev1", "EventTypeNormal") || isSelector(a, "corev1", "EventTypeWarning") || stringLit(a) == "Normal" || stringLit(a) == "Warning" {
			return c.Args[i+1]
		}
	}
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	at := map[string]int{"Event": 2, "Eventf": 3, "AnnotatedEventf": 3}
	if i, ok := at[sel.Sel.Name]; ok && i < len(c.Args) {
		return c.Args[i]
	}
	return nil
}

// stringLit returns the value of a string literal, or "" for anything else.
func stringLit(e ast.Expr) string {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return ""
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		return ""
	}
	return s
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func isSelector(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	return ok && isIdent(sel.X, pkg) && sel.Sel.Name == name
}
