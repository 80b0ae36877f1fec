package gen

import (
	"fmt"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bosunkit/bosun/cmd/bosun/dsl"
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

// fixedImports maps the import paths the generated code may use besides the
// kinds' packages to their names in the generated file. The templates write
// these names as they are; a kind's package never takes one of them.
var fixedImports = map[string]string{
	"context":                                      "context",
	"errors":                                       "errors",
	"fmt":                                          "fmt",
	"slices":                                       "slices",
	"sync":                                         "sync",
	"github.com/go-logr/logr":                      "logr",
	"k8s.io/api/rbac/v1":                           "rbacv1",
	"k8s.io/apimachinery/pkg/runtime":              "runtime",
	"k8s.io/apimachinery/pkg/api/errors":           "apierrors",
	"k8s.io/apimachinery/pkg/apis/meta/v1":         "metav1",
	"k8s.io/apimachinery/pkg/labels":               "labels",
	"k8s.io/apimachinery/pkg/selection":            "selection",
	"k8s.io/apimachinery/pkg/runtime/schema":       "schema",
	"sigs.k8s.io/controller-runtime":               "ctrl",
	"sigs.k8s.io/controller-runtime/pkg/client":    "client",
	"sigs.k8s.io/controller-runtime/pkg/handler":   "handler",
	"sigs.k8s.io/controller-runtime/pkg/reconcile": "reconcile",
	"github.com/bosunkit/bosun":                    "bosun",
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

// importSet assigns names to the imports of the generated file.
type importSet struct {
	names map[string]string // import path -> name
}

// newImportSet names the fixed imports and a package for every kind,
// deterministically: packages sorted by group, version and path; each takes
// the first free name of group's first label + version (corev1 for the
// core group), then the whole group + version, then that with x and a number.
func newImportSet(kinds []*dsl.Kind) *importSet {
	s := &importSet{names: make(map[string]string)}
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

// isReserved reports whether name is an import name of the file.
func (s *importSet) isReserved(name string) bool {
	for _, n := range s.names {
		if n == name {
			return true
		}
	}
	return false
}

// importSpec is one import of the generated file.
type importSpec struct {
	// Name is the import's name; "" when it is the path's last element.
	Name, Path string
}

// usedBy returns the imports that body, Go declarations, refers to: the
// ones whose name, outside comments and literals, is followed by a period
// and does not itself follow one. They come in groups (the standard
// library, other modules, this repository), each sorted by path; empty
// groups are left out.
func (s *importSet) usedBy(body string) [][]importSpec {
	byName := make(map[string]string, len(s.names))
	for path, name := range s.names {
		byName[name] = path
	}
	used := make(map[string]bool)
	for _, name := range qualifiers(body) {
		if path, ok := byName[name]; ok {
			used[path] = true
		}
	}

	var groups [3][]importSpec
	for path := range used {
		first, _, _ := strings.Cut(path, "/")
		i := 1
		switch {
		case path == localPrefix || strings.HasPrefix(path, localPrefix+"/"):
			i = 2
		case !strings.Contains(first, "."):
			i = 0
		}
		spec := importSpec{Path: path}
		if name := s.names[path]; name != filepath.Base(path) {
			spec.Name = name
		}
		groups[i] = append(groups[i], spec)
	}
	var out [][]importSpec
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		sort.Slice(g, func(i, j int) bool { return g[i].Path < g[j].Path })
		out = append(out, g)
	}
	return out
}

// qualifiers returns the identifiers of src, Go source, that are directly
// followed by a period and do not follow one themselves (the package names
// of qualified identifiers, among others), skipping comments and string
// and rune literals. It is a lexer for this question alone, much faster
// than go/scanner on a generated file.
func qualifiers(src string) []string {
	var out []string
	seen := make(map[string]bool)
	afterPeriod := false // the last token was a period
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '/' && strings.HasPrefix(src[i:], "//"):
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				return out
			}
			i += end
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return out
			}
			i += 2 + end + 2
		case c == '"' || c == '\'' || c == '`':
			i++
			for i < len(src) && src[i] != c {
				if src[i] == '\\' && c != '`' {
					i++
				}
				i++
			}
			i++
			afterPeriod = false
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= utf8.RuneSelf:
			start := i
			for i < len(src) && (src[i] == '_' || src[i] >= 'a' && src[i] <= 'z' || src[i] >= 'A' && src[i] <= 'Z' || src[i] >= '0' && src[i] <= '9' || src[i] >= utf8.RuneSelf) {
				i++
			}
			word := src[start:i]
			if !afterPeriod && strings.HasPrefix(src[i:], ".") && !strings.HasPrefix(src[i:], "...") && (word[0] < '0' || word[0] > '9') && !seen[word] {
				seen[word] = true
				out = append(out, word)
			}
			afterPeriod = false
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		default:
			afterPeriod = c == '.'
			i++
		}
	}
	return out
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
