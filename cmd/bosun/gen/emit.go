package gen

import (
	"embed"
	"fmt"
	"go/format"
	"go/token"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/bosunkit/bosun/cmd/bosun/dsl"
)

// The templates of the generated code, one named template per piece: the
// file, the RBAC markers, and for each decl its action name constants, state
// type, getters, Impl interface, steps, field indexes and watches. A doc comment is a template of its own, named after the piece
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
		// selectors returns the selectors of a state as the document
		// wrote them.
		"selectors": selectorLines,
		// namespace returns the Go expression of the namespace a state
		// is read in, for the target expression given; "" for a
		// cluster-scoped state and one read in every namespace.
		"namespace": g.namespace,
		// setBased reports whether a state has a label requirement
		// other than equality.
		"setBased": setBased,
		// labelOp returns the selection operator of a label requirement.
		"labelOp": labelOp,
		// labelValues returns the values of a label requirement as a Go
		// []string expression, nil for none.
		"labelValues": g.labelValues,
		// where says in words where a state's objects are read.
		"where": where,
		"quote": strconv.Quote,
		"join":  strings.Join,
		// stepRules returns the RBAC rules a decl's steps declare.
		"stepRules": stepRules,
		// quoteAll returns strings as the elements of a Go []string
		// literal.
		"quoteAll": func(ss []string) string {
			q := make([]string, len(ss))
			for i, s := range ss {
				q[i] = strconv.Quote(s)
			}
			return strings.Join(q, ", ")
		},
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
	f := file{Header: header, Source: opts.Source, Package: opts.Package, Body: b.String()}
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

// selectorLines returns the selectors of a state that select among the
// objects where the state reads, as the document wrote them.
func selectorLines(s *dsl.StateSpec) []string {
	var lines []string
	for _, sel := range s.Selectors {
		if !strings.HasPrefix(sel, "namespace=") {
			lines = append(lines, sel)
		}
	}
	return lines
}

// where says in words where the objects of a state are read.
func where(s *dsl.StateSpec) string {
	switch s.Scope {
	case dsl.NamespaceScope:
		return "in the namespace " + s.Namespace.Raw
	case dsl.ClusterScope:
		return "in the cluster (the kind is cluster-scoped)"
	case dsl.AllNamespacesScope:
		return "in every namespace"
	default:
		return "in the target's namespace"
	}
}

// namespace returns the Go expression of the namespace the state s reads
// in, for the target expression target; "" when s reads no one namespace.
func (g *generator) namespace(s *stateInfo, target string) string {
	switch s.Spec.Scope {
	case dsl.TargetScope:
		return target + ".GetNamespace()"
	case dsl.NamespaceScope:
		return g.value(s.Decl, s.Spec.Namespace, target)
	default:
		return ""
	}
}

// setBased reports whether s has a label requirement other than equality.
func setBased(s *dsl.StateSpec) bool {
	for _, r := range s.Labels {
		if r.Op != dsl.LabelEquals {
			return true
		}
	}
	return false
}

// labelOp returns the selection operator of a label requirement, as Go.
func labelOp(r dsl.Requirement) string {
	switch r.Op {
	case dsl.LabelNotEquals:
		return "selection.NotEquals"
	case dsl.LabelIn:
		return "selection.In"
	case dsl.LabelNotIn:
		return "selection.NotIn"
	case dsl.LabelExists:
		return "selection.Exists"
	case dsl.LabelDoesNotExist:
		return "selection.DoesNotExist"
	default:
		return "selection.Equals"
	}
}

// labelValues returns the values of r, read from the target expression
// target, as a Go []string expression; nil when r has none.
func (g *generator) labelValues(d *declInfo, r dsl.Requirement, target string) string {
	values := r.Values
	if r.Value != nil {
		values = []*dsl.Value{r.Value}
	}
	if len(values) == 0 {
		return "nil"
	}
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = g.value(d, v, target)
	}
	return "[]string{" + strings.Join(parts, ", ") + "}"
}

// rbacRule is one kubebuilder RBAC marker.
type rbacRule struct {
	// Group is the API group, "" for the core group.
	Group, Resource string
	Verbs           []string
}

