package dsl

import (
	gotoken "go/token"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation"
)

// CheckOptions configures Check.
type CheckOptions struct {
	// Types checks `${target.Path}` references and `fields/` paths against
	// the Go types of the kinds. Nil skips those checks: references are
	// then only checked for their syntax.
	Types Types
}

// Check checks a parsed document and resolves its kinds. It reports every
// problem it finds, not just the first: the error is an ErrorList sorted
// by position, and the *Spec is nil. Check is meant for documents that
// Parse accepted; on a partial file it checks what is there.
func Check(f *File, opts CheckOptions) (*Spec, error) {
	if f == nil {
		return nil, ErrorList{{Msg: "no document to check"}}
	}
	c := &checker{
		opts:    opts,
		bound:   make(map[string]*bindNode),
		aliases: make(map[string]*aliasNode),
		kinds:   make(map[string]*Kind),
	}
	c.checkBinds(f.binds)
	c.checkAliases(f.aliases)
	spec := &Spec{Filename: f.name, Comments: f.comments}
	decls := make(map[string]*declNode)
	for _, d := range f.decls {
		if d == nil {
			continue
		}
		ds := c.checkDecl(d)
		if d.Name.Name == "" {
			continue // reported by checkDecl
		}
		if first, ok := decls[d.Name.Name]; ok {
			c.errs.add(d.Name.Pos, "duplicate decl %s; first declared at line %d", d.Name.Name, first.Name.Pos.Line)
			continue
		}
		decls[d.Name.Name] = d
		spec.Decls = append(spec.Decls, ds)
	}
	c.errs.Sort()
	if len(c.errs) > 0 {
		return nil, c.errs
	}
	return spec, nil
}

// checker holds what Check learnt so far.
type checker struct {
	opts    CheckOptions
	errs    ErrorList
	bound   map[string]*bindNode  // group/version as in a bind -> first bind
	aliases map[string]*aliasNode // alias name -> first alias
	// kinds are the resolved kind names; a nil entry is a broken alias,
	// already reported.
	kinds map[string]*Kind
}

func (c *checker) checkBinds(binds []*bindNode) {
	for _, b := range binds {
		if b == nil {
			continue
		}
		gv := b.GroupVersion.Name
		if msg := checkGroupVersion(gv); msg != "" {
			c.errs.add(b.GroupVersion.Pos, "invalid group/version %s: %s", shorten(gv), msg)
		}
		if !validImportPath(b.Package.Name) {
			c.errs.add(b.Package.Pos, "invalid Go package path %s", shorten(b.Package.Name))
		}
		if first, ok := c.bound[gv]; ok {
			c.errs.add(b.GroupVersion.Pos, "duplicate bind %s; first bound at line %d", shorten(gv), first.GroupVersion.Pos.Line)
			continue
		}
		c.bound[gv] = b
	}
}

func (c *checker) checkAliases(aliases []*aliasNode) {
	for _, a := range aliases {
		if a == nil {
			continue
		}
		name := a.Name.Name
		if !isIdent(name) {
			c.errs.add(a.Name.Pos, "invalid alias name %s; want a Go identifier", shorten(name))
		}
		kind := c.resolveAlias(a)
		if first, ok := c.aliases[name]; ok {
			c.errs.add(a.Name.Pos, "duplicate alias %s; first declared at line %d", shorten(name), first.Name.Pos.Line)
			continue
		}
		c.aliases[name] = a
		c.kinds[name] = kind
	}
}

// resolveAlias returns the kind an alias names, or nil after reporting why
// it has none.
func (c *checker) resolveAlias(a *aliasNode) *Kind {
	gvk := a.GVK.Name
	parts := strings.Split(gvk, "/")
	var group, version, kind string
	switch len(parts) {
	case 2:
		version, kind = parts[0], parts[1]
	case 3:
		group, version, kind = parts[0], parts[1], parts[2]
	default:
		c.errs.add(a.GVK.Pos, "invalid group/version/kind %s; want GROUP/VERSION/KIND, or VERSION/KIND for the core group", shorten(gvk))
		return nil
	}
	gv := joinGroupVersion(group, version)
	if msg := checkGroupVersion(gv); msg != "" {
		c.errs.add(a.GVK.Pos, "invalid group/version/kind %s: %s", shorten(gvk), msg)
		return nil
	}
	if !isExportedIdent(kind) {
		c.errs.add(a.GVK.Pos, "invalid kind %s in %s; want an exported Go identifier", shorten(kind), shorten(gvk))
		return nil
	}
	var pkg string
	if b, ok := c.bound[gv]; ok {
		pkg = b.Package.Name
	} else if p, ok := builtinPackage(gv); ok {
		pkg = p
	} else {
		c.errs.add(a.GVK.Pos, "group/version %s of alias %s is not bound; add bind %s GO-PACKAGE", gv, shorten(a.Name.Name), gv)
		return nil
	}
	return &Kind{Name: a.Name.Name, Group: group, Version: version, Kind: kind, Package: pkg, Cluster: a.Scope.Name != ""}
}

