package scaffold

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// API describes a kind that CreateAPI adds.
type API struct {
	// Group is the API group before the project's domain: shop for
	// shop.example.com.
	Group string
	// Version is the API version, such as v1 or v1alpha1.
	Version string
	// Kind is the kind, in CamelCase.
	Kind string
	// ShortName is the kind's short name for kubectl; empty makes one of
	// the first syllable of each word of the kind (see shortName).
	ShortName string
	// DSL writes the controller's states and actions as a .bosun document,
	// which go generate turns into Go, instead of a Go step.
	DSL bool
	// Owns are the kinds of the children the controller keeps, one of
	// each, through a children step (package children): any of Ownable,
	// in any case. Empty means a ConfigMap. Not with DSL, whose document
	// declares what the controller keeps.
	Owns []string
}

var (
	kindRE      = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	versionRE   = regexp.MustCompile(`^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$`)
	groupRE     = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
	shortNameRE = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
	groupNameRE = regexp.MustCompile(`(?m)^// \+groupName=(\S+)$`)
)

// ReadProject reads the PROJECT file of the module in dir.
func ReadProject(dir string) (Project, error) {
	var p Project
	raw, err := os.ReadFile(filepath.Join(dir, "PROJECT"))
	if err != nil {
		return p, fmt.Errorf("%w: %s has no PROJECT file: run bosun init first, or run this in the module's directory: %w", ErrNotProject, dir, err)
	}
	if err := yaml.UnmarshalStrict(raw, &p); err != nil {
		return p, fmt.Errorf("%w: reading %s: %w", ErrNotProject, filepath.Join(dir, "PROJECT"), err)
	}
	return p, nil
}

// CreateAPI adds a kind to the operator module in dir: api/<version>/ with
// its types, internal/controller/ with its reconciler, a unit test and an
// envtest test, and its sample in config/samples; and registers it in
// cmd/main.go and the kustomizations of config/crd and config/samples.
// The deep copies, the CRD, the role and, with DSL, the code of the
// document are generated afterwards: see Generate.
//
// For a kind the project has in other versions, it adds a version instead:
// api/<version>/ with types of the same spec and status as the hub's,
// their conversion to and from the hub and a round-trip test; the hub (the
// kind's first version) gets a Hub method and becomes the version stored.
// The kind keeps its one controller, on the hub. Its versions are
// converted by the conversion webhook that CreateWebhook adds with
// Conversion.
func CreateAPI(dir string, a API) error {
	p, err := ReadProject(dir)
	if err != nil {
		return err
	}
	switch {
	case !groupRE.MatchString(a.Group):
		return fmt.Errorf("%w: --group %q must be lower-case letters and digits, such as shop", ErrInvalid, a.Group)
	case !versionRE.MatchString(a.Version):
		return fmt.Errorf("%w: --version %q is not a Kubernetes API version such as v1 or v1alpha1", ErrInvalid, a.Version)
	case !kindRE.MatchString(a.Kind) || len(a.Kind) > 63:
		return fmt.Errorf("%w: --kind %q must be CamelCase letters and digits starting with a capital, such as Shop", ErrInvalid, a.Kind)
	case a.ShortName != "" && !shortNameRE.MatchString(a.ShortName):
		return fmt.Errorf("%w: --short-name %q must be lower-case letters and digits", ErrInvalid, a.ShortName)
	case a.DSL && len(a.Owns) > 0:
		return fmt.Errorf("%w: --owns is for a controller of Go steps; with --dsl, declare the children in the .bosun document", ErrInvalid)
	}
	owns, err := owned(a.Owns)
	if err != nil {
		return err
	}
	lower := strings.ToLower(a.Kind)
	versions, err := Versions(dir, a.Kind)
	if err != nil {
		return err
	}
	if slices.Contains(versions, a.Version) {
		return fmt.Errorf("%w: %s is in api/%s/%s_types.go already", ErrKindExists, a.Kind, a.Version, lower)
	}
	if err := checkGroup(dir, p, a); err != nil {
		return err
	}
	if len(versions) > 0 {
		return createVersion(dir, p, a, lower, versions)
	}
	if a.ShortName == "" {
		a.ShortName = shortName(a.Kind)
	}
	plural := pluralize(lower)
	alias := a.Group + a.Version
	categories := "bosun"
	if p.Name != "bosun" {
		categories += ";" + p.Name
	}
	data := map[string]any{
		"Project": p.Name, "Repo": p.Repo, "Domain": p.Domain,
		"Group": a.Group, "Version": a.Version, "Kind": a.Kind,
		"Lower": lower, "Plural": plural, "Alias": alias,
		"ShortName": a.ShortName, "Categories": categories,
	}
	if a.DSL {
		owns = nil
	}
	for k, v := range ownData(owns) {
		data[k] = v
	}
	if a.DSL {
		// The document keeps a ConfigMap holding spec.message.
		data["Message"] = true
	}
	data["NameMax"] = nameMax(lower, owns)
	controller := filepath.Join("internal", "controller", lower)
	files := []file{
		{tmpl: "api/groupversion_info.go", path: filepath.Join("api", a.Version, "groupversion_info.go"), once: true},
		{tmpl: "api/types.go", path: filepath.Join("api", a.Version, lower+"_types.go")},
		{tmpl: "api/sample.yaml", path: filepath.Join("config", "samples", a.Group+"_"+a.Version+"_"+lower+".yaml")},
		{tmpl: "api/controller.go", path: controller + "_controller.go"},
		{tmpl: "api/sample_test.go", path: controller + "_sample_test.go"},
		{tmpl: "api/controller_test.go", path: controller + "_controller_test.go"},
		{tmpl: "api/envtest_test.go", path: controller + "_envtest_test.go"},
	}
	if a.DSL {
		files[3].tmpl = "api/controller_dsl.go"
		files[5].tmpl = "api/controller_dsl_test.go"
		files[6].tmpl = "api/envtest_dsl_test.go"
		files = append(files, file{tmpl: "api/kind.bosun", path: controller + ".bosun"})
	}
	if err := render(dir, files, data); err != nil {
		return err
	}
	edits := []struct{ path, marker, line string }{
		{"cmd/main.go", "// +bosun:scaffold:imports", fmt.Sprintf("%s %q", alias, p.Repo+"/api/"+a.Version)},
		{"cmd/main.go", "// +bosun:scaffold:imports", fmt.Sprintf("%q", p.Repo+"/internal/controller")},
		{"cmd/main.go", "// +bosun:scaffold:scheme", alias + ".AddToScheme,"},
		{"cmd/main.go", "// +bosun:scaffold:setup", "controller.Setup" + a.Kind + "WithManager,"},
		{"config/crd/kustomization.yaml", "# +bosun:scaffold:crds", "- " + crdFile(a.Group, p.Domain, plural)},
		{"config/samples/kustomization.yaml", "# +bosun:scaffold:samples", "- " + a.Group + "_" + a.Version + "_" + lower + ".yaml"},
	}
	for _, e := range edits {
		if err := insert(dir, e.path, e.marker, e.line); err != nil {
			return err
		}
	}
	return nil
}