// rbacVerbs are the verbs of RBAC markers, in the order markers list them.
var rbacVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

// rbacRules returns the RBAC rules for every kind the decls read, the kinds
// their actions write with the verbs the document gives, the targets, and
// what the engine that runs the generated steps needs, one per group and
// resource, sorted by group and resource.
func (g *generator) rbacRules() []rbacRule { return rbacRulesOf(g.decls, true) }

// stepRules returns the RBAC rules the steps of d declare: those of
// rbacRules for d's states, writes and the finalizers of its target; the
// engine adds its own for the target, its status, Namespaces and events.
func stepRules(d *declInfo) []rbacRule { return rbacRulesOf([]*declInfo{d}, false) }

// rbacRulesOf returns the RBAC rules of decls (see rbacRules), with those
// the engine needs when engine is set.
func rbacRulesOf(decls []*declInfo, engine bool) []rbacRule {
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
	for _, d := range decls {
		t := d.Target
		if engine {
			add(t.Group, resourceName(t.Kind), "get", "list", "watch", "update", "patch")
			add(t.Group, resourceName(t.Kind)+"/status", "get", "update", "patch")
		}
		// The API server's OwnerReferencesPermissionEnforcement admission
		// asks for it of a controller that sets blockOwnerDeletion on the
		// owner references of the target's children.
		add(t.Group, resourceName(t.Kind)+"/finalizers", "update")
		for _, s := range d.States {
			add(s.Spec.Kind.Group, resourceName(s.Spec.Kind.Kind), "get", "list", "watch")
		}
		for _, a := range d.Actions {
			for _, w := range a.Spec.Writes {
				add(w.Kind.Group, resourceName(w.Kind.Kind), w.Verbs...)
			}
		}
	}
	if engine && len(decls) > 0 {
		// The engine that runs the generated steps reads the reconcile
		// policy of the target's Namespace through the cache and records
		// events (see package bosun).
		add("", "namespaces", "get", "list", "watch")
		add("events.k8s.io", "events", "create", "patch")
	}
	rules := make([]rbacRule, 0, len(verbs))
	for k, set := range verbs {
		r := rbacRule{Group: k.group, Resource: k.resource}
		for _, v := range rbacVerbs {
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
	// Expr is the Go string expression of the indexed value for the
	// object o of type Kind; empty for dsl.ControllerField.
	Expr string
	// Controller is true for dsl.ControllerField: the index holds the name
	// of the object's controller when it is of the target's kind.
	Controller bool
	// State is, for an index on the target kind (see targetIndex), the
	// state it serves; Lookup is then the Go string expression that
	// finds, for the watched object o, the targets whose state reads it.
	State  *stateInfo
	Lookup string
}

// indexes returns the field indexes of d's states, deduplicated by kind and
// path, in the order of their first use, then the indexes on the target
// kind of the states read outside the target's namespace.
func (g *generator) indexes(d *declInfo) []fieldIndex {
	seen := make(map[string]bool)
	var out []fieldIndex
	for _, s := range d.States {
		for _, f := range s.Spec.Fields {
			key := s.Spec.Kind.Package + "." + s.Spec.Kind.Kind + " " + f.Key
			if seen[key] {
				continue
			}
			seen[key] = true
			fi := fieldIndex{Decl: d, Kind: s.Spec.Kind, Path: f.Key, Controller: f.Key == dsl.ControllerField}
			if !fi.Controller {
				fi.Expr = g.stringExpr("o."+strings.Join(f.GoPath, "."), s.Spec.Kind, f.GoPath)
			}
			out = append(out, fi)
		}
	}
	for _, s := range d.States {
		if s.Index != nil {
			out = append(out, *s.Index)
		}
	}
	return out
}

// targetIndex returns the index on the target kind that maps an object of
// the state s, read outside the target's namespace, to the targets that
// read it: by namespace and name for a single object, by namespace for a
// list in one namespace. It returns nil for a state in the target's
// namespace, for a list of a cluster-scoped kind or of every namespace, and
// when the namespace and the name are constants.
func (g *generator) targetIndex(s *stateInfo) *fieldIndex {
	ss := s.Spec
	var values []*dsl.Value
	var expr, lookup string
	switch {
	case ss.Scope == dsl.NamespaceScope && !ss.List:
		values = []*dsl.Value{ss.Namespace, ss.ObjectName}
		expr = g.value(s.Decl, ss.Namespace, "o") + ` + "/" + ` + g.value(s.Decl, ss.ObjectName, "o")
		lookup = `o.GetNamespace() + "/" + o.GetName()`
	case ss.Scope == dsl.NamespaceScope:
		values = []*dsl.Value{ss.Namespace}
		expr, lookup = g.value(s.Decl, ss.Namespace, "o"), "o.GetNamespace()"
	case ss.Scope != dsl.TargetScope && !ss.List:
		values = []*dsl.Value{ss.ObjectName}
		expr, lookup = g.value(s.Decl, ss.ObjectName, "o"), "o.GetName()"
	default:
		return nil
	}
	constant := true
	for _, v := range values {
		constant = constant && v.IsConstant()
	}
	if constant {
		return nil
	}
	return &fieldIndex{Decl: s.Decl, Kind: s.Decl.Target, Path: "state:" + s.Decl.Spec.Name + "." + ss.Name, Expr: expr, State: s, Lookup: lookup}
}

// watchedKind is a kind other than the target's that some states of a decl
// read, and how the decl watches it.
type watchedKind struct {
	Kind   *dsl.Kind
	States []*stateInfo
	// Owned is true when every state of the kind is owned: the kind is
	// watched with Owns.
	Owned bool
	// Lookups are, for a kind watched with a mapping handler, the lists
	// of targets that find the ones whose states select the object o.
	Lookups []lookup
	// Controller is true when a Match reads the name of o's controller
	// from the variables controller and hasController, and Labels when
	// one reads o's labels from the variable ls.
	Controller, Labels bool
}

// lookup is one list of targets in the mapping handler of a watched kind.
type lookup struct {
	// Options are the Go list options after the list, each preceded by a
	// comma: the object's namespace for states in the target's namespace,
	// a target index for the others, or none (every target).
	Options string
	// Match is the Go condition under which the target t selects the
	// object o; "" when every target listed does.
	Match string
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
			g.lookups(d, w)
		}
	}
	return out
}