// lookupKind resolves a kind name: an alias, else a built-in kind (in the
// package of an explicit bind of its group/version, if any). It reports an
// unknown name and returns nil.
func (c *checker) lookupKind(id ident) *Kind {
	if k, ok := c.kinds[id.Name]; ok {
		return k
	}
	if b, ok := builtinKinds[id.Name]; ok {
		k := b
		if bind, ok := c.bound[joinGroupVersion(k.Group, k.Version)]; ok {
			k.Package = bind.Package.Name
		}
		c.kinds[id.Name] = &k
		return &k
	}
	c.errs.add(id.Pos, "unknown kind %s; add alias %s GROUP/VERSION/KIND", shorten(id.Name), shorten(id.Name))
	return nil
}

func (c *checker) checkDecl(d *declNode) *DeclSpec {
	ds := &DeclSpec{node: d, Pos: d.Pos, NamePos: d.Name.Pos, Name: d.Name.Name}
	switch {
	case d.Name.Name == "":
		// A partial file from Parse: the name was missing, and so is its
		// position.
		c.errs.add(d.Pos, "decl has no name; write `decl NAME for KIND`")
	case !isIdent(d.Name.Name):
		c.errs.add(d.Name.Pos, "invalid decl name %s; want a Go identifier", shorten(d.Name.Name))
	}
	switch {
	case d.Target.Name != "":
		ds.Target = c.lookupKind(d.Target)
	case d.Name.Name != "":
		c.errs.add(d.Name.Pos, "decl %s has no target; write `decl %s for KIND`", shorten(d.Name.Name), shorten(d.Name.Name))
	}

	states := make(map[string]*StateSpec)
	exported := make(map[string]*stateNode)
	for _, st := range d.States {
		if st == nil {
			continue
		}
		name := st.Name.Name
		if !isIdent(name) {
			c.errs.add(st.Name.Pos, "invalid state name %s; want a Go identifier", shorten(name))
		}
		ss := &StateSpec{node: st, Pos: st.Name.Pos, Name: name, List: st.List, Kind: c.lookupKind(st.Kind)}
		c.checkSelectors(ds, ss)
		if first, ok := states[name]; ok {
			c.errs.add(st.Name.Pos, "duplicate state %s in decl %s; first declared at line %d",
				shorten(name), shorten(d.Name.Name), first.node.Name.Pos.Line)
			continue
		}
		if first, ok := exported[exportName(name)]; ok {
			c.errs.add(st.Name.Pos, "state %s clashes with state %s at line %d; the names differ only in the case of the first letter",
				shorten(name), shorten(first.Name.Name), first.Name.Pos.Line)
			continue
		}
		states[name] = ss
		exported[exportName(name)] = st
		ds.States = append(ds.States, ss)
	}

	actions := make(map[string]*actionNode)
	for _, a := range d.Actions {
		if a == nil {
			continue
		}
		name := a.Name.Name
		if !isIdent(name) {
			c.errs.add(a.Name.Pos, "invalid action name %s; want a Go identifier", shorten(name))
		}
		as := &ActionSpec{node: a, Pos: a.Name.Pos, Name: name}
		c.checkWrites(as)
		named := make(map[string]bool)
		for _, arg := range a.States {
			if named[arg.Name] {
				c.errs.add(arg.Pos, "state %s named twice in action %s", shorten(arg.Name), shorten(name))
				continue
			}
			named[arg.Name] = true
			ss, ok := states[arg.Name]
			if !ok {
				c.errs.add(arg.Pos, "unknown state %s in action %s", shorten(arg.Name), shorten(name))
				continue
			}
			as.States = append(as.States, ss)
		}
		if first, ok := actions[name]; ok {
			c.errs.add(a.Name.Pos, "duplicate action %s in decl %s; first declared at line %d",
				shorten(name), shorten(d.Name.Name), first.Name.Pos.Line)
			continue
		}
		actions[name] = a
		ds.Actions = append(ds.Actions, as)
	}
	return ds
}

