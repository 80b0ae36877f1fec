package gen

import (
	"embed"
	"fmt"
	"go/format"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/bosunkit/bosun/dsl"
)

// The templates of the generated code, one named template per piece: the
// file, the RBAC markers, and for each decl its action name constants, state
// type, getters, Impl interface, manager, action methods, field indexes and
// watches. A doc comment is a template of its own, named after the piece
// with ".doc" appended, that the doc function fills to docWidth.
//
//go:embed templates/*.tmpl
var templateFS embed.FS

// templates are the parsed templates. Their functions are bound to a
// generator by emit; the ones parsed here only give the parser their names.
var templates = template.Must(template.New("gen").Funcs((*generator)(nil).funcs(nil)).ParseFS(templateFS, "templates/*.tmpl"))

// funcs returns the functions the templates call, bound to g and to t, the
// templates being executed.
func (g *generator) funcs(t *template.Template) template.FuncMap {
	return template.FuncMap{
		// doc executes the named template with data and returns its text
		// as a doc comment (see fill).
		"doc": func(name string, data any) (string, error) {
			var b strings.Builder
			if err := t.ExecuteTemplate(&b, name, data); err != nil {
				return "", err
			}
			return fill(b.String()), nil
		},
		// sourceComment returns the document's own comment above pos as
		// lines of a doc comment after an empty one, each line preceded by
		// a newline; "" when there is none.
		"sourceComment": g.sourceComment,
		// goType and goListType return the Go type of an object, or of a
		// list, of a kind.
		"goType":     g.object,
		"goListType": g.list,
		// value returns a selector value of a state of a decl as a Go
		// string expression, with references read from the target
		// expression given.
		"value": g.value,
		// fieldString returns the field at a Go path in obj, an object of
		// a kind, as a Go string expression.
		"fieldString": func(obj string, k *dsl.Kind, goPath []string) string {
			return g.stringExpr(obj+"."+strings.Join(goPath, "."), k, goPath)
		},
		// selectors returns the selectors of a state as the document
		// wrote them.
		"selectors": selectorLines,
		"quote":     strconv.Quote,
		"join":      strings.Join,
	}
}

// file is what the "file" template writes.
type file struct {
	Header, Source, Package string
	// Imports are the import groups: the standard library, other modules,
	// this repository.
	Imports [][]importSpec
	// Body is the code after the imports.
	Body string
}

// body is what the "body" template writes.
type body struct {
	Rules []rbacRule
	Decls []*declInfo
}

// emit executes the templates for the planned decls and returns the gofmt'd
// file.
func (g *generator) emit(opts Options) ([]byte, error) {
	t, err := templates.Clone()
	if err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	t.Funcs(g.funcs(t))
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, "body", body{Rules: g.rbacRules(), Decls: g.decls}); err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	f := file{Header: Header, Source: opts.Source, Package: opts.Package, Body: b.String()}
	f.Imports = g.imports.usedBy(f.Body)
	b.Reset()
	if err := t.ExecuteTemplate(&b, "file", f); err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	src, err := format.Source([]byte(b.String()))
	if err != nil {
		return nil, fmt.Errorf("generate: format generated code: %w", err)
	}
	return src, nil
}

// object returns the Go type of an object of kind k, such as batchv1.Job.
func (g *generator) object(k *dsl.Kind) string { return g.imports.names[k.Package] + "." + k.Kind }

// list returns the Go type of a list of kind k, such as batchv1.JobList.
func (g *generator) list(k *dsl.Kind) string { return g.object(k) + "List" }

// stateType returns the Go type of a state's value: a slice of objects for
// a list state, a pointer to one otherwise.
func (g *generator) stateType(s *dsl.StateSpec) string {
	if s.List {
		return "[]" + g.object(s.Kind)
	}
	return "*" + g.object(s.Kind)
}

// fill returns text as the lines of a doc comment, without a final newline:
// its paragraphs (separated by blank lines) filled to lines of at most
// docWidth characters, except those indented with a tab, which are code and
// kept as they are.
func fill(text string) string {
	var b strings.Builder
	line := func(s string) {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("//")
		if s != "" {
			b.WriteString(" " + s)
		}
	}
	for i, para := range strings.Split(strings.TrimSpace(text), "\n\n") {
		if i > 0 {
			line("")
		}
		if strings.HasPrefix(para, "\t") {
			for l := range strings.SplitSeq(para, "\n") {
				line(l)
			}
			continue
		}
		filled := ""
		for _, word := range strings.Fields(para) {
			if filled != "" && len(filled)+1+len(word) > docWidth {
				line(filled)
				filled = ""
			}
			if filled != "" {
				filled += " "
			}
			filled += word
		}
		if filled != "" {
			line(filled)
		}
	}
	return b.String()
}