// lookups sets w.Lookups: one list of the targets in the object's
// namespace for the states read in the target's namespace, and one list per
// other state, through the state's target index when it has one.
func (g *generator) lookups(d *declInfo, w *watchedKind) {
	var local []*stateInfo
	for _, s := range w.States {
		if s.Spec.Scope == dsl.TargetScope {
			local = append(local, s)
		}
	}
	if len(local) > 0 {
		w.Lookups = append(w.Lookups, lookup{Options: ", client.InNamespace(o.GetNamespace())", Match: g.match(d, w, local)})
	}
	for _, s := range w.States {
		if s.Spec.Scope == dsl.TargetScope {
			continue
		}
		l := lookup{Match: g.match(d, w, []*stateInfo{s})}
		if s.Index != nil {
			l.Options = fmt.Sprintf(", client.MatchingFields{%q: %s}", s.Index.Path, s.Index.Lookup)
		}
		w.Lookups = append(w.Lookups, l)
	}
}

// match returns the condition under which one of states selects o for the
// target t, each state's condition being all of its selectors, with the
// meaning of Kubernetes label selectors; it is "" when a state without
// selectors selects every object. It sets w.Controller and w.Labels when
// the condition reads the variables they stand for.
func (g *generator) match(d *declInfo, w *watchedKind, states []*stateInfo) string {
	var conds []string
	for _, s := range states {
		var parts []string
		if s.Spec.Scope == dsl.NamespaceScope {
			parts = append(parts, "o.GetNamespace() == "+g.value(d, s.Spec.Namespace, "t"))
		}
		if s.Spec.ObjectName != nil {
			parts = append(parts, "o.GetName() == "+g.value(d, s.Spec.ObjectName, "t"))
		}
		for _, r := range s.Spec.Labels {
			w.Labels = true
			key := strconv.Quote(r.Key)
			switch r.Op {
			case dsl.LabelEquals:
				parts = append(parts, fmt.Sprintf("ls.Has(%s) && ls[%s] == %s", key, key, g.value(d, r.Value, "t")))
			case dsl.LabelNotEquals:
				parts = append(parts, fmt.Sprintf("(!ls.Has(%s) || ls[%s] != %s)", key, key, g.value(d, r.Value, "t")))
			case dsl.LabelIn:
				parts = append(parts, fmt.Sprintf("ls.Has(%s) && slices.Contains(%s, ls[%s])", key, g.labelValues(d, r, "t"), key))
			case dsl.LabelNotIn:
				parts = append(parts, fmt.Sprintf("(!ls.Has(%s) || !slices.Contains(%s, ls[%s]))", key, g.labelValues(d, r, "t"), key))
			case dsl.LabelExists:
				parts = append(parts, fmt.Sprintf("ls.Has(%s)", key))
			case dsl.LabelDoesNotExist:
				parts = append(parts, fmt.Sprintf("!ls.Has(%s)", key))
			}
		}
		for _, r := range s.Spec.Fields {
			if r.Key == dsl.ControllerField {
				w.Controller = true
				parts = append(parts, "hasController && controller == "+g.value(d, r.Value, "t"))
			} else {
				parts = append(parts, g.stringExpr("o."+strings.Join(r.GoPath, "."), w.Kind, r.GoPath)+" == "+g.value(d, r.Value, "t"))
			}
		}
		if s.Spec.Owned {
			parts = append(parts, "metav1.IsControlledBy(o, t)")
		}
		if len(parts) == 0 {
			return ""
		}
		conds = append(conds, strings.Join(parts, " && "))
	}
	if len(conds) > 1 {
		for i := range conds {
			conds[i] = "(" + conds[i] + ")"
		}
	}
	return strings.Join(conds, " ||\n")
}