// checkWrites checks the writes of an action and fills as.Writes.
func (c *checker) checkWrites(as *ActionSpec) {
	a := as.node
	kinds := make(map[string]*writeNode)
	for _, w := range a.Writes {
		if w == nil {
			continue
		}
		k := c.lookupKind(w.Kind)
		if first, ok := kinds[w.Kind.Name]; ok {
			c.errs.add(w.Kind.Pos, "kind %s written twice by action %s; first at column %d, name every verb there",
				shorten(w.Kind.Name), shorten(a.Name.Name), first.Kind.Pos.Column)
			continue
		}
		kinds[w.Kind.Name] = w
		if len(w.Verbs) == 0 {
			c.errs.add(w.Kind.Pos, "no verbs for %s in the writes of action %s; want %s(%s, ...)",
				shorten(w.Kind.Name), shorten(a.Name.Name), shorten(w.Kind.Name), strings.Join(writeVerbs, " | "))
		}
		ws := WriteSpec{Kind: k}
		seen := make(map[string]bool)
		for _, v := range w.Verbs {
			switch {
			case !slices.Contains(writeVerbs, v.Name):
				c.errs.add(v.Pos, "unknown verb %s for %s; want one of %s", shorten(v.Name), shorten(w.Kind.Name), strings.Join(writeVerbs, ", "))
			case seen[v.Name]:
				c.errs.add(v.Pos, "verb %s named twice for %s", v.Name, shorten(w.Kind.Name))
			default:
				seen[v.Name] = true
				ws.Verbs = append(ws.Verbs, v.Name)
			}
		}
		if k != nil {
			as.Writes = append(as.Writes, ws)
		}
	}
}

// selectorsSeen is what checkSelectors has seen of a state's selectors so
// far.
type selectorsSeen struct {
	hasName, owned bool
	// ns and controller are the namespace selector and the selector of
	// the controller field, if any.
	ns, controller *selectorNode
	// labels and fields are the label requirements (key and operator) and
	// the field paths.
	labels, fields map[string]bool
}

func (c *checker) checkSelectors(ds *DeclSpec, ss *StateSpec) {
	st := ss.node
	name := shorten(st.Name.Name)
	seen := &selectorsSeen{labels: map[string]bool{}, fields: map[string]bool{}}
	for _, sel := range st.Selectors {
		if sel == nil {
			continue
		}
		ss.Selectors = append(ss.Selectors, sel.String())
		valueless := sel.Kind == selOwned ||
			sel.Kind == selLabels && sel.Op != LabelEquals && sel.Op != LabelNotEquals
		if !valueless && sel.Value == nil {
			c.errs.add(sel.Pos, "selector %s in state %s has no value", sel.Kind, name)
			continue
		}
		switch sel.Kind {
		case selName:
			c.nameSelector(ds, ss, sel, seen)
		case selNamespace:
			c.namespaceSelector(ds, ss, sel, seen)
		case selLabels:
			c.labelSelector(ds, ss, sel, seen)
		case selFields:
			c.fieldSelector(ds, ss, sel, seen)
		case selOwned:
			if seen.owned {
				c.errs.add(sel.Pos, "duplicate owned in state %s", name)
				continue
			}
			seen.owned = true
			ss.Owned = true
		default:
			c.errs.add(sel.Pos, "unknown selector %s; want name, namespace, labels/KEY, fields/PATH or owned", sel.Kind)
		}
	}
	if !st.List && !seen.hasName {
		c.errs.add(st.Name.Pos, "state %s has no name selector; a single-object state needs name=VALUE", name)
	}
	c.checkScope(ds, ss, seen.ns, seen.controller)
}

// nameSelector checks the name selector sel of state ss.
func (c *checker) nameSelector(ds *DeclSpec, ss *StateSpec, sel *selectorNode, seen *selectorsSeen) {
	st, name := ss.node, shorten(ss.node.Name.Name)
	if st.List {
		c.errs.add(sel.Pos, "selector name is only for single-object states; state %s is a list", name)
		return
	}
	if seen.hasName {
		c.errs.add(sel.Pos, "duplicate name selector in state %s", name)
		return
	}
	seen.hasName = true
	if sel.Value.IsConstant() && constantText(sel.Value) == "" {
		c.errs.add(sel.Value.Pos, "empty name in state %s", name)
	}
	c.checkRefs(ds, sel.Value)
	ss.ObjectName = sel.Value
}