// docWidth is the width generated doc comments are filled to, without the
// comment marker.
const docWidth = 76

// sourceComment returns the document's own comment above pos, as written,
// for the end of a doc comment: each line preceded by a newline, the first
// one an empty comment line that separates it from the generated text; ""
// when there is none.
func (g *generator) sourceComment(pos dsl.Pos) string {
	lines := g.leadingComment(pos)
	if len(lines) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n//")
	for _, l := range lines {
		b.WriteString("\n//")
		if l != "" {
			b.WriteString(" " + l)
		}
	}
	return b.String()
}

// leadingComment returns the text of the comment lines directly above pos
// that start in pos's column: the document's own description of the
// element at pos.
func (g *generator) leadingComment(pos dsl.Pos) []string {
	if !pos.IsValid() {
		return nil
	}
	var lines []string
	for line := pos.Line - 1; line > 0; line-- {
		c, ok := g.comments[line]
		if !ok || c.Pos.Column != pos.Column {
			break
		}
		text := strings.TrimPrefix(c.Text, "//")
		text = strings.TrimPrefix(text, " ")
		lines = append(lines, strings.TrimRight(text, " \t"))
	}
	for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
		lines[i], lines[j] = lines[j], lines[i]
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// knownStrings are references whose Go type is string in every object type,
// because they name fields of metav1.ObjectMeta; other references are
// converted with string(...), since they may have a named string type.
var knownStrings = map[string]bool{
	"Name": true, "Namespace": true, "GenerateName": true, "ResourceVersion": true,
	"ObjectMeta.Name": true, "ObjectMeta.Namespace": true, "ObjectMeta.GenerateName": true, "ObjectMeta.ResourceVersion": true,
}

// stringExpr returns expr, the Go path goPath in an object of kind k, as a
// string: converted with string(...) unless it is known to be a string.
func (g *generator) stringExpr(expr string, k *dsl.Kind, goPath []string) string {
	if knownStrings[strings.Join(goPath, ".")] || g.types != nil && g.types.isPlainString(k.Package, k.Kind, goPath) {
		return expr
	}
	return "string(" + expr + ")"
}

// value returns a Go string expression for v, a value of a selector of a
// state of d, with references read from the target expression target.
func (g *generator) value(d *declInfo, v *dsl.Value, target string) string {
	if v == nil {
		return `""`
	}
	var parts []string
	for _, p := range v.Parts {
		if p.Ref == nil {
			if p.Lit != "" {
				parts = append(parts, strconv.Quote(p.Lit))
			}
			continue
		}
		parts = append(parts, g.stringExpr(target+"."+strings.Join(p.Ref, "."), d.Target, p.Ref))
	}
	if len(parts) == 0 {
		return `""`
	}
	return strings.Join(parts, " + ")
}

// selectorLines returns the selectors of a state as the document wrote them.
func selectorLines(s *dsl.StateSpec) []string {
	var lines []string
	for _, sel := range s.State.Selectors {
		raw := ""
		if sel.Value != nil {
			raw = sel.Value.Raw
		}
		switch sel.Kind {
		case dsl.NameSelector:
			lines = append(lines, "name="+raw)
		case dsl.LabelSelector, dsl.FieldSelector:
			lines = append(lines, sel.Kind.String()+"/"+sel.Key.Name+"="+raw)
		case dsl.OwnedSelector:
			lines = append(lines, "owned")
		}
	}
	return lines
}

// rbacRule is one kubebuilder RBAC marker.
type rbacRule struct {
	// Group is the API group, "" for the core group.
	Group, Resource string
	Verbs           []string
}

// rbacRules returns the RBAC rules for every kind the decls read and for
// the targets, one per group and resource, sorted by group and resource.
func (g *generator) rbacRules() []rbacRule {
	type key struct{ group, resource string }
	verbs := make(map[key]map[string]bool)
	add := func(group, resource string, vs ...string) {
		k := key{group, resource}
		if verbs[k] == nil {
			verbs[k] = make(map[string]bool)
		}
		for _, v := range vs {
			verbs[k][v] = true
		}
	}
	for _, d := range g.decls {
		t := d.Target
		add(t.Group, resourceName(t.Kind), "get", "list", "watch", "update", "patch")
		add(t.Group, resourceName(t.Kind)+"/status", "get", "update", "patch")
		// The API server's OwnerReferencesPermissionEnforcement admission
		// asks for it of a controller that sets blockOwnerDeletion on the
		// owner references of the target's children.
		add(t.Group, resourceName(t.Kind)+"/finalizers", "update")
		for _, s := range d.States {
			add(s.Spec.Kind.Group, resourceName(s.Spec.Kind.Kind), "get", "list", "watch")
		}
	}
	rules := make([]rbacRule, 0, len(verbs))
	for k, set := range verbs {
		r := rbacRule{Group: k.group, Resource: k.resource}
		for _, v := range []string{"get", "list", "watch", "update", "patch"} {
			if set[v] {
				r.Verbs = append(r.Verbs, v)
			}
		}
		rules = append(rules, r)
	}
	sort.Slice(rules, func(i, j int) bool {
		if rules[i].Group != rules[j].Group {
			return rules[i].Group < rules[j].Group
		}
		return rules[i].Resource < rules[j].Resource
	})
	return rules
}

// fieldIndex is one cache index a decl's states need.
type fieldIndex struct {
	// Decl is the decl whose states read the index.
	Decl *declInfo
	Kind *dsl.Kind
	Path string
	// GoPath is the field's Go path; empty for dsl.ControllerField.
	GoPath []string
	// Controller is true for dsl.ControllerField: the index holds the name
	// of the object's controller when it is of the target's kind.
	Controller bool
}

// indexes returns the field indexes of d's states, deduplicated by kind and
// path, in the order of their first use.
func (d *declInfo) indexes() []fieldIndex {
	seen := make(map[string]bool)
	var out []fieldIndex
	for _, s := range d.States {
		for _, f := range s.Spec.Fields {
			key := s.Spec.Kind.Package + "." + s.Spec.Kind.Kind + " " + f.Key
			if seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, fieldIndex{Decl: d, Kind: s.Spec.Kind, Path: f.Key, GoPath: f.GoPath, Controller: f.Key == dsl.ControllerField})
		}
	}
	return out
}