// plan chooses the Go names of every decl, state and action, and reports
// the ones that clash or cannot be Go identifiers; then it works out the
// field indexes and watches of each decl.
func (g *generator) plan() error {
	pl := &planner{g: g, top: make(map[string]string)}
	for _, ds := range g.spec.Decls {
		if d := pl.decl(ds); d != nil {
			g.decls = append(g.decls, d)
		}
	}
	pl.errs.Sort()
	if err := pl.errs.Err(); err != nil {
		return err
	}
	for _, d := range g.decls {
		for _, s := range d.States {
			s.Index = g.targetIndex(s)
		}
		d.Indexes = g.indexes(d)
		d.Watched = g.watchedKinds(d)
	}
	return nil
}

// planner is plan's work: the errors found so far and the package-level
// names taken.
type planner struct {
	g    *generator
	errs dsl.ErrorList
	top  map[string]string // package-level name -> what it is
}

// fail records an error at pos.
func (pl *planner) fail(pos dsl.Pos, format string, args ...any) {
	pl.errs = append(pl.errs, &dsl.Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// claim takes the package-level name for what, or fails if it is taken.
func (pl *planner) claim(pos dsl.Pos, name, what string) {
	if prev, ok := pl.top[name]; ok {
		pl.fail(pos, "generated name %s of %s is also the name of %s", name, what, prev)
		return
	}
	pl.top[name] = what
}

// decl plans the names of the decl ds, its states and its actions; nil
// when ds cannot be generated.
func (pl *planner) decl(ds *dsl.DeclSpec) *declInfo {
	pos := ds.NamePos
	if !token.IsIdentifier(ds.Name) {
		pl.fail(pos, "decl name %s is not a Go identifier", ds.Name)
		return nil
	}
	if ds.Target == nil {
		pl.fail(pos, "decl %s has no resolved target kind; generate from a checked spec", ds.Name)
		return nil
	}
	d := &declInfo{Spec: ds, Pos: ds.Pos, Target: ds.Target, Manager: exported(ds.Name)}
	d.State = d.Manager + "State"
	d.Impl = d.Manager + "Impl"
	d.NewState = "New" + d.Manager + "State"
	d.Index = "Index" + d.Manager + "Fields"
	d.Watch = "Watch" + d.Manager + "States"
	d.Steps = d.Manager + "Steps"
	d.NewSteps = "New" + d.Manager + "Steps"
	d.Step = unexported(d.Manager) + "Step"
	d.Pass = unexported(d.Manager) + "Pass"
	what := "decl " + ds.Name
	for _, n := range []string{d.State, d.Impl, d.NewState, d.Index, d.Watch, d.Steps, d.NewSteps, d.Step, d.Pass} {
		pl.claim(pos, n, what)
	}
	if usesControllerField(ds) {
		d.ControllerName = unexported(d.Manager) + "ControllerName"
		pl.claim(pos, d.ControllerName, what)
	}
	pl.actions(d, pl.states(d))
	return d
}

// states plans the getters and parameters of the states of d, and
// returns them by their spec.
func (pl *planner) states(d *declInfo) map[*dsl.StateSpec]*stateInfo {
	ds := d.Spec
	byState := make(map[*dsl.StateSpec]*stateInfo)
	getters := make(map[string]string)
	params := make(map[string]bool)
	for _, ss := range ds.States {
		spos := ss.Pos
		if !token.IsIdentifier(ss.Name) {
			pl.fail(spos, "state name %s is not a Go identifier", ss.Name)
			continue
		}
		if ss.Kind == nil || !ss.List && ss.ObjectName == nil {
			pl.fail(spos, "state %s has no resolved kind or object name; generate from a checked spec", ss.Name)
			continue
		}
		s := &stateInfo{
			Spec: ss, Decl: d, Pos: spos,
			Getter: "Get" + exported(ss.Name), Fetch: "fetch" + exported(ss.Name), Field: unexported(ss.Name),
			Type: pl.g.stateType(ss),
		}
		if prev, ok := getters[s.Getter]; ok {
			pl.fail(spos, "states %s and %s of decl %s both make the getter %s", prev, ss.Name, ds.Name, s.Getter)
			continue
		}
		getters[s.Getter] = ss.Name
		s.Param = ss.Name
		for token.IsKeyword(s.Param) || predeclared[s.Param] || actionLocals[s.Param] || pl.g.imports.isReserved(s.Param) || params[s.Param] {
			s.Param += "State"
		}
		params[s.Param] = true
		for _, f := range ss.Fields {
			if f.Key != dsl.ControllerField && len(f.GoPath) == 0 {
				pl.fail(fieldPos(ss, f), "field %s of state %s has no Go field path; check the document with Go types", f.Key, ss.Name)
			}
		}
		byState[ss] = s
		d.States = append(d.States, s)
	}
	return byState
}

// actions plans the methods and name constants of the actions of d, whose
// states are byState.
func (pl *planner) actions(d *declInfo, byState map[*dsl.StateSpec]*stateInfo) {
	ds := d.Spec
	methods := map[string]string{
		"SetupWithBuilder": "the steps' SetupWithBuilder method",
		"All":              "the steps' All method",
	}
	for _, as := range ds.Actions {
		apos := as.Pos
		if !token.IsIdentifier(as.Name) {
			pl.fail(apos, "action name %s is not a Go identifier", as.Name)
			continue
		}
		a := &actionInfo{Spec: as, Decl: d, Pos: apos, Method: exported(as.Name)}
		a.Constant = d.Manager + a.Method
		if prev, ok := methods[a.Method]; ok {
			pl.fail(apos, "action %s of decl %s makes the method %s, as does %s", as.Name, ds.Name, a.Method, prev)
			continue
		}
		methods[a.Method] = "action " + as.Name
		pl.claim(apos, a.Constant, "the name constant of action "+as.Name+" of decl "+ds.Name)
		for _, ss := range as.States {
			if s, ok := byState[ss]; ok {
				a.States = append(a.States, s)
			}
		}
		d.Actions = append(d.Actions, a)
	}
}