// namespaceSelector checks the namespace selector sel of state ss.
func (c *checker) namespaceSelector(ds *DeclSpec, ss *StateSpec, sel *selectorNode, seen *selectorsSeen) {
	name := shorten(ss.node.Name.Name)
	if seen.ns != nil {
		c.errs.add(sel.Pos, "duplicate namespace selector in state %s", name)
		return
	}
	seen.ns = sel
	if ss.Kind != nil && ss.Kind.Cluster {
		c.errs.add(sel.Pos, "selector namespace is for namespaced kinds; %s is cluster-scoped", shorten(ss.Kind.Name))
		return
	}
	if sel.Value.IsConstant() {
		if text := constantText(sel.Value); text == "" {
			c.errs.add(sel.Value.Pos, "empty namespace in state %s", name)
		} else if len(validation.IsDNS1123Label(text)) > 0 {
			c.errs.add(sel.Value.Pos, "invalid namespace %s; want a DNS label: at most 63 lower-case letters, digits or -, alphanumeric at both ends", shorten(sel.Value.Raw))
		}
	}
	c.checkRefs(ds, sel.Value)
	ss.Namespace = sel.Value
}

// labelSelector checks the label requirement sel of state ss.
func (c *checker) labelSelector(ds *DeclSpec, ss *StateSpec, sel *selectorNode, seen *selectorsSeen) {
	st, name, key := ss.node, shorten(ss.node.Name.Name), shorten(sel.Key.Name)
	if !st.List {
		c.errs.add(sel.Pos, "selector labels/%s is only for list states; state %s is a single object", key, name)
		return
	}
	if len(validation.IsQualifiedName(sel.Key.Name)) > 0 {
		c.errs.add(sel.Key.Pos, "invalid label key %s; want [PREFIX/]NAME: a DNS subdomain prefix and a name of at most 63 letters, digits, -, _ or ., alphanumeric at both ends", key)
	}
	opKey := sel.Key.Name + " " + sel.Op.String()
	if seen.labels[opKey] {
		c.errs.add(sel.Pos, "duplicate label requirement %s in state %s", shorten(sel.String()), name)
		return
	}
	seen.labels[opKey] = true
	values := sel.Values
	if sel.Value != nil {
		values = []*Value{sel.Value}
	}
	named := make(map[string]bool)
	for _, v := range values {
		if v.IsConstant() {
			text := constantText(v)
			if len(validation.IsValidLabelValue(text)) > 0 {
				c.errs.add(v.Pos, "invalid label value %s; want at most 63 letters, digits, -, _ or ., alphanumeric at both ends", shorten(v.Raw))
			}
			if named[text] {
				c.errs.add(v.Pos, "label value %s named twice in labels/%s %s", shorten(v.Raw), key, sel.Op)
			}
			named[text] = true
		}
		c.checkRefs(ds, v)
	}
	ss.Labels = append(ss.Labels, Requirement{Pos: sel.Pos, Key: sel.Key.Name, Op: sel.Op, Value: sel.Value, Values: sel.Values})
}

// fieldSelector checks the field selector sel of state ss.
func (c *checker) fieldSelector(ds *DeclSpec, ss *StateSpec, sel *selectorNode, seen *selectorsSeen) {
	st, name, key := ss.node, shorten(ss.node.Name.Name), shorten(sel.Key.Name)
	if !st.List {
		c.errs.add(sel.Pos, "selector fields/%s is only for list states; state %s is a single object", key, name)
		return
	}
	valid := validFieldPath(sel.Key.Name)
	if !valid {
		c.errs.add(sel.Key.Pos, "invalid field path %s; want .field.path, for example .spec.nodeName", key)
	}
	if seen.fields[sel.Key.Name] {
		c.errs.add(sel.Pos, "duplicate field path %s in state %s", key, name)
		return
	}
	seen.fields[sel.Key.Name] = true
	if sel.Key.Name == ControllerField {
		seen.controller = sel
	}
	c.checkRefs(ds, sel.Value)
	req := Requirement{Pos: sel.Pos, Key: sel.Key.Name, Value: sel.Value}
	if c.opts.Types != nil && valid && sel.Key.Name != ControllerField && ss.Kind != nil {
		goPath, err := c.opts.Types.JSONField(ss.Kind.Package, ss.Kind.Kind, strings.Split(sel.Key.Name[1:], "."))
		if err != nil {
			c.errs.add(sel.Key.Pos, "invalid field path %s for %s: %v", key, ss.Kind.Name, err)
		}
		req.GoPath = goPath
	}
	ss.Fields = append(ss.Fields, req)
}