// watchedKind is a kind other than the target's that some states of a decl
// read, and how the decl watches it.
type watchedKind struct {
	Kind   *dsl.Kind
	States []*stateInfo
	// Owned is true when every state of the kind is owned: the kind is
	// watched with Owns.
	Owned bool
	// Match is, for a kind watched with a mapping handler, the Go
	// condition under which a state of the kind of the target t selects
	// the object o; "" when every target does.
	Match string
	// Controller is true when Match reads the name of o's controller from
	// the variables controller and hasController.
	Controller bool
}

// Mapped reports whether some kind d watches needs a mapping handler, which
// lists targets through the manager's client.
func (d *declInfo) Mapped() bool {
	for _, w := range d.Watched {
		if !w.Owned {
			return true
		}
	}
	return false
}

// watchedKinds returns the kinds of d's states other than the target's,
// sorted by package path and kind.
func (g *generator) watchedKinds(d *declInfo) []*watchedKind {
	byKey := make(map[string]*watchedKind)
	var out []*watchedKind
	t := d.Target
	for _, s := range d.States {
		k := s.Spec.Kind
		if k.Package == t.Package && k.Kind == t.Kind {
			continue
		}
		key := k.Package + "." + k.Kind
		w, ok := byKey[key]
		if !ok {
			w = &watchedKind{Kind: k, Owned: true}
			byKey[key] = w
			out = append(out, w)
		}
		w.States = append(w.States, s)
		w.Owned = w.Owned && s.Spec.Owned
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind.Package != out[j].Kind.Package {
			return out[i].Kind.Package < out[j].Kind.Package
		}
		return out[i].Kind.Kind < out[j].Kind.Kind
	})
	for _, w := range out {
		if !w.Owned {
			g.match(d, w)
		}
	}
	return out
}

// match sets w.Match and w.Controller: the condition is true when one of
// the states of w selects o for the target t, each state's condition being
// all of its selectors; it is empty when a state without selectors selects
// every object.
func (g *generator) match(d *declInfo, w *watchedKind) {
	var conds []string
	controller := false
	for _, s := range w.States {
		var parts []string
		if s.Spec.ObjectName != nil {
			parts = append(parts, "o.GetName() == "+g.value(d, s.Spec.ObjectName, "t"))
		}
		for _, r := range s.Spec.Labels {
			parts = append(parts, fmt.Sprintf("o.GetLabels()[%q] == %s", r.Key, g.value(d, r.Value, "t")))
		}
		for _, r := range s.Spec.Fields {
			if r.Key == dsl.ControllerField {
				controller = true
				parts = append(parts, "hasController && controller == "+g.value(d, r.Value, "t"))
			} else {
				parts = append(parts, g.stringExpr("o."+strings.Join(r.GoPath, "."), w.Kind, r.GoPath)+" == "+g.value(d, r.Value, "t"))
			}
		}
		if s.Spec.Owned {
			parts = append(parts, "metav1.IsControlledBy(o, t)")
		}
		if len(parts) == 0 {
			return
		}
		conds = append(conds, strings.Join(parts, " && "))
	}
	if len(conds) > 1 {
		for i := range conds {
			conds[i] = "(" + conds[i] + ")"
		}
	}
	w.Match = strings.Join(conds, " ||\n")
	w.Controller = controller
}
