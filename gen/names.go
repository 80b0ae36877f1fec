package gen

import (
	"fmt"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bosunkit/bosun/dsl"
)

// OutputName returns the name of the file Generate's output belongs in, for
// the document source: the base name without its extension, between
// "zz_generated." and ".go". OutputName("api/cronjob.bosun") is
// "zz_generated.cronjob.go".
func OutputName(source string) string {
	base := filepath.Base(source)
	base = strings.TrimSuffix(base, filepath.Ext(base))
	return "zz_generated." + base + ".go"
}

// The import paths the generated code may use besides the kinds' packages,
// and the names it refers to them by.
const (
	pkgContext   = "context"
	pkgFmt       = "fmt"
	pkgSync      = "sync"
	pkgLogr      = "github.com/go-logr/logr"
	pkgAPIErrors = "k8s.io/apimachinery/pkg/api/errors"
	pkgMetaV1    = "k8s.io/apimachinery/pkg/apis/meta/v1"
	pkgSchema    = "k8s.io/apimachinery/pkg/runtime/schema"
	pkgCtrl      = "sigs.k8s.io/controller-runtime"
	pkgClient    = "sigs.k8s.io/controller-runtime/pkg/client"
	pkgHandler   = "sigs.k8s.io/controller-runtime/pkg/handler"
	pkgReconcile = "sigs.k8s.io/controller-runtime/pkg/reconcile"
	pkgBosun     = "github.com/bosunkit/bosun"
	pkgFlow      = "github.com/bosunkit/bosun/flow"
)

// fixedImports maps the fixed import paths to their names in the generated
// file.
var fixedImports = map[string]string{
	pkgContext:   "context",
	pkgFmt:       "fmt",
	pkgSync:      "sync",
	pkgLogr:      "logr",
	pkgAPIErrors: "apierrors",
	pkgMetaV1:    "metav1",
	pkgSchema:    "schema",
	pkgCtrl:      "ctrl",
	pkgClient:    "client",
	pkgHandler:   "handler",
	pkgReconcile: "reconcile",
	pkgBosun:     "bosun",
	pkgFlow:      "flow",
}

// localPrefix is the import path prefix that goimports puts in a group of its
// own, last, in this repository.
const localPrefix = "github.com/bosunkit/bosun"

// predeclared are Go's predeclared identifiers. A generated name must not
// shadow them.
var predeclared = map[string]bool{
	"any": true, "append": true, "bool": true, "byte": true, "cap": true, "clear": true,
	"close": true, "comparable": true, "complex": true, "complex64": true, "complex128": true,
	"copy": true, "delete": true, "error": true, "false": true, "float32": true, "float64": true,
	"imag": true, "int": true, "int8": true, "int16": true, "int32": true, "int64": true,
	"iota": true, "len": true, "make": true, "max": true, "min": true, "new": true, "nil": true,
	"panic": true, "print": true, "println": true, "real": true, "recover": true, "rune": true,
	"string": true, "true": true, "uint": true, "uint8": true, "uint16": true, "uint32": true,
	"uint64": true, "uintptr": true,
}

// importSet assigns names to the imports of the generated file and records
// which of them the code uses.
type importSet struct {
	names map[string]string // import path -> name
	used  map[string]bool
}

// newImportSet names the fixed imports and a package for every kind,
// deterministically: packages sorted by group, version and path; each takes
// the first free name of group's first label + version (corev1 for the
// core group), then the whole group + version, then that with x and a number.
func newImportSet(kinds []*dsl.Kind) *importSet {
	s := &importSet{names: make(map[string]string), used: make(map[string]bool)}
	taken := make(map[string]bool)
	for path, name := range fixedImports {
		s.names[path] = name
		taken[name] = true
	}
	type pkgGV struct{ group, version, path string }
	seen := make(map[string]bool)
	var pkgs []pkgGV
	for _, k := range kinds {
		if _, ok := s.names[k.Package]; ok || seen[k.Package] {
			continue
		}
		seen[k.Package] = true
		pkgs = append(pkgs, pkgGV{k.Group, k.Version, k.Package})
	}
	sort.Slice(pkgs, func(i, j int) bool {
		a, b := pkgs[i], pkgs[j]
		if a.group != b.group {
			return a.group < b.group
		}
		if a.version != b.version {
			return a.version < b.version
		}
		return a.path < b.path
	})
	for _, p := range pkgs {
		short := importName(p.group, p.version, false)
		full := importName(p.group, p.version, true)
		bad := func(name string) bool { return taken[name] || token.IsKeyword(name) || predeclared[name] }
		name := short
		if bad(name) {
			name = full
		}
		for n := 2; bad(name); n++ {
			name = fmt.Sprintf("%sx%d", full, n)
		}
		taken[name] = true
		s.names[p.path] = name
	}
	return s
}

// importName derives an import name from a group/version: the group's first
// label (or, with full, the whole group) and the version, lower-case letters
// and digits only; "core" stands for the core group.
func importName(group, version string, full bool) string {
	label := group
	switch {
	case group == "":
		label = "core"
	case !full:
		label, _, _ = strings.Cut(group, ".")
	}
	var b strings.Builder
	for _, r := range strings.ToLower(label + version) {
		if r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		}
	}
	name := b.String()
	if name == "" || !unicode.IsLetter(rune(name[0])) {
		name = "api" + name
	}
	return name
}

// use marks the import path as used and returns its name.
func (s *importSet) use(path string) string {
	name, ok := s.names[path]
	if !ok {
		panic("gen: import path without a name: " + path)
	}
	s.used[path] = true
	return name
}

// isReserved reports whether name is an import name of the file.
func (s *importSet) isReserved(name string) bool {
	for _, n := range s.names {
		if n == name {
			return true
		}
	}
	return false
}

// write writes the import declaration of the used imports: standard
// library, other modules and this repository in separate groups, each sorted
// by path; a name is written when it differs from the path's last element.
func (s *importSet) write(b *strings.Builder) {
	var groups [3][]string
	for path := range s.used {
		first, _, _ := strings.Cut(path, "/")
		switch {
		case path == localPrefix || strings.HasPrefix(path, localPrefix+"/"):
			groups[2] = append(groups[2], path)
		case !strings.Contains(first, "."):
			groups[0] = append(groups[0], path)
		default:
			groups[1] = append(groups[1], path)
		}
	}
	if len(s.used) == 0 {
		return
	}
	b.WriteString("import (\n")
	sep := false
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		if sep {
			b.WriteString("\n")
		}
		sep = true
		sort.Strings(g)
		for _, path := range g {
			name := s.names[path]
			if name == filepath.Base(path) {
				fmt.Fprintf(b, "\t%q\n", path)
			} else {
				fmt.Fprintf(b, "\t%s %q\n", name, path)
			}
		}
	}
	b.WriteString(")\n\n")
}

// exported returns s with its first letter upper-case.
func exported(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// unexported returns s with its first letter lower-case.
func unexported(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[n:]
}

// resourceName returns the lower-case plural resource name of an API kind,
// as RBAC rules name it.
func resourceName(kind string) string {
	l := strings.ToLower(kind)
	switch {
	case l == "endpoints":
		return l
	case strings.HasSuffix(l, "s"), strings.HasSuffix(l, "x"), strings.HasSuffix(l, "ch"), strings.HasSuffix(l, "sh"):
		return l + "es"
	case len(l) >= 2 && strings.HasSuffix(l, "y") && !strings.ContainsRune("aeiou", rune(l[len(l)-2])):
		return l[:len(l)-1] + "ies"
	default:
		return l + "s"
	}
}