// checkScope works out where the objects of ss are read and reports the
// selectors that cannot work there: owner references never cross
// namespaces, and a cluster-scoped object has no namespaced owner.
func (c *checker) checkScope(ds *DeclSpec, ss *StateSpec, nsSel, controllerSel *selectorNode) {
	if ss.Kind == nil {
		return
	}
	st := ss.node
	name := shorten(st.Name.Name)
	targetCluster := ds.Target != nil && ds.Target.Cluster
	switch {
	case ss.Kind.Cluster:
		ss.Scope = ClusterScope
	case ss.Namespace != nil:
		ss.Scope = NamespaceScope
	case targetCluster && st.List:
		ss.Scope = AllNamespacesScope
	case targetCluster:
		c.errs.add(st.Name.Pos, "state %s needs namespace=VALUE: %s is namespaced and the target %s is cluster-scoped, so there is no target namespace to read it in",
			name, shorten(ss.Kind.Name), shorten(ds.Target.Name))
		return
	default:
		ss.Scope = TargetScope
	}
	if ss.Scope == TargetScope || targetCluster || ds.Target == nil {
		return
	}
	where := "in namespace " + shorten(nsSelValue(nsSel))
	if ss.Scope == ClusterScope {
		where = "cluster-scoped"
	}
	for _, sel := range st.Selectors {
		if sel == nil {
			continue
		}
		switch {
		case sel.Kind == selOwned:
			c.errs.add(sel.Pos, "selector owned cannot hold for state %s, %s: a %s controls only objects in its own namespace; leave out owned, or namespace",
				name, where, shorten(ds.Target.Name))
		case sel == controllerSel:
			c.errs.add(sel.Pos, "selector fields/%s cannot hold for state %s, %s: a %s controls only objects in its own namespace",
				ControllerField, name, where, shorten(ds.Target.Name))
		}
	}
}

// nsSelValue returns the value of a namespace selector as written.
func nsSelValue(sel *selectorNode) string {
	if sel == nil || sel.Value == nil {
		return ""
	}
	return sel.Value.Raw
}

// checkRefs checks the references of v against the decl's target type.
func (c *checker) checkRefs(ds *DeclSpec, v *Value) {
	if c.opts.Types == nil || ds.Target == nil {
		return
	}
	for _, p := range v.Parts {
		if p.Ref == nil {
			continue
		}
		if err := c.opts.Types.StringField(ds.Target.Package, ds.Target.Kind, p.Ref); err != nil {
			c.errs.add(p.Pos, "invalid reference ${target.%s}: %v", shorten(strings.Join(p.Ref, ".")), err)
		}
	}
}

// constantText returns the text of a value without references.
func constantText(v *Value) string {
	var b strings.Builder
	for _, p := range v.Parts {
		b.WriteString(p.Lit)
	}
	return b.String()
}

var versionRE = regexp.MustCompile(`^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$`)

// checkGroupVersion returns what is wrong with gv ("version" or
// "group/version"), or "".
func checkGroupVersion(gv string) string {
	group, version := splitGroupVersion(gv)
	if strings.Contains(group, "/") {
		return "want GROUP/VERSION, or VERSION for the core group"
	}
	if strings.Contains(gv, "/") && group == "" {
		return "group is empty"
	}
	if strings.Contains(gv, "/") && len(validation.IsDNS1123Subdomain(group)) > 0 {
		return "group " + shorten(group) + " is not a lower-case DNS subdomain"
	}
	if !versionRE.MatchString(version) {
		return "version " + shorten(version) + " is not like v1, v1beta1 or v2alpha3"
	}
	return ""
}

// validImportPath reports whether p looks like a Go import path: non-empty
// elements of letters, digits and -._~+, none starting with a dot.
func validImportPath(p string) bool {
	if p == "" {
		return false
	}
	for _, elem := range strings.Split(p, "/") {
		if elem == "" || elem[0] == '.' {
			return false
		}
		for _, r := range elem {
			if r >= utf8.RuneSelf || !isAlnum(byte(r)) && !strings.ContainsRune("-._~+", r) {
				return false
			}
		}
	}
	return true
}

// validFieldPath reports whether p is `.name.name...` with JSON-style
// field names.
func validFieldPath(p string) bool {
	if !strings.HasPrefix(p, ".") {
		return false
	}
	for _, elem := range strings.Split(p[1:], ".") {
		if elem == "" || (elem[0] >= '0' && elem[0] <= '9') {
			return false
		}
		for i := 0; i < len(elem); i++ {
			if !isAlnum(elem[i]) && elem[i] != '_' {
				return false
			}
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isIdent reports whether s is a Go identifier other than the blank one
// and not a keyword.
func isIdent(s string) bool { return s != "_" && gotoken.IsIdentifier(s) }

// isExportedIdent reports whether s is an exported Go identifier.
func isExportedIdent(s string) bool { return gotoken.IsIdentifier(s) && gotoken.IsExported(s) }

// exportName returns s with its first letter upper-cased.
func exportName(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}