// checkGroup refuses a group other than the one api/<version> holds.
func checkGroup(dir string, p Project, a API) error {
	gv := filepath.Join(dir, "api", a.Version, "groupversion_info.go")
	raw, err := os.ReadFile(gv)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("scaffold: %w", err)
	}
	want := a.Group + "." + p.Domain
	if m := groupNameRE.FindSubmatch(raw); m != nil && string(m[1]) != want {
		return fmt.Errorf("%w: api/%s holds the group %s, not %s: one group per version directory", ErrInvalid, a.Version, m[1], want)
	}
	return nil
}

// crdFile is the name controller-gen gives the CRD of a kind.
func crdFile(group, domain, plural string) string {
	return group + "." + domain + "_" + plural + ".yaml"
}

// shortName makes the default short name of a kind: the first syllable of
// each of its words, lower-cased, such as memc for Memcached, widg for
// Widget and redfail for RedisFailover; a syllable is the letters up to
// the first vowels and the consonants after them. It is none when that is
// not shorter than the kind, or when kubectl knows it for a built-in kind.
func shortName(kind string) string {
	var b strings.Builder
	for _, w := range words(kind) {
		b.WriteString(syllable(strings.ToLower(w)))
	}
	s := b.String()
	if len(s) < 2 || len(s) >= len(kind) || builtinShortNames[s] {
		return ""
	}
	return s
}

// words splits a CamelCase kind into its words: an upper-case letter
// starts one, unless it follows another and no lower-case letter follows
// it (DBCluster is DB and Cluster).
func words(kind string) []string {
	var out []string
	start := 0
	for i := 1; i < len(kind); i++ {
		upper := isUpper(kind[i])
		switch {
		case upper && !isUpper(kind[i-1]):
		case upper && i+1 < len(kind) && isLower(kind[i+1]):
		default:
			continue
		}
		out = append(out, kind[start:i])
		start = i
	}
	return append(out, kind[start:])
}

// syllable returns the first syllable of a lower-case word: its letters up
// to its first vowels (y counts as one after the first letter) and the
// consonants after them, or the word when no vowel follows those.
func syllable(w string) string {
	vowel := func(i int) bool { return strings.IndexByte("aeiou", w[i]) >= 0 || i > 0 && w[i] == 'y' }
	i := 0
	for i < len(w) && !vowel(i) {
		i++
	}
	for i < len(w) && vowel(i) {
		i++
	}
	for j := i; j < len(w); j++ {
		if vowel(j) {
			return w[:j]
		}
	}
	return w
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }

// builtinShortNames are short names kubectl knows for built-in kinds; a
// kind's default short name is none of them.
var builtinShortNames = map[string]bool{
	"cm": true, "cs": true, "csr": true, "crd": true, "crds": true, "deploy": true, "ds": true, "ep": true,
	"ev": true, "hpa": true, "ing": true, "limits": true, "netpol": true, "no": true, "ns": true, "pc": true,
	"pdb": true, "po": true, "pv": true, "pvc": true, "quota": true, "rc": true, "rs": true, "sa": true,
	"sc": true, "sts": true, "svc": true, "cj": true, "ingclass": true, "vac": true,
}

// pluralize makes the resource name of a lower-case kind, as bosun gen
// does for RBAC; the types name it in their +kubebuilder:resource marker,
// so that controller-gen uses it too.
func pluralize(s string) string {
	switch {
	case strings.HasSuffix(s, "s"), strings.HasSuffix(s, "x"), strings.HasSuffix(s, "ch"), strings.HasSuffix(s, "sh"):
		return s + "es"
	case strings.HasSuffix(s, "y") && len(s) > 1 && !strings.ContainsRune("aeiou", rune(s[len(s)-2])):
		return s[:len(s)-1] + "ies"
	}
	return s + "s"
}
